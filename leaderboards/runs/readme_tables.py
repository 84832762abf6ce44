"""Print each benchmark's section of a built board as Markdown, for its README.

    python -m leaderboards.runs.readme_tables leaderboards/published/leaderboard.json

Why: every benchmark README's Evaluation Report carries the ladder's rows from the same
board (one source of numbers); this prints them per benchmark in a compact table.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def section(bench: dict[str, Any]) -> str:
    """One benchmark's entries: score with CI, n, errors, tool calls, tokens, time."""
    lines = [f"Headline `{bench['score_key']}`; {bench['n_items']} items.", "",
             "| model | agent | setup | score | 95% CI | normalised | n | errors | "
             "tool calls/sample | valid calls | tokens/sample | s/sample |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in bench["entries"]:
        lines.append(
            f"| {e['model']} | {e['agent']} | {e['setup']} | {_num(e['score'])} | "
            f"[{_num(e['ci_lo'])}, {_num(e['ci_hi'])}] | {_num(e.get('normalised'))} | "
            f"{e['n']} | {e['errors']} | {_num(e.get('tool_calls_per_sample'), 1)} | "
            f"{_num(e.get('tool_call_valid_rate'))} | {_num(e['tokens_per_sample'], 0)} | "
            f"{_num(e['time_per_sample'], 1)} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    doc = json.loads(Path(argv[0]).read_text())
    for bench in doc["benchmarks"]:
        print(f"## {bench['name']}\n\n{section(bench)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
