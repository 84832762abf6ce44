"""``harness demo``: the suite end to end in a few minutes on a CPU.

It runs the shipped example study (the arithmetic benchmark x {the embedded SmolLM2 model,
two scripted reference agents} x {two prompt styles} x {an instance-level intervention on or
off}) through Inspect, then builds a leaderboard and a factorial report from those same
logs, and prints where each lies. A rerun resumes: finished cells are not run again.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console

EXAMPLE_STUDY = Path(__file__).parent / "factorial" / "examples" / "arithmetic_study.yaml"


def run_demo(out: Path, console: Console, study: Path = EXAMPLE_STUDY) -> dict[str, Path]:
    """Run the example study into ``out/logs``; write ``out/leaderboard`` and ``out/report``."""
    from harness.factorial.report import build_report
    from harness.factorial.run import run_study
    from leaderboards.build import build as build_leaderboard

    log_dir = out / "logs"
    started = time.perf_counter()
    console.rule("1/3  evaluating (Inspect eval_set; a rerun resumes)")
    # Inspect's own progress display: live bars in a terminal, plain lines in CI
    display = "rich" if console.is_terminal else "plain"
    summary = run_study(study, log_dir=log_dir, display=display)
    if summary.plan is not None:
        console.print(summary.plan.table())
    console.print(f"ran {len(summary.ran)} cells, {len(summary.skipped)} already complete, "
                  f"{len(summary.failed)} failed")
    console.rule("2/3  leaderboard")
    board = build_leaderboard(log_dir, out / "leaderboard")
    console.print(board["md"].read_text(), soft_wrap=True, markup=False)
    console.rule("3/3  factorial report")
    report = build_report(log_dir, out / "report")
    elapsed = time.perf_counter() - started
    console.rule(f"done in {elapsed:.0f} s")
    paths = {"logs": log_dir, **{f"leaderboard_{k}": v for k, v in board.items()},
             **{f"report_{k}": v for k, v in report.items()}}
    for name, path in paths.items():
        console.print(f"{name:>18}: {path}")
    console.print(f"\nbrowse the logs with: inspect view --log-dir {log_dir}")
    return paths
