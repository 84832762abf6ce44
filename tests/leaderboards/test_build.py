"""Leaderboard tables from a results frame: means, clustered CIs, errors counted."""

import polars as pl

from leaderboards.build import leaderboard, to_markdown


def _frame() -> pl.DataFrame:
    rows = []
    runs: dict[str, list[int | None]] = {"m/good": [1, 1, 1, 0], "m/bad": [0, 0, None, 1]}
    for model, scores in runs.items():
        for i, s in enumerate(scores):
            rows.append({"task": "t", "model": model, "score_key": "acc", "sample_id": str(i),
                         "score_value": None if s is None else float(s),
                         "error": "boom" if s is None else None})
    return pl.DataFrame(rows)


def test_rows_are_sorted_best_first_with_errors_scored_zero() -> None:
    table = leaderboard(_frame())
    assert table["model"].to_list() == ["m/good", "m/bad"]
    bad = table.row(1, named=True)
    assert bad["errors"] == 1 and bad["n"] == 4
    assert bad["mean"] == 0.25  # the errored sample counts as 0, it is not dropped
    for row in table.iter_rows(named=True):
        assert 0.0 <= row["ci_lo"] <= row["mean"] <= row["ci_hi"] <= 1.0


def test_markdown_has_one_line_per_model() -> None:
    md = to_markdown(leaderboard(_frame()))
    assert md.count("\n") == 4 and "m/good" in md and "[0." in md
