"""Reference Stage-2 survival per scenario: default, all-50, random designs and the optimum.

    python -m environments.causalgame.validate --json
    python -m environments.causalgame.validate --compat intended --seeds 5

Each cell is the mean over ``seeds`` Stage-2 fleets of 1,000 drones (random: the mean over
``random_designs`` designs with every DEF ~ U{0..50}, one fleet each per seed). Output is
in percent. ``optimum`` is the published family-optimum design (antenna_def 0; shield 25 +
signal_filter; antenna 8 for weather_noise), ``best_known`` the best design known to this
implementation (what the oracle agent submits). The default ``--compat original``
reproduces the released code, which is what the published aggregate baselines
(default 49.0, random 52.0, all-50 52.7) were made with.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

from environments.causalgame.scenarios import COMPAT_MODES, load_scenario, scenario_ids
from environments.causalgame.sim import survival_rate

PUBLISHED = {"default": 49.0, "random": 52.0, "all50": 52.7}


def validate(
    compat: str = "original", seeds: int = 5, random_designs: int = 50, fleet: int = 1000
) -> dict[str, Any]:
    """Per-scenario and 14-scenario mean survival (percent) of the reference designs."""
    table: dict[str, dict[str, float]] = {}
    for sid in scenario_ids():
        sc = load_scenario(sid, compat)
        names = sc.components.names
        all50 = {f"{n}_def": 50.0 for n in names}
        opt, best = sc.published_optimum, sc.optimum
        cells: dict[str, list[float]] = {
            "default": [],
            "all50": [],
            "random": [],
            "optimum": [],
            "best_known": [],
        }
        for s in range(seeds):
            rng = np.random.default_rng([s, sc.index])
            cells["default"].append(survival_rate(sc, {}, fleet, rng))
            cells["all50"].append(survival_rate(sc, all50, fleet, rng))
            cells["optimum"].append(survival_rate(sc, opt["design"], fleet, rng, opt["equipment"]))
            cells["best_known"].append(
                survival_rate(sc, best["design"], fleet, rng, best["equipment"])
            )
            draws = rng.integers(0, 51, size=(random_designs, len(names)))
            cells["random"].append(
                float(
                    np.mean(
                        [
                            survival_rate(
                                sc, dict(zip(names, map(float, row), strict=True)), fleet, rng
                            )
                            for row in draws
                        ]
                    )
                )
            )
        table[sid] = {k: round(100 * float(np.mean(v)), 2) for k, v in cells.items()}
    mean = {
        k: round(float(np.mean([row[k] for row in table.values()])), 2)
        for k in ("default", "all50", "random", "optimum", "best_known")
    }
    return {
        "compat": compat,
        "seeds": seeds,
        "fleet": fleet,
        "scenarios": table,
        "mean": mean,
        "published_mean": PUBLISHED,
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--compat", choices=COMPAT_MODES, default="original")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--random-designs", type=int, default=50)
    args = parser.parse_args(argv)
    result = validate(args.compat, args.seeds, args.random_designs)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    cols = ("default", "all50", "random", "optimum", "best_known")
    print(f"{'scenario':55s} " + " ".join(f"{c:>10s}" for c in cols))
    for sid, row in [*result["scenarios"].items(), ("MEAN", result["mean"])]:
        print(f"{sid:55s} " + " ".join(f"{row[k]:10.1f}" for k in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
