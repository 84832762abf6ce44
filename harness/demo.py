"""``harness demo``: the suite end to end in about ten minutes on a CPU.

1. The five benchmarks, each on a small slice, with their reference agents and the default
   ladder model (Qwen2.5-Coder-0.5B-Instruct): the run file
   ``leaderboards/demo/board.yaml`` (a benchmark whose machine part is missing, e.g.
   FormulaCode without a Docker engine, is skipped and says so).
2. The cross-benchmark leaderboard from those logs.
3. A factorial study with model size as a factor (SmolLM2-135M vs Qwen2.5-Coder-0.5B x two
   held-out corpora, code and prose, in bits per byte: a continuous response on 32 paired
   windows, so the design can detect the rungs' difference), and its report with the verdict
   computed on its scaling claim (``methods/studies/model_size_demo``).

``harness demo --quick`` runs only the arithmetic example study (one benchmark, a real
135M model and two scripted agents) with its leaderboard and report. Reruns resume: runs and
cells that finished are not run again.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console

EXAMPLE_STUDY = Path(__file__).parents[1] / "methods" / "studies" / "arithmetic_demo" / "study.yaml"
MODEL_SIZE_STUDY = (Path(__file__).parents[1] / "methods" / "studies" / "model_size_demo"
                    / "study.yaml")
DEMO_BOARD = Path(__file__).parents[1] / "leaderboards" / "demo" / "board.yaml"


def run_demo(out: Path, console: Console, study: Path | None = None,
             quick: bool = False, board: Path = DEMO_BOARD) -> dict[str, Path]:
    """The demo into ``out`` (``board``: the run file of step 1, ``study``: the study of step
    3); returns the paths it printed."""
    if quick:
        return run_study_demo(out, console, study or EXAMPLE_STUDY)
    import yaml

    from harness.factorial.report import build_report
    from harness.factorial.run import run_study
    from leaderboards.runs.__main__ import build_board, expand, run_all

    started = time.perf_counter()
    board_logs = out / "logs" / "board"
    spec = yaml.safe_load(board.read_text())
    console.rule("1/3  five benchmarks: reference agents and the 0.5B model")
    outcomes = run_all(expand(spec, board_logs), board_logs / "runs.jsonl",
                       echo=lambda line: console.print(line, markup=False, soft_wrap=True))
    skipped = sorted({run.name for run, outcome in outcomes if outcome.startswith("skipped")})
    if skipped:  # the board's title must not promise what it does not hold
        why = next(o for _, o in outcomes if o.startswith("skipped")).removeprefix("skipped: ")
        board_options = dict(spec.get("board") or {})
        board_options["title"] = (f"{board_options.get('title', 'Leaderboard')} "
                                  f"(without {', '.join(skipped)}: {why})")
        spec = {**spec, "board": board_options}
        console.print(f"skipped {', '.join(skipped)}: {why}", markup=False)
    console.rule("2/3  cross-benchmark leaderboard")
    built = build_board(spec, out / "leaderboard", board_logs)
    console.print(built["md"].read_text(), soft_wrap=True, markup=False)
    console.rule("3/3  factorial study: model size x corpus (bits per byte)")
    display = "rich" if console.is_terminal else "plain"
    study_logs = out / "logs" / "study"
    summary = run_study(study or MODEL_SIZE_STUDY, log_dir=study_logs, display=display)
    console.print(f"ran {len(summary.ran)} cells, {len(summary.skipped)} already complete, "
                  f"{len(summary.failed)} failed")
    report = build_report(study_logs, out / "report")
    console.rule(f"done in {time.perf_counter() - started:.0f} s")
    for run, outcome in outcomes:
        if outcome.startswith(("skipped", "failed")):
            console.print(f"{run.name} / {run.label}: {outcome}", markup=False)
    paths = {"logs": out / "logs", **{f"leaderboard_{k}": v for k, v in built.items()},
             **{f"report_{k}": v for k, v in report.items()}}
    for name, path in paths.items():
        console.print(f"{name:>18}: {path}")
    console.print(f"\nbrowse the logs with: inspect view --log-dir {out / 'logs'}")
    return paths


def run_study_demo(out: Path, console: Console, study: Path = EXAMPLE_STUDY) -> dict[str, Path]:
    """Run one study into ``out/logs``; write ``out/leaderboard`` and ``out/report``."""
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
