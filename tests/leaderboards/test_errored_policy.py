"""One errored-sample policy: the same logs give the same mean in every consumer, and a
minimised headline (first_autocorrelation's bound) ranks ascending with errored samples
never beating a real result.

Consumers compared: ``harness.results.apply_errored_policy`` (the definition), the
leaderboard's entries (``leaderboards.tables``) and its per-(task, model) CSV
(``leaderboards.build.leaderboard``), the factorial analysis (``prepare`` cells and the
fitted marginal means) and the WorldTravel report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import jsonschema
import polars as pl
import pytest
from _lb_synth import Score, write_log

from harness import registry
from harness.factorial.analysis import analyze
from harness.factorial.analysis.prepare import prepare
from harness.factorial.report.assemble import report_data
from harness.results import apply_errored_policy, errored_counts, read_results
from leaderboards.build import build, leaderboard
from leaderboards.exports import SCHEMA_PATH, eee_records
from leaderboards.site import _cell_class
from leaderboards.tables import Options, compute

REPO = Path(__file__).resolve().parents[2]
EEE_SCHEMA = REPO.parent / "shared" / "reference-data" / "every_eval_ever" / "eval.schema.json"

SPEC = """\
title: "policy test"
description: "two throw-away tasks, one per errored-sample policy"
paper: null
version: "0"
group: Tests
errored: zero
tasks:
  - name: lbpol_zero
    samples: 6
    headline: acc
    metrics:
      acc: {lower_is_better: false, summary: "accuracy"}
  - name: lbpol_drop
    samples: 6
    headline: acc
    errored: drop
    metrics:
      acc: {lower_is_better: false, summary: "accuracy"}
"""
# 6 items x 2 epochs, epoch-major; None = an errored sample
SCORES: dict[str, list[Score]] = {
    "m/a": [1, 0, 1, None, 1, 1, 0, 1, 1, 1, None, 0],
    "m/b": [0, 0, 1, 0, None, 0, 1, 0, 0, 1, 0, 0],
}


def _task_fn() -> None:
    """A throw-away benchmark's task function."""


@pytest.fixture
def policy_logs(tmp_path: Path) -> Iterator[pl.DataFrame]:
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "eval.yaml").write_text(SPEC)
    for name in ("lbpol_zero", "lbpol_drop"):
        registry.register("benchmark", name, _task_fn, folder=folder, task=f"harness/{name}")
    for task in ("lbpol_zero", "lbpol_drop"):
        for model, scores in SCORES.items():
            write_log(tmp_path / "logs", f"{task}-{model[-1]}", model=model, scores=scores,
                      epochs=2, task=task)
    yield read_results(tmp_path / "logs")
    for name in ("lbpol_zero", "lbpol_drop"):
        registry.unregister("benchmark", name)


def _by_hand(values: list[Score], policy: str) -> float:
    kept = [0.0 if v is None else float(v) for v in values if v is not None or policy == "zero"]
    return sum(kept) / len(kept)


@pytest.mark.parametrize(("task", "policy"), [("lbpol_zero", "zero"), ("lbpol_drop", "drop")])
def test_the_same_logs_give_the_same_mean_everywhere(policy_logs: pl.DataFrame, task: str,
                                                     policy: str) -> None:
    frame = policy_logs.filter(pl.col("task") == task)
    expected = {m: _by_hand(v, policy) for m, v in SCORES.items()}
    # the definition
    counted = apply_errored_policy(frame)
    assert set(counted["errored_policy"]) == {policy}
    means = dict(counted.group_by("model").agg(pl.col("score_value").mean()).iter_rows())
    assert means == pytest.approx(expected)
    # the leaderboard's entries and its per-(task, model) CSV
    board = compute(frame, Options(n_boot=50))
    entries = {r["model"]: r for r in board.entries.to_dicts()}
    assert {m: r["score"] for m, r in entries.items()} == pytest.approx(expected)
    assert entries["m/a"]["errors"] == 2 and entries["m/a"]["n"] == 12
    info = board.benchmarks.row(0, named=True)
    assert (info["errored_policy"], info["n_errored"]) == (policy, 3)
    assert info["n_dropped"] == (3 if policy == "drop" else 0)
    legacy = {r["model"]: r for r in leaderboard(frame).to_dicts()}
    assert {m: r["mean"] for m, r in legacy.items()} == pytest.approx(expected)
    assert {r["errored_policy"] for r in legacy.values()} == {policy}
    # the factorial analysis: prepared cells and the fitted marginal means
    prep = prepare(frame, "score_value", ["model"], "sample_id", "gaussian")
    assert dict(prep.cells.select("_f0", "mean").iter_rows()) == pytest.approx(expected)
    assert (prep.errored_policy, prep.n_errored) == (policy, 3)
    result = analyze(frame, response="score_value", factors=["model"], item="sample_id")
    emm = dict(result.marginal_means.select("level", "estimate").iter_rows())
    assert emm == pytest.approx(expected)
    assert result.model["n_dropped"] == (3 if policy == "drop" else 0)
    # the factorial report's cell table (report.json) and its stated policy
    data = report_data(frame, factors=["model"], score_key="acc", family="gaussian")
    cells = {c["levels"]["model"]: c["mean"] for c in data["cell_results"]}
    assert cells == pytest.approx(expected)
    assert (data["data"]["errored_policy"], data["data"]["n_errors"]) == (policy, 3)
    # counted once, before any policy
    assert errored_counts(frame, by=("model",)).sort("model")["n_errored"].to_list() == [2, 1]


def test_a_caller_may_override_the_policy(policy_logs: pl.DataFrame) -> None:
    frame = policy_logs.filter(pl.col("task") == "lbpol_zero")
    board = compute(frame, Options(n_boot=50, errored="drop"))
    scores = {r["model"]: r["score"] for r in board.entries.to_dicts()}
    assert scores == pytest.approx({m: _by_hand(v, "drop") for m, v in SCORES.items()})
    both = compute(policy_logs, Options(n_boot=50, errored={"lbpol_drop": "zero"}))
    assert set(both.benchmarks["errored_policy"]) == {"zero"}
    with pytest.raises(ValueError, match="errored policy"):
        apply_errored_policy(frame, cast(Any, "ignore"))
    once = apply_errored_policy(frame, "zero")
    with pytest.raises(ValueError, match="already has errored policy"):
        apply_errored_policy(once, "drop")


# --------------------------------------------------------------------------- WorldTravel


def _worldtravel_logs(folder: Path) -> None:
    """Two models on three scenarios; one errored sample."""
    values = {"m/a": [(1, 1, 1.0), (1, 0, 0.5), None],
              "m/b": [(1, 0, 0.25), (0, 0, 0.0), (1, 1, 1.0)]}
    ids = ["wt-s0-000", "wt-s0-001", "wt-s0-002"]
    for model, rows in values.items():
        scores = [None if r is None else {"delivered": r[0], "feasible": r[1], "micro": r[2]}
                  for r in rows]
        path = write_log(folder, model[-1], model=model, scores=cast(Any, scores),
                         task="worldtravel", scorer="worldtravel_checker", ids=ids,
                         task_args={"constraints": "hidden"})
        log = json.loads(path.read_text())
        for k, sample in enumerate(log["samples"]):
            sample["metadata"] = {"n_constraints": 5 + 10 * k}
        path.write_text(json.dumps(log))


def test_worldtravel_report_board_and_analysis_agree(tmp_path: Path) -> None:
    from benchmarks.worldtravel import report
    from benchmarks.worldtravel.worldtravel import worldtravel  # registers the benchmark

    assert worldtravel is not None
    _worldtravel_logs(tmp_path)
    frame = read_results(tmp_path)
    board = compute(frame, Options(n_boot=50))
    info = board.benchmarks.row(0, named=True)
    assert info["score_key"] == "worldtravel_checker/feasible"  # eval.yaml's headline
    assert (info["errored_policy"], info["n_errored"]) == ("zero", 1)
    on_board = {r["model"]: r["score"] for r in board.entries.to_dicts()}
    rows = report.summary(report.per_sample([tmp_path]))
    in_report = {r["model"]: r["feasible"][0] for r in rows}
    feasible = frame.filter(pl.col("score_key") == "worldtravel_checker/feasible")
    emm = analyze(feasible, response="score_value", factors=["model"], item="sample_id")
    in_analysis = dict(emm.marginal_means.select("level", "estimate").iter_rows())
    expected = {"m/a": 1 / 3, "m/b": 1 / 3}  # m/a's errored sample scores 0
    assert on_board == pytest.approx(expected)
    assert in_report == pytest.approx(expected)
    assert in_analysis == pytest.approx(expected)
    assert {r["model"]: r["errored"] for r in rows} == {"m/a": 1, "m/b": 0}
    assert "Errored samples: 1, scored 0 (policy zero)." in report.markdown(rows)


# --------------------------------------------------------------------------- minimised


def _bound_logs(folder: Path) -> None:
    """first_autocorrelation: one sample, 2 epochs; objective minimised, gap maximised."""
    runs: dict[str, list[tuple[float, float] | None]] = {
        "m/good": [(1.55, 0.5), (1.56, 0.45)],
        "m/bad": [(1.90, 0.05), (1.95, 0.02)],
        "m/partial": [(1.60, 0.3), None],
        "m/broken": [None, None],
    }
    for model, rows in runs.items():
        scores = [None if r is None else {"objective": r[0], "gap_closed": r[1]} for r in rows]
        write_log(folder, model[2:], model=model, scores=cast(Any, scores), epochs=2,
                  task="first_autocorrelation", scorer="verified_objective",
                  ids=["first_autocorrelation"])


@pytest.fixture
def bound_board(tmp_path: Path) -> dict[str, Path]:
    from benchmarks.open_problems.open_problems import first_autocorrelation  # registers it

    assert first_autocorrelation is not None
    _bound_logs(tmp_path / "logs")
    return build(tmp_path / "logs", tmp_path / "out", Options(n_boot=100))


def test_a_minimised_bound_ranks_ascending_and_errors_never_win(
        bound_board: dict[str, Path]) -> None:
    doc = json.loads(bound_board["json"].read_text())
    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
    [bench] = doc["benchmarks"]
    assert bench["score_key"] == "verified_objective/objective"
    assert bench["lower_is_better"] is True and bench["errored_policy"] == "drop"
    assert (bench["n_errored"], bench["n_dropped"]) == (3, 3)
    ranked = [(e["model"], e["rank"], e["score"]) for e in bench["entries"]]
    assert [m for m, _, _ in ranked] == ["m/good", "m/partial", "m/bad", "m/broken"]
    assert ranked[0][1] == 1 and ranked[0][2] == pytest.approx(1.555)
    assert ranked[1][2] == pytest.approx(1.60)  # the errored epoch left out, not scored 0
    assert ranked[3][1] == 4 and ranked[3][2] is None  # nothing real: ranks last, no score
    assert all(e["errors"] == {"m/partial": 1, "m/broken": 2}.get(e["model"], 0)
               for e in bench["entries"])
    wins = {r["model"]: r["mean_win_rate"] for r in doc["overall"]}
    assert wins["m/good"] == 1.0 and wins["m/broken"] == 0.0
    md = bound_board["md"].read_text()
    assert "(lower is better: verified upper bound" in md
    assert "errored samples are left out (3 errored)" in md
    page = (bound_board["site"].parent / "first_autocorrelation.html").read_text()
    assert "lower is better: rank 1 is the lowest mean" in page


def test_the_eee_export_writes_the_true_direction(bound_board: dict[str, Path]) -> None:
    records = [json.loads(p.read_text()) for p in sorted(bound_board["eee"].glob("*.json"))]
    assert len(records) == 3  # m/broken has no score to export
    for record in records:
        metric = record["evaluation_results"][0]["metric_config"]
        assert metric["lower_is_better"] is True
        assert "errored samples are left out" in metric["evaluation_description"]
    if EEE_SCHEMA.exists():
        validator = jsonschema.Draft7Validator(json.loads(EEE_SCHEMA.read_text()))
        for record in records:
            assert not list(validator.iter_errors(record))


def test_zero_is_refused_on_a_minimised_bound_and_headline_override_flips_direction(
        tmp_path: Path) -> None:
    from benchmarks.open_problems.open_problems import first_autocorrelation

    assert first_autocorrelation is not None
    _bound_logs(tmp_path)
    frame = read_results(tmp_path)
    with pytest.raises(ValueError, match="lower-is-better"):
        compute(frame, Options(n_boot=50, errored="zero"))
    gap = compute(frame, Options(n_boot=50, headline={
        "first_autocorrelation": "verified_objective/gap_closed"}))
    info = gap.benchmarks.row(0, named=True)
    assert info["lower_is_better"] is False
    assert gap.entries["model"].to_list()[:3] == ["m/good", "m/partial", "m/bad"]
    records = eee_records(gap, tmp_path)
    assert {r["evaluation_results"][0]["metric_config"]["lower_is_better"]
            for r in records} == {False}


def test_pairwise_colours_follow_the_direction() -> None:
    lower = {"ci_lo": -0.4, "ci_hi": -0.1}  # row minus column < 0: the row is lower
    assert _cell_class(lower) == "loss" and _cell_class(lower, lower_is_better=True) == "win"
