"""Each benchmark's rows of the ladder board, written into its README's Evaluation Report.

    python -m leaderboards.runs.readme_tables leaderboards/ladder/site/leaderboard.json      # print
    harness leaderboard readme-tables leaderboards/ladder/site/leaderboard.json --write

Why: every benchmark README carries the ladder's rows from the same board (one source of
numbers). ``--write`` replaces the block between ``<!-- ladder-board:start -->`` and
``<!-- ladder-board:end -->`` in each benchmark's README (inserted right after its
``## Evaluation Report`` heading the first time), with the command, the subset, the
versions and each run's wall time from the board's ``runs.jsonl``.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
START, END = "<!-- ladder-board:start -->", "<!-- ladder-board:end -->"
READMES = {
    "causalgame": "benchmarks/causalgame/README.md",
    "causalgame_all": "benchmarks/causalgame/README.md",  # its name in logs before 1.1.0
    "worldtravel": "benchmarks/worldtravel/README.md",
    "worldtravel_webscape": "benchmarks/worldtravel_webscape/README.md",
    "formulacode": "benchmarks/formulacode/README.md",
    "medversa": "benchmarks/medversa/README.md",
    "circle_packing": "benchmarks/open_problems/README.md",
    "first_autocorrelation": "benchmarks/open_problems/README.md",
}


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def section(bench: dict[str, Any]) -> str:
    """One benchmark's entries: score with CI, n, errors, tool calls, tokens, time."""
    from leaderboards.build import headline_line

    head = headline_line(bench)
    lines = [f"`{bench['name']}`: {head[0].lower()}{head[1:]}",
             "",
             "| model | agent | setup | score | 95% CI | normalised | n | errors | "
             "tool calls/sample | valid calls | tokens/sample | s/sample |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in bench["entries"]:
        na = f" (+{e['n_na']} N/A)" if e.get("n_na") else ""  # no value, left out of the mean
        lines.append(
            f"| {e['model']} | {e['agent']} | {e['setup']} | {_num(e['score'])} | "
            f"[{_num(e['ci_lo'])}, {_num(e['ci_hi'])}] | {_num(e.get('normalised'))} | "
            f"{e['n']} | {e['errors']}{na} | {_num(e.get('tool_calls_per_sample'), 1)} | "
            f"{_num(e.get('tool_call_valid_rate'))} | {_num(e['tokens_per_sample'], 0)} | "
            f"{_num(e['time_per_sample'], 1)} |")
    return "\n".join(lines)


def _walls(journal: Path, name: str) -> str:
    if not journal.is_file():
        return ""
    runs = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    # the journal only grows: a rerun of the same command (same log folder) supersedes the
    # earlier entry, so each command is reported once, with its latest successful run
    latest = {r["command"]: r for r in runs if r["name"] == name and r["exit"] == 0}
    mine = sorted(latest.values(), key=runs.index)
    return "; ".join(f"{r['label']} {r['wall_s']:.0f} s (load {r['load_avg']:.1f})"
                     for r in mine)


def block(benches: list[dict[str, Any]], journal: Path, run_name: str) -> str:
    """The README block for one benchmark folder."""
    versions = (f"inspect_ai {version('inspect_ai')}, llama-cpp-python "
                f"{version('llama_cpp_python')}, transformers {version('transformers')}")
    parts = [START, "### The model ladder (the cross-benchmark board)", "",
             "From `leaderboards/ladder/site/` (run file `leaderboards/ladder/board.yaml`, "
             "which names the subset, seeds and limits; rerun with "
             "`harness leaderboard run leaderboards/ladder/board.yaml --only "
             f"{run_name}`, rebuild with `--build leaderboards/ladder/site`). {versions}; "
             "2 cores. Errored samples count as each benchmark's eval.yaml says (stated "
             "below) and are counted in `errors`; CIs are clustered by item: Wilson "
             "intervals on the effective sample size for 0/1 scores, t intervals otherwise "
             "(— with one item).", ""]
    for bench in benches:
        parts += [section(bench), ""]
    walls = _walls(journal, run_name)
    if walls:
        parts += [f"Wall time per run: {walls}.", ""]
    parts.append(END)
    return "\n".join(parts)


def write(doc: dict[str, Any], journal: Path) -> list[Path]:
    """Update every benchmark README the board covers; returns the files written."""
    by_readme: dict[str, list[dict[str, Any]]] = {}
    for bench in doc["benchmarks"]:
        if bench["name"] in READMES:
            by_readme.setdefault(READMES[bench["name"]], []).append(bench)
    written = []
    for rel, benches in by_readme.items():
        path = REPO / rel
        run_name = "open_problems" if "open_problems" in rel else rel.split("/")[1]
        text = path.read_text()
        new = block(benches, journal, run_name)
        if START in text:
            head, rest = text.split(START, 1)
            text = head + new + rest.split(END, 1)[1]
        else:
            heading = "## Evaluation Report\n"
            at = text.index(heading) + len(heading)
            text = text[:at] + "\n" + new + "\n" + text[at:]
        path.write_text(text)
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: harness leaderboard readme-tables BOARD/leaderboard.json [--write]\n"
              "Print each benchmark's README table from a board (--write: into the READMEs).")
        return 0 if argv else 2
    board = Path(argv[0])
    doc = json.loads(board.read_text())
    if "--write" in argv:
        journal = REPO / "leaderboards" / "ladder" / "logs" / "runs.jsonl"
        for path in write(doc, journal):
            print(f"wrote {path}")
        return 0
    for bench in doc["benchmarks"]:
        print(f"{section(bench)}\n")
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    sys.exit(guarded(lambda: main(sys.argv[1:])))
