"""``harness compare`` on committed logs: a run against itself, and the board's pairwise row.

The board (``leaderboards/ladder/site/pairwise.csv``, built by ``harness leaderboard
build``) is the published reference: a comparison of the same two runs must give the same
paired difference, standard error and t interval (the board's ``a - b`` is compare's
``B - A`` with B the board's ``a``).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.compare import CompareRefused, compare, compare_paths, load_run, to_html

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "leaderboards" / "ladder" / "logs"
PAIRWISE = ROOT / "leaderboards" / "ladder" / "site" / "pairwise.csv"
MED_NONE = LOGS / "medversa" / "single-none--whitebox_qwen2.5-coder-0.5b"
MED_RETR = LOGS / "medversa" / "single-retrieval--whitebox_qwen2.5-coder-0.5b"
WT = LOGS / "worldtravel"


def _board_row(bench: str, a_has: str, b_has: str) -> dict:
    rows = pl.read_csv(PAIRWISE).filter(
        (pl.col("benchmark") == bench) & pl.col("a").str.contains(a_has, literal=True)
        & pl.col("b").str.contains(b_has, literal=True))
    assert rows.height == 1, rows
    return rows.row(0, named=True)


def test_a_run_against_itself_has_no_flip_and_a_difference_of_exactly_zero() -> None:
    result = compare_paths(MED_NONE, MED_NONE)
    assert result.n_paired == 100
    for metric in result.metrics:
        assert metric["difference"] == 0.0
        assert metric["flipped_up"] == metric["flipped_down"] == 0
        lo, hi = metric["ci"]
        if metric["binary"]:  # no flip in 100 pairs still allows a small difference
            assert lo == -hi and 0 < hi < 0.04
        else:
            assert lo == hi == 0.0
        assert metric["p"] == 1.0
        assert metric["items"] == []
    assert "no difference" in result.verdict
    assert not [w for w in result.warnings if "differ" in w]


def test_reproduces_the_published_boards_pairwise_row_continuous() -> None:
    row = _board_row("medversa", "editor=none, protocol=single",
                     "editor=retrieval, protocol=single")
    result = compare_paths(MED_RETR, MED_NONE, metrics=["medversa_scorer/efficacy"])
    [metric] = result.metrics
    assert metric["n_items"] == row["n_pairs"] == 100
    assert metric["difference"] == pytest.approx(row["diff"], rel=1e-12)
    assert metric["se"] == pytest.approx(row["se"], rel=1e-12)
    assert metric["ci_t"] == pytest.approx([row["ci_lo"], row["ci_hi"]], rel=1e-12)
    # B (no editor) scored lower on 99 items: the verdict says worse, with the sizes
    assert metric["flipped_down"] == 99 and metric["flipped_up"] == 0
    assert result.verdict.startswith("medversa_scorer/efficacy: B worse by 0.761")
    lo, hi = metric["ci"]
    assert lo < metric["difference"] < hi < 0


def test_reproduces_a_binary_board_row_with_mcnemar() -> None:
    oracle = WT / "worldtravel--scripted_worldtravel-oracle"
    small = WT / "worldtravel--embedded_qwen2.5-coder-0.5b"
    row = _board_row("worldtravel", "scripted/worldtravel-oracle", "embedded/qwen2.5-coder-0.5b")
    result = compare_paths(small, oracle, metrics=["worldtravel_checker/feasible"])
    [metric] = result.metrics
    assert metric["difference"] == pytest.approx(row["diff"], rel=1e-12)
    assert metric["n_items"] == row["n_pairs"]
    assert metric["binary"] and metric["test"] == "exact McNemar"
    up = metric["flipped_up"]
    assert up == round(row["diff"] * row["n_pairs"]) and metric["flipped_down"] == 0
    assert metric["p"] == pytest.approx(2 * 0.5 ** up)  # every discordant pair one way


def test_json_contract_and_holm(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["compare", str(MED_RETR), str(MED_NONE), "--json",
                                   "--html", str(tmp_path / "c.html")])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert {"a", "b", "n_paired", "metrics", "verdict"} <= set(data)
    assert data["n_paired"] == 100
    required = {"name", "difference", "ci", "p", "p_holm", "mdd", "flipped_up", "flipped_down"}
    for metric in data["metrics"]:
        assert required <= set(metric)
        assert metric["p_holm"] >= metric["p"]
    ps = [m["p"] for m in data["metrics"]]
    smallest = min(range(len(ps)), key=ps.__getitem__)
    assert data["metrics"][smallest]["p_holm"] == pytest.approx(
        min(1.0, len(ps) * ps[smallest]))
    page = (tmp_path / "c.html").read_text()
    assert "inspect view --log-dir" in page
    assert "What postmortem phenomenon" in page  # a flipped item's input
    assert "Cutis cervicalis" in page  # its target


def test_refuses_runs_without_shared_items() -> None:
    a = load_run(MED_NONE)
    b = load_run(MED_RETR)
    b.frame = b.frame.with_columns(("x" + pl.col("sample_id")).alias("sample_id"))
    with pytest.raises(CompareRefused, match="share no items"):
        compare(a, b)


def test_refuses_runs_that_differ_in_scorer() -> None:
    a = load_run(MED_NONE)
    b = load_run(MED_RETR)
    b.specs = [{**s, "scorers": [{**sc, "options": {"strict": True}}
                                 for sc in s.get("scorers") or []]} for s in b.specs]
    with pytest.raises(CompareRefused, match="differ in scorer: medversa_scorer has options"):
        compare(a, b)
    c = load_run(WT / "worldtravel--scripted_worldtravel-oracle")
    with pytest.raises(CompareRefused, match="share no items|differ in scorer"):
        compare(a, c)


@pytest.mark.slow  # a fresh interpreter: the CLI's own error handling, exit code 2
def test_cli_refusal_is_one_line() -> None:
    done = subprocess.run([sys.executable, "-m", "harness.cli", "compare", str(MED_NONE),
                           str(WT / "worldtravel--scripted_worldtravel-oracle")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    first, *rest = done.stderr.strip().splitlines()
    assert first.startswith("error: A and B share no items")
    assert all("--debug" in line for line in rest)  # only the hint follows, no traceback


def test_html_escapes_and_lists_both_answers() -> None:
    result = compare_paths(MED_RETR, MED_NONE, metrics=["medversa_scorer/efficacy"])
    page = to_html(result)
    item = result.metrics[0]["items"][0]
    assert item["answer_a"] != item["answer_b"]
    assert "&#x27;efficacy_pred&#x27;" in page  # the answers' quotes escaped, not raw
    assert not math.isnan(result.metrics[0]["mdd"])
