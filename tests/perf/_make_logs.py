"""Write large, realistic ``.eval`` logs quickly, for benchmarking the results reader.

Running Inspect on 100k samples would take ~30 min of CPU here (~20 ms per sample), so one
tiny real eval is run as a *template* and its zip is replicated: every output file keeps
the template's ``header.json``/``_journal/start.json`` layout (new eval/run ids, one set of
factor levels in its eval metadata) and gets one ``samples/<id>_epoch_<n>.json`` member and
one ``summaries.json`` entry per sample, copied from the template's and given new ids,
scores, token counts and times. About 5% of samples carry an error and no scores, as an
errored sample does. Members are zstd-compressed exactly as Inspect writes them.

Generated logs are cached under the system temp dir (keyed by size and a format version),
so repeated benchmark runs reuse them::

    python tests/perf/_make_logs.py 100000 20      # prints the folder
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1
ZSTD = 93  # zip compression method Inspect uses for members


def _template_log(folder: Path) -> Path:
    """Run one real 4-sample eval (two scorers, one erroring sample) and return its log."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, mean, scorer
    from inspect_ai.solver import Generate, TaskState, generate, solver

    outputs = [
        ModelOutput.from_content("mockllm/model", f"answer {i}") for i in range(4)
    ]
    for i, out in enumerate(outputs):
        out.usage = ModelUsage(input_tokens=20 + i, output_tokens=5 + i, total_tokens=25 + 2 * i)
    model = get_model("mockllm/model", custom_outputs=outputs)

    @solver
    def fail_on_last() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if state.sample_id == 4:
                raise RuntimeError("template failure")
            return state

        return solve

    @scorer(metrics=[accuracy()])
    def exact() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            ok = state.output.completion.endswith(target.text)
            return Score(value=CORRECT if ok else INCORRECT, answer=state.output.completion)

        return score

    @scorer(metrics={"quality": [mean()], "length": [mean()]})
    def graded() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value={"quality": 0.5, "length": len(state.output.completion)})

        return score

    task = Task(
        dataset=[Sample(id=i, input=f"question {i}", target=str(i % 2)) for i in range(1, 5)],
        solver=[fail_on_last(), generate()],
        scorer=[exact(), graded()],
        name="perf_template",
    )
    eval(task, model=model, log_dir=str(folder), fail_on_error=False, display="none",
         log_format="eval", max_connections=1)
    return next(folder.glob("*.eval"))


def _read_template(path: Path) -> dict[str, Any]:
    from harness.inspect_compat import register_zstd_zip

    register_zstd_zip()  # zstd members in zipfile (py < 3.14)

    with zipfile.ZipFile(path) as zf:
        header = json.loads(zf.read("header.json"))
        start = json.loads(zf.read("_journal/start.json"))
        summaries = json.loads(zf.read("summaries.json"))
        good = next(s for s in summaries if not s.get("error"))
        bad = next(s for s in summaries if s.get("error"))
        samples = {
            "good": json.loads(zf.read(f"samples/{good['id']}_epoch_{good['epoch']}.json")),
            "bad": json.loads(zf.read(f"samples/{bad['id']}_epoch_{bad['epoch']}.json")),
        }
    return {"header": header, "start": start, "good": good, "bad": bad, "samples": samples}


def _write_file(path: Path, template: dict[str, Any], index: int, n: int, first_id: int,
                rng: random.Random) -> None:
    """One .eval file holding samples ``first_id .. first_id + n - 1``."""
    header = json.loads(json.dumps(template["header"]))
    start = json.loads(json.dumps(template["start"]))
    factors = {"prompt": ["plain", "cot"][index % 2], "temperature": [0.0, 0.7][index // 2 % 2],
               "replicate": index}
    for spec in (header["eval"], start["eval"]):
        spec["eval_id"] = f"perf-eval-{index:04d}"
        spec["run_id"] = "perf-run"
        spec["task_id"] = f"perf-task-{index:04d}"
        spec["model"] = f"mockllm/model-{index % 4}"
        spec["metadata"] = factors
        spec["dataset"]["samples"] = n
        spec["dataset"].pop("sample_ids", None)
    header["metadata"] = factors
    header["results"]["total_samples"] = n
    summaries = []
    with zipfile.ZipFile(path, "w", compression=ZSTD) as zf:
        zf.writestr("_journal/start.json", json.dumps(start))
        for sample_id in range(first_id, first_id + n):
            errored = rng.random() < 0.05
            summary = dict(template["bad" if errored else "good"])
            sample = dict(template["samples"]["bad" if errored else "good"])
            summary["id"] = sample["id"] = sample_id
            summary["uuid"] = sample["uuid"] = f"perf-{index}-{sample_id}"
            summary["total_time"] = sample["total_time"] = round(rng.uniform(0.1, 30.0), 3)
            summary["working_time"] = sample["working_time"] = summary["total_time"]
            if not errored:
                correct = rng.random() < 0.6
                scores = {
                    "exact": {"value": "C" if correct else "I", "answer": f"answer {sample_id}"},
                    "graded": {"value": {"quality": round(rng.random(), 3),
                                         "length": rng.randint(5, 400)}},
                }
                summary["scores"] = sample["scores"] = scores
                tokens_in, tokens_out = rng.randint(50, 4000), rng.randint(5, 800)
                usage = {"input_tokens": tokens_in, "output_tokens": tokens_out,
                         "total_tokens": tokens_in + tokens_out}
                summary["model_usage"] = sample["model_usage"] = {"mockllm/model": usage}
            summaries.append(summary)
            zf.writestr(f"samples/{sample_id}_epoch_1.json", json.dumps(sample))
        zf.writestr("summaries.json", json.dumps(summaries))
        zf.writestr("reductions.json", "[]")
        zf.writestr("header.json", json.dumps(header))


def make_logs(folder: Path, n_samples: int, n_files: int, seed: int = 0) -> list[Path]:
    """Write ``n_samples`` samples spread evenly over ``n_files`` .eval files in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        template = _read_template(_template_log(Path(scratch)))
    rng = random.Random(seed)
    paths = []
    per_file, extra = divmod(n_samples, n_files)
    first = 1
    for index in range(n_files):
        n = per_file + (1 if index < extra else 0)
        path = folder / f"perf_{index:04d}.eval"
        _write_file(path, template, index, n, first, rng)
        paths.append(path)
        first += n
    return paths


def cached_logs(n_samples: int, n_files: int) -> Path:
    """The folder of generated logs for this size, written on first use."""
    folder = Path(tempfile.gettempdir()) / (
        f"evalsuite-perf-logs-v{FORMAT_VERSION}-{n_samples}-{n_files}"
    )
    done = folder / ".complete"
    if not done.exists():
        for old in folder.glob("*.eval"):
            old.unlink()
        make_logs(folder, n_samples, n_files)
        done.write_text("ok\n")
    return folder


if __name__ == "__main__":
    print(cached_logs(int(sys.argv[1]), int(sys.argv[2])))
