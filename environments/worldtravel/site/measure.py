"""``python -m environments.worldtravel.site.measure [--limit N] [--json]``: the HTML-only
crawler's feasibility on the scenario set (and the oracle's, as a control).

Why a command: the crawler number is the Webscape acceptance figure (an HTML-only scraper
with an exact solver must stay at or below 15% feasible) and must be rerun whenever the
scenarios or the site change. It renders the site into a temporary directory, crawls it
without CSS or images, plans every scenario with the exact solver on the crawled world and
checks each plan against the true world. Prints feasibility overall and per failing
constraint kind (for the crawler's optimistic guesses and again for pessimistic ones:
unread trips long, charted rooms prohibitive), the oracle's feasibility (reference
plans, must be 1.0), the reference plans' decisive facts by modality (how many of the
facts that decide feasibility are image-only), the render time and the total seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from environments.worldtravel.checker import check_plan
from environments.worldtravel.model import World
from environments.worldtravel.scenario import Scenario
from environments.worldtravel.site.build import PUBLIC, write_files
from environments.worldtravel.site.crawler import PESSIMISTIC, crawler_plan, rebuild_world
from environments.worldtravel.site.perception import perception
from environments.worldtravel.site.render import render_world
from environments.worldtravel.store import read_scenarios, read_world


def crawler_feasibility(world: World, scenarios: list[Scenario]) -> dict[str, Any]:
    """Feasibility of the crawler's plans (true world) and of the reference plans."""
    started = time.perf_counter()
    build = render_world(world)
    render_s = time.perf_counter() - started
    modality = {f.key: f.presentation for f in build.facts}
    with tempfile.TemporaryDirectory(prefix="wt-crawl-") as tmp:
        write_files(build, Path(tmp))
        crawled = rebuild_world(Path(tmp) / PUBLIC, world.first_date, world.n_dates, world.seed)
        gloomy = rebuild_world(Path(tmp) / PUBLIC, world.first_date, world.n_dates, world.seed,
                               PESSIMISTIC)
    pessimistic, pess_failing, pess_planned = 0, Counter[str](), 0
    for scenario in scenarios:
        plan = crawler_plan(gloomy, scenario)
        pess_planned += plan is not None
        report = check_plan(world, scenario, plan) if plan is not None else None
        pessimistic += bool(report and report["feasible"])
        if report is not None:
            pess_failing.update({r["kind"] for r in report["results"] if not r["passed"]})
    feasible, oracle, failing, per = 0, 0, Counter[str](), {}
    decisive = Counter[str]()
    with_image = 0
    for scenario in scenarios:
        plan = crawler_plan(crawled, scenario)
        report = check_plan(world, scenario, plan) if plan is not None else None
        ok = bool(report and report["feasible"])
        feasible += ok
        if report is not None:
            failing.update({r["kind"] for r in report["results"] if not r["passed"]})
        per[scenario.id] = ok
        ref = check_plan(world, scenario, scenario.reference_plan)
        oracle += bool(ref["feasible"])
        counts = perception(world, scenario, scenario.reference_plan, modality)["counts"]
        decisive.update(counts)
        with_image += counts.get("image", 0) > 0
    n = max(1, len(scenarios))
    return {
        "scenarios": len(scenarios),
        "crawler_feasible": feasible / n,
        "crawler_feasible_count": feasible,
        "oracle_feasible": oracle / n,
        "failing_kinds": dict(failing.most_common()),
        # the same crawler guessing pessimistically (unread trips long, charted rooms
        # prohibitive): planned = scenarios where the solver found any plan at all
        "pessimistic_crawler_feasible": pessimistic / n,
        "pessimistic_crawler_feasible_count": pessimistic,
        "pessimistic_crawler_planned": pess_planned,
        "pessimistic_failing_kinds": dict(pess_failing.most_common()),
        # the reference plans' decisive facts by modality (pooled), and how many
        # scenarios have at least one image-only decisive fact
        "reference_decisive_facts": dict(sorted(decisive.items())),
        "reference_decisive_image_share": decisive["image"] / max(1, sum(decisive.values())),
        "scenarios_with_image_decisive_fact": with_image,
        "render_seconds": round(render_s, 1),
        "seconds": round(time.perf_counter() - started, 1),
        "per_scenario": per,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the measurement; 1 when the oracle is not fully feasible."""
    parser = argparse.ArgumentParser(prog="python -m environments.worldtravel.site.measure")
    parser.add_argument("--data", type=Path, default=None, help="directory with world.json")
    parser.add_argument("--limit", type=int, default=None, help="first N scenarios only")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    scenarios = read_scenarios(args.data)[: args.limit]
    result = crawler_feasibility(read_world(args.data), scenarios)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            if key != "per_scenario":
                print(f"{key}: {value}")
    return 0 if result["oracle_feasible"] == 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
