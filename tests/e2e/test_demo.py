"""The demo pipeline end to end (logs -> leaderboard -> factorial report) on the tiny study."""

import json
from pathlib import Path

import polars as pl
from rich.console import Console

from harness.demo import run_demo
from harness.results import read_results

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "harness" / "factorial" / "examples" / "tiny_study.yaml"


def test_demo_writes_logs_leaderboard_and_report(tmp_path: Path) -> None:
    console = Console(record=True, width=120)
    paths = run_demo(tmp_path, console=console, study=TINY)
    for key in ("logs", "leaderboard_csv", "leaderboard_md", "report_json", "report_html",
                "report_markdown"):
        assert paths[key].exists(), key
    frame = read_results(paths["logs"])
    board = pl.read_csv(paths["leaderboard_csv"])
    # the leaderboard's means are the frame's means, per model
    for row in board.iter_rows(named=True):
        got = frame.filter(pl.col("model") == row["model"])["score_value"].fill_null(0).mean()
        assert row["mean"] == got
    report = json.loads(paths["report_json"].read_text())
    assert {r["term"] for r in report["analysis"]["anova"]} >= {"model"}
    # the study file kept with the logs sets the analysis (auto -> binomial for 0/1 scores)
    # and the identification statements (no causal graph: every factor set by design)
    assert report["response"]["family"] == "binomial"
    assert report["response"]["item_mode"] == "cluster"
    assert {r["factor"]: r["status"] for r in report["identification"]} == {
        "model": "identified", "intervention": "identified"}
    # a second run resumes: nothing is evaluated again
    again = run_demo(tmp_path, console=console, study=TINY)
    assert len(read_results(again["logs"])) == len(frame)
    assert "0 failed" in console.export_text()
