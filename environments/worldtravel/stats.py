"""Summary statistics of a generated scenario set (default: the shipped seed).

    python -m environments.worldtravel.stats --json

prints ``{"scenarios", "cities", "mean_constraints", "min_constraints",
"max_constraints", "feasible", "checker_agrees", "kinds", "categories", "by_count",
"plans_found"}``; ``feasible`` counts scenarios with a CP-SAT reference plan and
``checker_agrees`` those whose reference plan the independent checker accepts.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from environments.worldtravel.checker import check_plan
from environments.worldtravel.model import World
from environments.worldtravel.scenario import Scenario
from environments.worldtravel.store import read_scenarios, read_world


def summarize(world: World, scenarios: list[Scenario]) -> dict[str, Any]:
    """The statistics dict for a world and its scenarios."""
    counts = [s.n_constraints for s in scenarios]
    kinds = Counter(c.kind for s in scenarios for c in s.constraints)
    categories = Counter(c.category for s in scenarios for c in s.constraints)
    agrees = sum(
        check_plan(world, s, s.reference_plan)["feasible"]
        for s in scenarios
        if s.reference_plan is not None
    )
    return {
        "scenarios": len(scenarios),
        "cities": len(world.cities),
        "mean_constraints": round(sum(counts) / len(counts), 3) if counts else 0.0,
        "min_constraints": min(counts, default=0),
        "max_constraints": max(counts, default=0),
        "feasible": sum(s.reference_plan is not None for s in scenarios),
        "checker_agrees": agrees,
        "kinds": dict(sorted(kinds.items())),
        "categories": dict(sorted(categories.items())),
        "by_count": {str(k): v for k, v in sorted(Counter(counts).items())},
        "plans_found": dict(sorted(Counter(s.plans_found for s in scenarios).items())),
        "two_city": sum(len(s.cities) > 1 for s in scenarios),
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON (the only format)")
    parser.add_argument("--data", type=Path, default=None)
    args = parser.parse_args(argv)
    stats = summarize(read_world(args.data), read_scenarios(args.data))
    print(json.dumps(stats, indent=1 if not args.json else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
