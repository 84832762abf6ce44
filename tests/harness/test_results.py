"""Round trip: real Inspect logs (.eval and .json) -> harness.results frame.

A tiny task is run with ``inspect_ai.eval`` (offline: mockllm with usage set on every
output) with two epochs, two scorers (one dict-valued), task args, eval metadata, sample
metadata and one sample that raises. The frame is checked against hand-known values and
against what Inspect's own readers (``samples_df``, ``read_eval_log``) report.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Literal

import polars as pl
import pytest
from inspect_ai import Task, eval, task
from inspect_ai.analysis import samples_df
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Target,
    accuracy,
    mean,
    scorer,
    value_to_float,
)
from inspect_ai.solver import Generate, TaskState, generate, solver

from harness.results import (
    SCHEMA,
    list_logs,
    read_log,
    read_results,
    read_sample_messages,
    read_score_metadata,
    score_to_float,
    with_metadata_columns,
)

N_SAMPLES, EPOCHS, FAILING = 5, 2, 5
KEYS = ["verdict", "rubric/quality", "rubric/passed"]


def _number(messages: list[Any]) -> int:
    return int(messages[-1].text.split()[-1])


def _reply(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """Deterministic per sample: 'answer i', 10*i input and i output tokens."""
    i = _number(input)
    out = ModelOutput.from_content("mockllm/model", f"answer {i}")
    out.usage = ModelUsage(input_tokens=10 * i, output_tokens=i, total_tokens=11 * i)
    return out


@solver
def fail_on(sample_id: int) -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == sample_id:
            raise RuntimeError(f"boom on {sample_id}")
        return state

    return solve


@scorer(metrics=[accuracy()])
def verdict() -> Any:
    async def score(state: TaskState, target: Target) -> Score:
        i = int(state.sample_id)  # type: ignore[arg-type]
        return Score(value=CORRECT if i % 2 else INCORRECT, answer=state.output.completion,
                     metadata={"parity": i % 2})

    return score


@scorer(metrics={"quality": [mean()], "passed": [mean()]})
def rubric() -> Any:
    async def score(state: TaskState, target: Target) -> Score:
        i = int(state.sample_id)  # type: ignore[arg-type]
        return Score(value={"quality": i / 10, "passed": "yes" if i > 2 else "no"})

    return score


@task
def round_trip_task(difficulty: str = "easy", n: int = N_SAMPLES) -> Task:
    dataset = [
        Sample(id=i, input=f"question {i}", target="x",
               metadata={"topic": "math" if i <= 2 else "text"})
        for i in range(1, n + 1)
    ]
    return Task(dataset=dataset, solver=[fail_on(FAILING), generate()],
                scorer=[verdict(), rubric()], name="round_trip", version="1.2.0",
                metadata={"cell": 3, "difficulty": difficulty})


def _run(log_dir: Path, fmt: Literal["eval", "json"]) -> Path:
    task = round_trip_task(difficulty="hard")
    eval(task, model=get_model("mockllm/model", custom_outputs=_reply), epochs=EPOCHS,
         log_dir=str(log_dir), log_format=fmt, fail_on_error=False, display="none",
         metadata={"prompt": "cot", "temperature": 0.5}, tags=["round-trip"])
    (path,) = log_dir.glob(f"*.{fmt}")
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("logs")
    return {"eval": _run(root / "eval", "eval"), "json": _run(root / "json", "json")}


@pytest.fixture(scope="module")
def frames(logs: dict[str, Path]) -> dict[str, pl.DataFrame]:
    return {fmt: read_results(path) for fmt, path in logs.items()}


# --------------------------------------------------------------------------- shape/values


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_rows_and_schema(frames: dict[str, pl.DataFrame], fmt: str) -> None:
    df = frames[fmt]
    assert df.schema == pl.Schema(SCHEMA)
    assert df.height == N_SAMPLES * EPOCHS * len(KEYS)
    assert df.group_by("sample_id", "epoch").len()["len"].to_list() == [3] * 10
    assert sorted(df["score_key"].unique()) == sorted(KEYS)
    assert set(df.filter(pl.col("scorer") == "rubric")["score_key"]) == set(KEYS[1:])


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_eval_level_columns(frames: dict[str, pl.DataFrame], logs: dict[str, Path],
                            fmt: str) -> None:
    row = frames[fmt].row(0, named=True)
    assert row["log_file"] == str(logs[fmt])
    assert row["task"] == "round_trip" and row["task_version"] == "1.2.0"
    assert row["model"] == "mockllm/model" and row["status"] == "success"
    import inspect_ai

    assert json.loads(row["packages"])["inspect_ai"] == inspect_ai.__version__
    assert json.loads(row["task_args"]) == {"difficulty": "hard", "n": N_SAMPLES}
    assert json.loads(row["eval_metadata"]) == {"prompt": "cot", "temperature": 0.5, "cell": 3,
                                                "difficulty": "hard"}
    assert row["tags"] == ["round-trip"]
    assert "fail_on" in row["solver"] and "generate" in row["solver"]
    assert frames[fmt].select(pl.col(c).n_unique() for c in ("eval_id", "run_id")).row(0) == (
        1, 1)


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_sample_values_by_hand(frames: dict[str, pl.DataFrame], fmt: str) -> None:
    df = frames[fmt]
    for i in range(1, N_SAMPLES + 1):
        rows = df.filter(pl.col("sample_id") == str(i))
        assert rows.height == EPOCHS * len(KEYS)
        values = {r["score_key"]: r["score_value"] for r in rows.iter_rows(named=True)}
        if i == FAILING:
            assert rows["score_value"].null_count() == rows.height
            assert all("boom on 5" in e for e in rows["error"])
            assert rows["total_tokens"].to_list() == [0] * rows.height  # never reached generate
            continue
        assert rows["error"].null_count() == rows.height
        assert values == {"verdict": 1.0 if i % 2 else 0.0, "rubric/quality": i / 10,
                          "rubric/passed": 1.0 if i > 2 else 0.0}
        assert set(rows.filter(pl.col("score_key") == "verdict")["score_answer"]) == {
            f"answer {i}"}
        assert set(rows["input_tokens"]) == {10 * i} and set(rows["output_tokens"]) == {i}
        assert set(rows["total_tokens"]) == {11 * i}
        assert json.loads(rows["sample_metadata"][0]) == {"topic": "math" if i <= 2 else "text"}
        assert set(rows["epoch"]) == {1, 2}


def test_eval_and_json_formats_agree(frames: dict[str, pl.DataFrame]) -> None:
    cols = ["sample_id", "epoch", "score_key", "score_value", "score_answer", "input_tokens",
            "output_tokens", "total_tokens", "error", "task_args", "eval_metadata"]
    sort = ["sample_id", "epoch", "score_key"]
    a, b = (frames[f].select(cols).sort(sort) for f in ("eval", "json"))
    assert a.equals(b)


# --------------------------------------------------------------------------- vs Inspect


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_agrees_with_samples_df(frames: dict[str, pl.DataFrame], logs: dict[str, Path],
                                fmt: str) -> None:
    theirs = samples_df(str(logs[fmt]), quiet=True)
    ours = frames[fmt]
    assert len(theirs) == ours.select("sample_id", "epoch").n_unique()
    to_float = value_to_float()
    wide = ours.pivot(on="score_key", index=["sample_id", "epoch"], values="score_value")
    per_sample = ours.unique(["sample_id", "epoch"]).select(
        "sample_id", "epoch", "total_tokens", "total_time", "working_time", "error")
    checked = 0
    for rec in theirs.to_dict("records"):
        key = (str(rec["id"]), int(rec["epoch"]))
        mine = per_sample.filter(pl.col("sample_id") == key[0], pl.col("epoch") == key[1])
        mine_scores = wide.filter(pl.col("sample_id") == key[0], pl.col("epoch") == key[1])
        assert mine["total_tokens"][0] == rec["total_tokens"]
        assert mine["total_time"][0] == pytest.approx(rec["total_time"])
        assert mine["working_time"][0] == pytest.approx(rec["working_time"])
        assert (mine["error"][0] or "") == (rec["error"] or "")
        if rec["error"]:
            continue
        assert mine_scores["verdict"][0] == to_float(rec["score_verdict"])
        rubric_value = json.loads(rec["score_rubric"])  # samples_df keeps dicts as JSON
        assert mine_scores["rubric/quality"][0] == to_float(rubric_value["quality"])
        assert mine_scores["rubric/passed"][0] == to_float(rubric_value["passed"])
        checked += 1
    assert checked == (N_SAMPLES - 1) * EPOCHS


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_agrees_with_read_eval_log(frames: dict[str, pl.DataFrame], logs: dict[str, Path],
                                   fmt: str) -> None:
    log = read_eval_log(str(logs[fmt]))
    df = frames[fmt]
    assert df["eval_id"][0] == log.eval.eval_id and df["run_id"][0] == log.eval.run_id
    assert json.loads(df["task_args"][0]) == log.eval.task_args
    assert df["status"][0] == log.status
    assert log.samples is not None
    for sample in log.samples:
        rows = df.filter(pl.col("sample_id") == str(sample.id), pl.col("epoch") == sample.epoch)
        usage = sample.model_usage.values()
        assert rows["input_tokens"][0] == sum(u.input_tokens for u in usage)
        assert rows["output_tokens"][0] == sum(u.output_tokens for u in usage)
        assert (rows["error"][0] is None) == (sample.error is None)
        for name, score in (sample.scores or {}).items():
            if isinstance(score.value, dict):
                for k, v in score.value.items():
                    got = rows.filter(pl.col("score_key") == f"{name}/{k}")["score_value"][0]
                    assert got == value_to_float()(v)
            else:
                got = rows.filter(pl.col("score_key") == name)["score_value"][0]
                assert got == value_to_float()(score.value)


# --------------------------------------------------------------------------- journal


def _rewrite(src: Path, dst: Path, drop: set[str], add: dict[str, Any]) -> None:
    """Copy an .eval zip (zstd members, as Inspect writes them) dropping/adding members."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            if info.filename not in drop:
                zout.writestr(info, zin.read(info), compress_type=info.compress_type)
        compress = zin.infolist()[0].compress_type
        for name, value in add.items():
            zout.writestr(name, json.dumps(value), compress_type=compress)


def test_interrupted_eval_read_from_journal(logs: dict[str, Path], frames: dict[str, pl.DataFrame],
                                            tmp_path: Path) -> None:
    src = logs["eval"]
    with zipfile.ZipFile(src) as zf:
        journal = sorted(n for n in zf.namelist() if n.startswith("_journal/summaries/"))
        summaries = json.loads(zf.read("summaries.json"))
    assert journal, "Inspect wrote no summary journal"
    rerun = next(s for s in summaries if s["id"] == 1 and s["epoch"] == 1)
    stale = json.loads(json.dumps(rerun)) | {"scores": {"verdict": {"value": "P"}}}
    fresh = json.loads(json.dumps(rerun)) | {"scores": {"verdict": {"value": "I"}}}
    dst = tmp_path / "interrupted.eval"
    # numeric order: 10.json is written after 2.json, so its record must win
    _rewrite(src, dst, drop={"header.json", "summaries.json", "reductions.json"},
             add={"_journal/summaries/2.json": [stale], "_journal/summaries/10.json": [fresh]})

    df = read_log(dst)
    assert df is not None
    assert set(df["status"]) == {"started"}
    assert df.select("sample_id", "epoch").n_unique() == N_SAMPLES * EPOCHS
    one = df.filter(pl.col("sample_id") == "1", pl.col("epoch") == 1)
    assert one.filter(pl.col("score_key") == "verdict")["score_value"].to_list() == [0.0]
    # the re-run record has no rubric score: its rubric keys are still there, null
    assert one.filter(pl.col("scorer") == "rubric")["score_value"].null_count() == 2
    rest = ["sample_id", "epoch", "score_key", "score_value", "error", "total_tokens"]
    others = (pl.col("sample_id") != "1") | (pl.col("epoch") != 1)
    assert df.filter(others).select(rest).sort(rest[:3]).equals(
        frames["eval"].filter(others).select(rest).sort(rest[:3]))


# --------------------------------------------------------------------------- discovery


def test_directory_search_skips_non_logs(logs: dict[str, Path], tmp_path: Path) -> None:
    shutil.copy(logs["eval"], tmp_path / "a.eval")
    (tmp_path / "nested").mkdir()
    shutil.copy(logs["json"], tmp_path / "nested" / "b.json")
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    (tmp_path / "logs.json").write_text("{}")
    (tmp_path / ".hidden").mkdir()
    shutil.copy(logs["eval"], tmp_path / ".hidden" / "c.eval")
    names = [p.name for p in list_logs(tmp_path)]
    assert names == ["a.eval", "b.json", "notes.json"]
    assert [p.name for p in list_logs(tmp_path, recursive=False)] == ["a.eval", "notes.json"]
    assert read_log(tmp_path / "notes.json") is None
    # the two logs are two complete runs of one cell (same task, args, model, metadata):
    # each sample counts once, from the newer run, and the older is set aside as superseded
    from harness.results import load_results

    results = load_results(tmp_path)
    df = results.frame
    assert df["log_file"].unique().to_list() == [str(tmp_path / "nested" / "b.json")]
    assert df.height == N_SAMPLES * EPOCHS * len(KEYS)
    assert sorted((Path(a.log_file).name, a.why) for a in results.account.set_aside) == [
        ("a.eval", "superseded"), ("notes.json", "not a log")]
    assert read_results([tmp_path / "a.eval", tmp_path / "nested"]).height == df.height
    assert read_results(tmp_path / "a.eval").height == df.height


def test_empty_and_missing(tmp_path: Path) -> None:
    df = read_results(tmp_path)
    assert df.height == 0 and df.schema == pl.Schema(SCHEMA)
    with pytest.raises(FileNotFoundError):
        read_results(tmp_path / "absent")


# --------------------------------------------------------------------------- helpers


def test_with_metadata_columns(frames: dict[str, pl.DataFrame]) -> None:
    df = frames["eval"]
    out = with_metadata_columns(df, ["prompt", "temperature", "missing"])
    assert out.height == df.height
    assert out.schema["prompt"] == pl.String and out.schema["temperature"] == pl.Float64
    assert set(out["prompt"]) == {"cot"} and set(out["temperature"]) == {0.5}
    assert out["missing"].null_count() == df.height
    args = with_metadata_columns(df, None, source="task_args", prefix="arg_")
    assert set(args["arg_difficulty"]) == {"hard"}
    topics = with_metadata_columns(df, ["topic"], source="sample_metadata")
    assert topics.filter(pl.col("sample_id") == "1")["topic"][0] == "math"
    with pytest.raises(ValueError, match="already exist"):
        with_metadata_columns(df, ["model"], source="eval_metadata")


def test_with_metadata_columns_mixed_types_become_json() -> None:
    df = pl.DataFrame({"eval_metadata": ['{"f": 1}', '{"f": "x"}', '{"f": [1, 2]}', None],
                       "row": [1, 2, 3, 4]})
    out = with_metadata_columns(df, ["f"])
    assert out["f"].to_list() == ["1", '"x"', "[1,2]", None]
    ints = with_metadata_columns(df.head(1), ["f"])
    assert ints.schema["f"] == pl.Int64 and ints["f"].to_list() == [1]


@pytest.mark.parametrize("value", ["C", "I", "P", "N", "yes", "No", "TRUE", "false", "3.5",
                                   "-2", "1e3", True, False, 0, 7, 0.25])
def test_score_to_float_matches_inspect(value: Any) -> None:
    assert score_to_float(value) == value_to_float()(value)


@pytest.mark.parametrize("value", ["free text", "nan", "inf", None, [1], {"a": 1}])
def test_score_to_float_unconvertible_is_null(value: Any) -> None:
    # Inspect maps these to 0.0 with a warning; the results frame keeps them missing
    assert score_to_float(value) is None


def test_nan_score_in_json_log(tmp_path: Path, logs: dict[str, Path]) -> None:
    # Inspect writes NaN/Infinity literals, which strict JSON parsers reject
    text = logs["json"].read_text().replace('"quality": 0.1', '"quality": NaN', 1)
    assert "NaN" in text
    path = tmp_path / "nan.json"
    path.write_text(text)
    df = read_log(path)
    assert df is not None
    values = df.filter(pl.col("score_key") == "rubric/quality")["score_value"]
    assert sum(1 for v in values if v is not None and math.isnan(v)) == 1


def test_deflate_members_read_like_zstd(logs: dict[str, Path], frames: dict[str, pl.DataFrame],
                                        tmp_path: Path) -> None:
    # older Inspect versions wrote deflate members; both compressions must read the same
    dst = tmp_path / "deflate.eval"
    with zipfile.ZipFile(logs["eval"]) as zin, zipfile.ZipFile(dst, "w") as zout:
        assert {i.compress_type for i in zin.infolist()} != {zipfile.ZIP_DEFLATED}
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info), compress_type=zipfile.ZIP_DEFLATED)
    df = read_log(dst)
    assert df is not None
    assert df.drop("log_file").equals(frames["eval"].drop("log_file"))


def test_reader_does_not_import_inspect() -> None:
    # the reader's speed and memory depend on never loading inspect_ai
    code = "import sys, harness.results; print('inspect_ai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_read_headers_one_row_per_log_and_skips_broken_files(tmp_path: Path) -> None:
    """Bookkeeping (which study cells are done) reads a row per log from its header."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import solver

    from harness.results import read_headers

    @solver
    def no_model():  # type: ignore[no-untyped-def]
        async def solve(state: TaskState, generate):  # type: ignore[no-untyped-def]
            return state

        return solve

    for cell in ("c1", "c2"):
        inspect_eval(Task(dataset=[Sample(input="x", target="y")], solver=no_model(),
                          name=f"t{cell}"),
                     model="mockllm/model", log_dir=str(tmp_path), display="none",
                     metadata={"cell_id": cell})
    (tmp_path / "broken.eval").write_bytes(b"not a zip")
    headers = read_headers(tmp_path).sort("task")
    assert headers.height == 2
    assert headers["status"].to_list() == ["success", "success"]
    import json

    assert [json.loads(m)["cell_id"] for m in headers["eval_metadata"]] == ["c1", "c2"]


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_read_sample_messages(logs: dict[str, Path], fmt: str) -> None:
    messages = read_sample_messages(logs[fmt], 3, epoch=2)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["content"] == "question 3"
    assert "answer 3" in str(messages[1]["content"])
    with pytest.raises(KeyError, match="sample 99 epoch 1"):
        read_sample_messages(logs[fmt], 99)


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_read_score_metadata(logs: dict[str, Path], fmt: str) -> None:
    meta = read_score_metadata(logs[fmt], "verdict")
    # the errored sample has no score, so it has no row
    assert meta.height == (N_SAMPLES - 1) * EPOCHS
    for row in meta.iter_rows(named=True):
        assert json.loads(row["metadata"]) == {"parity": int(row["sample_id"]) % 2}
        assert json.loads(row["eval_metadata"])["prompt"] == "cot"
    assert read_score_metadata(logs[fmt], "no_such_scorer").height == 0


def test_score_metadata_thinned_in_a_summary_is_read_from_the_sample() -> None:
    """Inspect drops large metadata values from a running log's summaries; the full
    sample record still holds them (a committed 0.5B WorldTravel log)."""
    from harness.results import read_score_metadata

    folder = (Path(__file__).resolve().parents[2] / "leaderboards" / "ladder" / "logs"
              / "worldtravel" / "worldtravel--embedded_qwen2.5-coder-0.5b")
    meta = read_score_metadata([str(folder)], "worldtravel_checker")
    assert meta.height >= 1
    for raw in meta["metadata"]:
        results = json.loads(raw)["results"]
        assert isinstance(results, list) and results and "kind" in results[0]


def test_read_task_identities_match_inspects_own_pairing(logs: dict[str, Path],
                                                         tmp_path: Path) -> None:
    """The study runner pairs a cell with its logs by these; they must be Inspect's own
    values (its ``task_id`` and eval-set identifier), one row per readable log, and a
    broken file skipped rather than raising."""
    from harness.inspect_compat import log_task_identifier
    from harness.results import read_task_identities

    for path in logs.values():
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "broken.eval").write_bytes(b"not a zip")
    frame = read_task_identities(tmp_path).sort("log_file")
    assert frame.columns == ["log_file", "task_id", "identifier"]
    assert frame.height == 2
    for row in frame.iter_rows(named=True):
        header = read_eval_log(row["log_file"], header_only=True)
        assert row["task_id"] == header.eval.task_id
        assert row["identifier"] == log_task_identifier(header)
    empty = read_task_identities(tmp_path / "broken.eval")
    assert empty.is_empty() and empty.columns == ["log_file", "task_id", "identifier"]
