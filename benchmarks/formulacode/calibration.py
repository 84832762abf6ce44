"""Each task's speedup in both measures, side by side (issue 46, item 4).

A cycles run and the committed quiet-host clock run (``methods/studies/formulacode_acceptance/
logs/pack25_quiet/validate_pack25_quiet.json``:
process CPU time for today's cycles tasks, wall clock for the wall tasks, on 2 idle cores)
give each task's oracle speedup twice. Where they differ by more than 10% the task is
flagged: the cycle estimate (Ir + 10 L1 + 100 LL misses, a fixed cache model) does not
weigh that task's work as this machine's clock does. The table is the benchmark's data
(``benchmarks/formulacode/calibration.json``, written by the command below), the README
shows it, and the scorer copies a task's entry into its score metadata
(``measure_calibration``) so a reader of one score sees it.

    harness formulacode calibration CYCLES_RUN.json QUIET_RUN.json [OUT.json]
        [--expert-changed SLUG,...]

``--expert-changed`` names tasks whose expert patch changed after the quiet run (quantile,
pack 2.3): the clock column then timed another patch, so their row keeps both numbers but
no ratio and no flag (``quiet_clock_stale``), instead of comparing two different changes.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

#: the committed calibration the scorer reads (the cycles acceptance run against the quiet run)
CURRENT = Path(__file__).parent / "calibration.json"
FLAG_AT = 0.10


def slug(task_id: str) -> str:
    """``evalsuite-pack_topk_13`` -> ``topk`` (the pack's task ids)."""
    parts = task_id.split("_")
    return "_".join(parts[1:-1]) if len(parts) >= 3 else task_id


def compare(cycles_run: dict[str, Any], quiet_run: dict[str, Any],
            flag_at: float = FLAG_AT,
            expert_changed: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """Per pack slug: the oracle speedup under each measure, their ratio, and the flag
    (``|cycles / clock - 1| > flag_at``); tasks missing from either run have ``None``, and
    so does the ratio of a task in ``expert_changed`` (its clock run timed an older expert
    patch, so the two numbers measure different code)."""
    quiet = {slug(t): r for t, r in (quiet_run.get("tasks") or {}).items()}
    out: dict[str, dict[str, Any]] = {}
    for task_id, row in sorted((cycles_run.get("tasks") or {}).items()):
        name = slug(task_id)
        clock = quiet.get(name) or {}
        cyc = row.get("oracle_speedup") if row.get("timer") == "cycles" else None
        if row.get("infra_failure"):
            cyc = None
        wall = clock.get("oracle_speedup")
        stale = name in expert_changed
        ratio = (cyc / wall if isinstance(cyc, int | float) and isinstance(wall, int | float)
                 and wall > 0 and not stale else None)
        out[name] = {"measure": row.get("measure") or row.get("timer"),
                     "cycles_speedup": cyc, "quiet_clock_speedup": wall,
                     "quiet_clock_timer": clock.get("timer"),
                     "quiet_clock_stale": stale,
                     "cycles_over_clock": ratio,
                     "flagged": ratio is not None and abs(ratio - 1) > flag_at,
                     "not_graded": row.get("not_graded"),
                     "refused": row.get("infra_failure")}
    return out


def for_task(pack_slug: str | None, path: Path = CURRENT) -> dict[str, Any] | None:
    """The committed calibration entry of one pack task (None when absent)."""
    if not pack_slug or not path.exists():
        return None
    entry = json.loads(path.read_text()).get("tasks", {}).get(pack_slug)
    return dict(entry) if entry else None


def markdown(table: dict[str, dict[str, Any]]) -> str:
    """The README table (flags in bold)."""

    def fmt(x: Any) -> str:
        return f"{x:.3f}" if isinstance(x, int | float) and math.isfinite(x) else "—"

    lines = ["| task | measure | cycles speedup | quiet-host clock speedup (timer) | "
             "cycles / clock | >10% |", "|---|---|---|---|---|---|"]
    for name, e in table.items():
        cyc = fmt(e["cycles_speedup"]) if e["cycles_speedup"] is not None else (
            e.get("not_graded") or ("refused" if e.get("refused") else "—"))
        flag = ("**flagged**" if e["flagged"] else
                "not compared: expert changed since the clock run"
                if e.get("quiet_clock_stale") else "")
        lines.append(f"| {name} | {e['measure']} | {cyc} | {fmt(e['quiet_clock_speedup'])} "
                     f"({e.get('quiet_clock_timer') or '—'}) | {fmt(e['cycles_over_clock'])} "
                     f"| {flag} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="harness formulacode calibration",
        description="Each task's cycles speedup beside the quiet-host clock speedup; "
                    f"differences over {FLAG_AT:.0%} are flagged.")
    parser.add_argument("cycles_run", type=Path, help="validate JSON of a cycles run")
    parser.add_argument("quiet_run", type=Path, help="validate JSON of a quiet-host clock run")
    parser.add_argument("out", type=Path, nargs="?", default=None,
                        help="write the calibration JSON here (the scorer reads "
                             "benchmarks/formulacode/calibration.json)")
    parser.add_argument("--expert-changed", default="", metavar="SLUG,...",
                        help="tasks whose expert patch changed after the quiet run: "
                             "both numbers kept, no ratio, no flag")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    runs = []
    for path in (args.cycles_run, args.quiet_run):
        try:
            runs.append(json.loads(path.read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise SystemExit(f"{path}: not a readable validate JSON ({exc})") from None
    changed = frozenset(s for s in args.expert_changed.split(",") if s)
    table = compare(runs[0], runs[1], expert_changed=changed)
    doc = {"cycles_run": str(args.cycles_run), "quiet_run": str(args.quiet_run),
           "flag_at": FLAG_AT, "expert_changed": sorted(changed), "tasks": table,
           "flagged": sorted(n for n, e in table.items() if e["flagged"])}
    if args.out is not None:
        args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(markdown(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
