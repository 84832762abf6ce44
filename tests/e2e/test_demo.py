"""The demo pipeline end to end (logs -> leaderboard -> factorial report) on the tiny study."""

import json
from pathlib import Path

import polars as pl
import pytest
from rich.console import Console

from harness.demo import run_demo
from harness.results import read_results

pytestmark = pytest.mark.serial  # the whole demo: minutes of both cores (CI runs it alone)

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "harness" / "factorial" / "examples" / "tiny_study.yaml"


@pytest.mark.slow
def test_demo_writes_logs_leaderboard_and_report(tmp_path: Path) -> None:
    console = Console(record=True, width=120)
    paths = run_demo(tmp_path, console=console, study=TINY, quick=True)
    for key in ("logs", "leaderboard_csv", "leaderboard_md", "report_json", "report_html",
                "report_markdown"):
        assert paths[key].exists(), key
    frame = read_results(paths["logs"])
    board = pl.read_csv(paths["leaderboard_csv"])
    # the leaderboard's means are the frame's means of its headline, per model (arithmetic
    # counts an errored sample as 0: its eval.yaml)
    for row in board.iter_rows(named=True):
        assert row["errored_policy"] == "zero"
        got = frame.filter((pl.col("model") == row["model"])
                           & (pl.col("score_key") == row["score_key"]))["score_value"]
        assert row["mean"] == got.fill_null(0).mean()
    report = json.loads(paths["report_json"].read_text())
    assert {r["term"] for r in report["analysis"]["anova"]} >= {"model"}
    # the study file kept with the logs sets the analysis (auto -> binomial for 0/1 scores)
    # and the identification statements (no causal graph: every factor set by design)
    assert report["response"]["family"] == "binomial"
    assert report["response"]["item_mode"] == "cluster"
    assert {r["factor"]: r["status"] for r in report["identification"]} == {
        "model": "identified", "intervention": "identified"}
    # a second run resumes: nothing is evaluated again
    again = run_demo(tmp_path, console=console, study=TINY, quick=True)
    assert len(read_results(again["logs"])) == len(frame)
    assert "0 failed" in console.export_text()


@pytest.mark.slow
def test_full_demo_runs_a_board_then_a_study(tmp_path: Path) -> None:
    """The full demo's three steps on a scripted two-benchmark board and the tiny study."""
    board_file = tmp_path / "board.yaml"
    board_file.write_text("""
log_root: ignored
board:
  headline: {worldtravel: worldtravel_checker/feasible}
runs:
  - name: worldtravel
    task: benchmarks/worldtravel
    sample_ids: [wt-s0-000, wt-s0-003]
    models: [scripted/worldtravel-oracle, scripted/worldtravel-random]
  - name: causalgame
    task: benchmarks/causalgame
    args: {epochs: 1, scenarios: antenna_trap, sandbox: none}
    agents: [benchmarks/causalgame/agents.py@oracle]
  - name: formulacode
    task: benchmarks/formulacode
    needs: no-such-part
    agents: [benchmarks/formulacode/agents.py@oracle]
""")
    console = Console(record=True, width=160)
    paths = run_demo(tmp_path / "out", console=console, study=TINY, board=board_file)
    board = json.loads(paths["leaderboard_json"].read_text())
    by_name = {b["name"]: b for b in board["benchmarks"]}
    assert set(by_name) == {"worldtravel", "causalgame"}
    worldtravel = {e["model"]: e["score"] for e in by_name["worldtravel"]["entries"]}
    assert worldtravel["scripted/worldtravel-oracle"] == 1.0
    assert paths["report_json"].exists()
    text = console.export_text()
    assert "formulacode / benchmarks/formulacode/agents.py@oracle: skipped" in text
    # the board does not promise what it does not hold: its title names what was skipped
    title = paths["leaderboard_md"].read_text().splitlines()[0]
    assert title.endswith("(without formulacode: unknown requirement 'no-such-part')"), title
    assert "skipped formulacode: unknown requirement 'no-such-part'" in text
