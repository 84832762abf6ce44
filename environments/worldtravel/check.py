"""Check an itinerary against a scenario and print the per-constraint report as JSON.

    python -m environments.worldtravel.check --scenario wt-s0-000 --plan PLAN.json
    python -m environments.worldtravel.check --scenario wt-s0-000 --reference

``--plan -`` reads stdin; ``--data DIR`` checks against a generated set other than the
shipped one. The file is handed to the checker as text, so a malformed plan yields a
report (with reasons), never a traceback. Exit status 0 if feasible, 1 if not, 2 on a
usage error (unknown scenario, unreadable file).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from environments.worldtravel.checker import check_plan
from environments.worldtravel.store import read_scenarios, read_world


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", required=True)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--plan", type=str)
    group.add_argument("--reference", action="store_true", help="check the reference plan")
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args(argv)
    scenarios = {s.id: s for s in read_scenarios(args.data)}
    scenario = scenarios.get(args.scenario)
    if scenario is None:
        print(f"unknown scenario {args.scenario!r}", file=sys.stderr)
        return 2
    if args.reference:
        raw: object = scenario.reference_plan
    elif args.plan == "-":
        raw = sys.stdin.read()
    else:
        try:
            raw = Path(args.plan).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            print(f"cannot read {args.plan}: {exc}", file=sys.stderr)
            return 2
    report = check_plan(read_world(args.data), scenario, raw)
    print(json.dumps(report, indent=1))
    return 0 if report["feasible"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
