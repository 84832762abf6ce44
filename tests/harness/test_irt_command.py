"""``harness irt``: the results frame as a subjects x items matrix, and the command on a
committed study's logs (issue 51 item 7)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.errors import UserInputError
from harness.irt import response_matrix
from harness.results import SCHEMA

ROOT = Path(__file__).resolve().parents[2]


def frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    """A results frame with the given columns set and the rest null."""
    full = [{c: r.get(c) for c in SCHEMA} for r in rows]
    return pl.DataFrame(full, schema=SCHEMA)


def row(model: str, sample: str, value: float | None, epoch: int = 1,
        key: str = "acc", error: str | None = None, cell: str = "x") -> dict[str, object]:
    return {"model": model, "solver": "generate", "task": "t", "sample_id": sample,
            "epoch": epoch, "score_key": key, "scorer": key, "score_value": value,
            "error": error, "eval_metadata": json.dumps({"cell_id": cell})}


def test_matrix_averages_epochs_and_marks_not_run() -> None:
    rows = [row("m1", "a", 1.0), row("m1", "a", 0.0, epoch=2), row("m1", "b", 1.0),
            row("m2", "a", 0.0), row("m1", "a", 0.3, key="other")]
    matrix = response_matrix(frame(rows), "acc")
    assert matrix.items == ["t/a", "t/b"]
    assert matrix.subjects == ["m1", "m2"]
    np.testing.assert_allclose(matrix.values, [[0.5, 1.0], [0.0, np.nan]])


def test_matrix_counts_errors_by_policy() -> None:
    rows = [row("m1", "a", 1.0), row("m1", "b", None, error="boom"), row("m2", "a", 0.0),
            row("m2", "b", 1.0)]
    zero = response_matrix(frame(rows), "acc", errored="zero")
    drop = response_matrix(frame(rows), "acc", errored="drop")
    assert zero.values[0, 1] == 0.0
    assert np.isnan(drop.values[0, 1])


def test_matrix_refuses_scores_outside_unit_interval_and_ambiguous_keys() -> None:
    with pytest.raises(UserInputError, match=r"\[0, 1\]"):
        response_matrix(frame([row("m1", "a", 3.0), row("m2", "a", 1.0)]), "acc")
    two = [row("m1", "a", 0.5), row("m1", "a", 0.3, key="other")]
    with pytest.raises(UserInputError, match="--score-key"):
        response_matrix(frame(two))


def test_labels_name_the_metadata_that_differs() -> None:
    rows = [row("m1", "a", 1.0, cell="c1"), row("m1", "a", 0.0, cell="c2")]
    for r, level in zip(rows, ("on", "off"), strict=True):
        r["eval_metadata"] = json.dumps({"cell_id": r["eval_metadata"], "factors":
                                         {"editor": level, "model": "m1"}})
    assert response_matrix(frame(rows), "acc").subjects == ["editor=on", "editor=off"]


@pytest.mark.slow
def test_irt_command_on_committed_study_logs() -> None:
    logs = ROOT / "methods/studies/rl_pmd/logs"
    result = CliRunner().invoke(app, ["irt", str(logs), "--score-key", "pass_at_k/pass_at_k",
                                      "--anchors", "10", "--folds", "7", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["n_subjects"], report["n_items"]) == (21, 64)
    # abilities order subjects as their means do, up to items that weigh differently
    ability = [s["ability"] for s in report["subjects"]]
    mean = [s["mean"] for s in report["subjects"]]
    assert np.corrcoef(ability, mean)[0, 1] > 0.95
    assert all(s["ci"][0] < s["ability"] < s["ci"][1] for s in report["subjects"])
    assert len(report["anchors"]) == 10
    assert sum(a["weight"] for a in report["anchors"]) == pytest.approx(1.0, abs=1e-3)
    assert set(report["holdout"]["mae"]) == {"anchor", "irt", "random"}
