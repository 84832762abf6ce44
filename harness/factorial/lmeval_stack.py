"""The evaluation stack as a factor: the same items through lm-evaluation-harness.

A score is a property of the whole evaluation system, including the software that runs
it. The ``stack`` factor's ``lm-eval`` level runs a cell's items (after its intervention)
through lm-evaluation-harness's own runner (``simple_evaluate``) with:

* a local dataset file (JSON lines written from the cell's Inspect dataset: same ids,
  same inputs, same targets),
* a custom task YAML (``generate_until``, a regex filter taking the last integer-like
  token, lm-eval's ``exact_match``),
* a model adapter (:data:`InspectModelLM`) that calls the very same model through
  Inspect's ``get_model``, so the only thing that changes is the stack.

The per-sample results are written back as an Inspect log into the study's log dir, with
the cell's metadata and tags, so ``harness.results`` (the only log reader) puts both
stacks in one frame and the analysis treats them alike. The lm-eval metric is recorded
under the study's first response score key (its explanation names the lm-eval metric).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.factorial.cells import build_task
from harness.plugins.stack import StackJob, stack_runner
from harness.registry import extra_available, require_extra

if TYPE_CHECKING:
    from harness.factorial.study import Cell, Study

__all__ = ["DEFAULT_ANSWER_REGEX", "LmEvalStack", "inspect_model_lm", "lmeval_available",
           "run_lmeval_cell", "task_yaml", "write_dataset"]

DEFAULT_ANSWER_REGEX = r"(-?[0-9][0-9,]*)"
"""lm-eval filter: every integer-like token; the last one is taken (as Inspect's scorer)."""
DEFAULT_MAX_TOKENS = 128
WORK_DIR = ".lmeval"  # hidden inside the study's log dir, so log readers skip it


def lmeval_available() -> bool:
    """True when lm-evaluation-harness is installed (the ``lmeval`` extra)."""
    return extra_available("lmeval")


def _input_text(sample: Any) -> str:
    if isinstance(sample.input, str):
        return str(sample.input)
    return "\n\n".join(m.text for m in sample.input)


def write_dataset(samples: Any, path: Path) -> int:
    """Write samples as JSON lines ``{id, input, target}``; returns the count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w") as handle:
        for sample in samples:
            target = sample.target if isinstance(sample.target, str) else sample.target[0]
            record = {"id": str(sample.id), "input": _input_text(sample), "target": target}
            handle.write(json.dumps(record) + "\n")
            count += 1
    return count


def task_yaml(name: str, data_file: Path, answer_regex: str = DEFAULT_ANSWER_REGEX,
              max_tokens: int = DEFAULT_MAX_TOKENS) -> dict[str, Any]:
    """An lm-eval task config over a local JSON-lines file (no hub access)."""
    return {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data_file)}},
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_text": "{{input}}",
        "doc_to_target": "{{target}}",
        "generation_kwargs": {"until": [], "max_gen_toks": max_tokens, "do_sample": False},
        "filter_list": [{
            "name": "last-integer",
            "filter": [
                {"function": "regex", "regex_pattern": answer_regex, "group_select": -1},
                {"function": "take_first"},
            ],
        }],
        "metric_list": [{"metric": "exact_match", "aggregation": "mean",
                         "higher_is_better": True}],
        "metadata": {"version": 1.0},
    }


class _InspectModelGenerate:
    """``generate_until`` with an Inspect model: the body of :data:`InspectModelLM`."""

    def __init__(self, model: str, model_args: dict[str, Any] | None = None,
                 generate_config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.model_name = model
        self.model_args = dict(model_args or {})
        self.generate_config = dict(generate_config or {})
        self.usage: dict[str, dict[str, int]] = {}  # by context (lm-eval may reorder)

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """Generate one completion per request with Inspect's ``Model.generate``."""
        from inspect_ai.model import GenerateConfig, get_model

        async def run_all() -> list[str]:
            model = get_model(self.model_name, **self.model_args)
            outputs: list[str] = []
            for request in requests:
                context, kwargs = request.args
                until = [u for u in (kwargs or {}).get("until") or [] if u]
                config = GenerateConfig(**{
                    "max_tokens": (kwargs or {}).get("max_gen_toks", DEFAULT_MAX_TOKENS),
                    **self.generate_config,
                    **({"stop_seqs": until} if until else {}),
                })
                output = await model.generate(context, config=config)
                usage = output.usage
                self.usage[context] = {
                    "input_tokens": usage.input_tokens if usage else 0,
                    "output_tokens": usage.output_tokens if usage else 0,
                    "total_tokens": usage.total_tokens if usage else 0,
                }
                outputs.append(output.completion)
            return outputs

        return asyncio.run(run_all())

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        raise NotImplementedError("InspectModelLM supports generate_until tasks only")

    def loglikelihood_rolling(self, requests: list[Any],
                              disable_tqdm: bool = False) -> list[Any]:
        raise NotImplementedError("InspectModelLM supports generate_until tasks only")


@functools.cache
def inspect_model_lm() -> type:
    """The class :data:`InspectModelLM`: an lm-eval ``LM`` that generates with an Inspect
    model (any provider, offline too).

    Built on first use, because its base class is lm-eval's ``LM``: importing this module
    (which registers the stack) must not need lm-eval. Only ``generate_until`` is
    supported: loglikelihood needs token logprobs, which the offline providers do not
    expose.
    """
    require_extra("lmeval", "the 'lm-eval' evaluation stack")
    from lm_eval.api.model import LM

    class InspectModelLM(_InspectModelGenerate, LM):  # type: ignore[misc]
        __doc__ = inspect_model_lm.__doc__

    InspectModelLM.__module__ = __name__
    InspectModelLM.__qualname__ = "InspectModelLM"  # pickles by reference (module __getattr__)
    return InspectModelLM


def __getattr__(name: str) -> Any:
    # ``from harness.factorial.lmeval_stack import InspectModelLM`` builds the class then
    if name == "InspectModelLM":
        return inspect_model_lm()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _write_log(cell: Cell, study: Study, samples: list[dict[str, Any]],
               usage: dict[str, dict[str, int]], log_dir: Path, started: str) -> Path:
    """Write lm-eval's per-sample results as an Inspect log with the cell's metadata."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalSample,
        EvalScore,
        EvalSpec,
        EvalStats,
        write_eval_log,
    )
    from inspect_ai.model import ModelUsage
    from inspect_ai.scorer import CORRECT, INCORRECT, Score

    score_name = study.response.scores[0] if study.response.scores else "exact_match"
    eval_samples = []
    for record in samples:
        doc = record["doc"]
        value = float(record.get("exact_match", 0.0))
        raw = record.get("resps") or [[""]]
        answer = (record.get("filtered_resps") or [""])[0]
        arguments = record.get("arguments") or [[doc["input"]]]
        tokens = usage.get(str(arguments[0][0]), {})
        eval_samples.append(EvalSample(
            id=doc["id"], epoch=1, input=doc["input"], target=doc["target"],
            scores={score_name: Score(
                value=CORRECT if value == 1.0 else INCORRECT, answer=str(answer),
                explanation=f"lm-eval exact_match={value} on the last integer-like token "
                            f"of: {str(raw[0][0])[:200]}",
            )},
            model_usage={cell.model or "": ModelUsage(**tokens)} if tokens else {},
            metadata={"stack": "lm-eval"},
        ))
    accuracy = sum(float(r.get("exact_match", 0.0)) for r in samples) / max(len(samples), 1)
    now = datetime.now(UTC).isoformat()
    spec = EvalSpec(
        created=started, task=cell.task.split("/")[-1], task_args={
            **cell.task_args, "intervention": cell.intervention,
            "intervention_seed": cell.intervention_seed, "stack": "lm-eval"},
        dataset=EvalDataset(name=cell.task, samples=len(samples)),
        model=cell.model or "", model_args=cell.model_args,
        config=EvalConfig(limit=study.limit, epochs=1),
        metadata=cell.metadata, tags=cell.tags, solver="lm_eval.simple_evaluate",
    )
    log = EvalLog(
        eval=spec, status="success", samples=eval_samples,
        results=EvalResults(
            total_samples=len(samples), completed_samples=len(samples),
            scores=[EvalScore(name=score_name, scorer=score_name, metrics={
                "accuracy": EvalMetric(name="accuracy", value=accuracy)})],
        ),
        stats=EvalStats(started_at=started, completed_at=now),
    )
    stamp = started.replace(":", "-").split(".")[0]
    path = log_dir / f"{stamp}_lmeval_{cell.id}.eval"
    write_eval_log(log, str(path))
    return path


def run_lmeval_cell(cell: Cell, study: Study, log_dir: str | Path,
                    answer_regex: str = DEFAULT_ANSWER_REGEX) -> Path:
    """Run one ``stack=lm-eval`` cell through lm-eval's runner; returns the written log.

    Raises:
        harness.registry.MissingExtraError: lm-evaluation-harness is not installed (the
            message says ``pip install 'harness[lmeval]'``).
    """
    require_extra("lmeval", "the 'lm-eval' evaluation stack")
    import os

    import yaml

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # the dataset is a local file
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    started = datetime.now(UTC).isoformat()
    directory = Path(log_dir)
    work = directory / WORK_DIR / cell.id
    task = build_task(cell, study)  # same items, same intervention as the Inspect stack
    samples = list(task.dataset)
    if study.limit is not None:
        samples = samples[: study.limit]
    data_file = work / "data.jsonl"
    write_dataset(samples, data_file)
    name = f"evalsuite_{cell.id}"
    max_tokens = int(cell.generate_config.get("max_tokens", DEFAULT_MAX_TOKENS))
    (work / f"{name}.yaml").write_text(
        yaml.safe_dump(task_yaml(name, data_file.resolve(), answer_regex, max_tokens))
    )
    lm = inspect_model_lm()(cell.model or "", cell.model_args, cell.generate_config)
    results = simple_evaluate(
        model=lm, tasks=[name], task_manager=TaskManager(include_path=str(work)),
        log_samples=True, bootstrap_iters=0, random_seed=0,
    )
    if results is None:
        raise RuntimeError(f"lm-eval returned no results for cell {cell.id}")
    per_sample = sorted(results["samples"][name], key=lambda r: int(r["doc_id"]))
    return _write_log(cell, study, per_sample, lm.usage, directory, started)


@stack_runner("lm-eval", extra="lmeval",
              summary="lm-evaluation-harness's simple_evaluate on the cell's items")
class LmEvalStack:
    """Runs each cell's items (after its intervention) through lm-evaluation-harness."""

    def run(self, cells: Sequence[Cell], job: StackJob) -> None:
        """One ``simple_evaluate`` per cell, in order; each writes its Inspect log."""
        for cell in cells:
            run_lmeval_cell(cell, job.study, job.log_dir)
