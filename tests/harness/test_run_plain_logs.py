"""compare, rescore, consistency and provenance on logs the suite did not produce.

A plain Inspect task (written to a temporary folder, nothing of the suite in it) is run with
``inspect_ai.eval`` on ``mockllm`` with scripted answers, so every expected number below is
worked out by hand from the answers. Slow tier: the first eval in a process pays Inspect's
start-up (about 9 s on the 2-core machine).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from harness.compare import compare_paths, to_html, to_text
from harness.consistency import item_consistency, run_consistency
from harness.provenance import task_record
from harness.rescore import rescore
from harness.results import read_results

pytestmark = pytest.mark.slow

TASK = textwrap.dedent('''
    from inspect_ai import Epochs, Task, task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, match, scorer
    from inspect_ai.scorer import pass_at
    from inspect_ai.solver import TaskState, generate

    @task
    def arith(offset: int = 0) -> Task:
        return Task(dataset=[Sample(id=f"q{i}", input=f"What is {i} + {i + offset}?",
                                    target=str(2 * i + offset)) for i in range(6)],
                    solver=generate(), scorer=match())

    # per item, the outcome of epochs 1..4 (pass@2 / pass^2 / flips worked out by hand)
    TABLE = {"i0": [1, 1, 1, 1], "i1": [1, 0, 1, 0], "i2": [0, 0, 0, 1], "i3": [0, 0, 0, 0]}

    @scorer(metrics=[accuracy()])
    def table_scorer():
        async def score(state: TaskState, target: Target) -> Score:
            ok = TABLE[str(state.sample_id)][state.epoch - 1]
            return Score(value=CORRECT if ok else INCORRECT)
        return score

    @task
    def trials() -> Task:
        return Task(dataset=[Sample(id=k, input=k, target="x") for k in TABLE],
                    solver=generate(), scorer=table_scorer(),
                    epochs=Epochs(4, pass_at(2)))
''')


def _model(answers: list[str]) -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    outputs = []
    for answer in answers:
        out = ModelOutput.from_content("mockllm/model", answer)
        out.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)
        outputs.append(out)
    return get_model("mockllm/model", custom_outputs=outputs)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from inspect_ai import eval as inspect_eval

    root = tmp_path_factory.mktemp("plain")
    (root / "plain_task.py").write_text(TASK)
    sys.path.insert(0, str(root))
    try:
        import plain_task  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(root))
    out: dict[str, Any] = {"root": root, "module": plain_task}
    # A: q3, q5 wrong; B: q1 wrong. So B - A: q3, q5 up, q1 down
    for name, answers, offset in (("a", ["0", "2", "4", "7", "8", "9"], 0),
                                  ("b", ["0", "3", "4", "6", "8", "10"], 0),
                                  ("shifted", ["0", "2", "4", "7", "8", "9"], 1)):
        [log] = inspect_eval(plain_task.arith(offset=offset), model=_model(answers),
                             log_dir=str(root / name), display="none", max_samples=1)
        assert log.status == "success"
        out[name] = root / name
    [log] = inspect_eval(plain_task.trials(), model=_model(["x"] * 16),
                         log_dir=str(root / "trials"), display="none")
    assert log.status == "success"
    out["trials"], out["trials_log"] = root / "trials", log
    return out


def test_compare_on_plain_inspect_logs(runs: dict[str, Any]) -> None:
    result = compare_paths(runs["a"], runs["b"])
    [metric] = result.metrics
    assert metric["name"] == "match"
    assert result.n_paired == 6
    assert (metric["mean_a"], metric["mean_b"]) == (4 / 6, 5 / 6)
    assert metric["difference"] == pytest.approx(1 / 6)
    assert (metric["flipped_up"], metric["flipped_down"]) == (2, 1)
    assert metric["test"] == "exact McNemar" and metric["p"] == pytest.approx(1.0)
    assert {i["sample_id"]: i["direction"] for i in metric["items"]} == {
        "q1": "down", "q3": "up", "q5": "up"}
    q3 = next(i for i in metric["items"] if i["sample_id"] == "q3")
    assert (q3["input"], q3["target"], q3["answer_a"], q3["answer_b"]) == (
        "What is 3 + 3?", "6", "7", "6")
    assert "no detectable difference" in result.verdict and "2 items up, 1 down" in result.verdict
    assert "What is 3 + 3?" in to_html(result)
    same = compare_paths(runs["a"], runs["a"])
    assert same.metrics[0]["difference"] == 0.0
    assert same.metrics[0]["flipped_up"] == same.metrics[0]["flipped_down"] == 0


def test_compare_warns_when_the_data_under_the_same_ids_differ(runs: dict[str, Any]) -> None:
    result = compare_paths(runs["a"], runs["shifted"])
    assert any("the data differ: 6 shared id(s)" in w for w in result.warnings), result.warnings
    clean = compare_paths(runs["a"], runs["b"])
    assert not any("data differ" in w for w in clean.warnings)
    sha = clean.provenance["a"]["paired_data_sha256"]
    assert sha == clean.provenance["b"]["paired_data_sha256"]


def test_rescore_writes_new_logs_with_another_scorers_values(runs: dict[str, Any]) -> None:
    out = runs["root"] / "rescored"
    done = rescore([runs["b"]], "includes", out)
    [one] = done
    assert Path(one.written).parent == out and one.samples == 6
    frame = read_results(out)
    assert set(frame["score_key"].unique()) == {"includes"}  # overwrite: only the new one
    values = dict(frame.select("sample_id", "score_value").iter_rows())
    # includes: "10" contains target "10"; "3" does not contain "2"
    assert values == {"q0": 1.0, "q1": 0.0, "q2": 1.0, "q3": 1.0, "q4": 1.0, "q5": 1.0}
    meta = json.loads(frame["eval_metadata"][0])
    assert meta["rescored"]["scorer"] == "includes"
    original = read_results(runs["b"])
    assert set(original["score_key"].unique()) == {"match"}  # the source is untouched
    appended = rescore([runs["b"]], "includes", runs["root"] / "appended", action="append")
    both = read_results(appended[0].written)
    assert set(both["score_key"].unique()) == {"match", "includes"}


def test_consistency_matches_inspects_own_reducer(runs: dict[str, Any]) -> None:
    frame = read_results(runs["trials"])
    items = item_consistency(frame, "table_scorer", 2)
    got = {r["sample_id"]: (r["pass_at_k"], r["pass_hat_k"], r["flip_rate"])
           for r in items.iter_rows(named=True)}
    expected = {"i0": (1.0, 1.0, 0.0), "i1": (5 / 6, 1 / 6, 4 / 6),
                "i2": (0.5, 0.0, 3 / 6), "i3": (0.0, 0.0, 0.0)}
    assert set(got) == set(expected)
    for key, values in expected.items():
        assert got[key] == pytest.approx(values), key
    [run] = run_consistency(items)
    # the log's own metric is the mean of Inspect's pass_at(2) reduction over items
    logged = runs["trials_log"].results.scores[0].metrics["accuracy"].value
    assert run["pass_at_k"]["mean"] == pytest.approx(logged) == pytest.approx(7 / 12)
    assert run["pass_hat_k"]["mean"] == pytest.approx(7 / 24)
    assert run["flip_rate"]["mean"] == pytest.approx(7 / 24)
    lo, hi = run["flip_rate"]["ci"]
    assert 0 < lo < 7 / 24 < hi < 1
    # a factorial response: one row per run x item with the run's columns
    assert {"log_file", "model", "eval_metadata", "sample_id", "flip_rate"} <= set(items.columns)


def test_provenance_record_of_a_task(runs: dict[str, Any], tmp_path: Path) -> None:
    study = tmp_path / "study.yaml"
    study.write_text("name: x\n")
    record = task_record(runs["module"].arith(), "mockllm/model", {}, study)
    assert record["packages"]["inspect_ai"]
    ids = "\n".join(f"q{i}" for i in range(6))
    import hashlib

    assert record["dataset"]["samples"] == 6
    assert record["dataset"]["sample_ids_sha256"] == hashlib.sha256(ids.encode()).hexdigest()
    assert record["study"]["sha256"] == hashlib.sha256(b"name: x\n").hexdigest()
    assert "model" not in record  # a remote-style model has no file to hash
    assert pl.DataFrame([record["packages"]]).height == 1


def test_compare_reports_consistency_where_both_runs_have_epochs(runs: dict[str, Any]) -> None:
    result = compare_paths(runs["trials"], runs["trials"])
    assert result.consistency is not None and result.consistency["k"] == 4
    side = result.consistency["a"]
    assert side["flip_rate"]["mean"] == pytest.approx(7 / 24)
    assert side["pass_at_k"]["mean"] == pytest.approx((1 + 1 + 1 + 0) / 4)  # pass@4
    assert "A consistency (table_scorer, k=4): pass@k 0.75" in to_text(result)
    assert compare_paths(runs["a"], runs["b"]).consistency is None  # one epoch each
