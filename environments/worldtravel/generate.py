"""Generate the world and the scenario set for a seed.

    python -m environments.worldtravel.generate --seed 0 --out DIR [--n 150] [--jobs 2] [--progress]
        [--construction binding-kinds|binding-obligations]

Scenario ``i`` depends only on ``(seed, i)``, so ``--jobs`` workers give the same bytes
as one; ``--indices 0,5,9`` regenerates a subset (used by the determinism tests). The
last line reports the time taken (wall clock, and CPU seconds of this process and its
workers: the figure that does not depend on how many cores were free), the number of
CP-SAT solves (the figure that depends on neither the machine nor its load: every
solve stops at a deterministic work limit) and the generator's redraws by reason
(``meta.redraws`` per scenario).
"""

from __future__ import annotations

import argparse
import functools
import resource
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from environments.worldtravel.model import World
from environments.worldtravel.scenario import Scenario
from environments.worldtravel.scenarios import CONSTRUCTIONS, N_SCENARIOS, generate_scenario
from environments.worldtravel.solver import solvers_made
from environments.worldtravel.store import write
from environments.worldtravel.world import generate_world


@functools.cache
def _world(seed: int) -> World:
    """The world of ``seed``, built once per worker process (not once per scenario)."""
    return generate_world(seed)


def _one(args: tuple[int, int, str]) -> tuple[Scenario, int]:
    """Scenario ``i`` of ``seed`` under a construction and the CP-SAT solves it took (in
    a worker process)."""
    seed, i, construction = args
    world = _world(seed)
    before = solvers_made()
    sc = generate_scenario(world, seed, i, construction=construction)
    return sc, solvers_made() - before


def build(
    seed: int,
    indices: list[int],
    jobs: int = 1,
    progress: bool = False,
    solves: list[int] | None = None,
    construction: str = "default",
) -> list[Scenario]:
    """Scenarios ``indices`` for ``seed``, in order, with ``jobs`` worker processes
    (``progress``: a line on stderr per finished scenario; ``solves``: receives each
    scenario's number of CP-SAT solves, in order; ``construction``: one of
    :data:`~environments.worldtravel.scenarios.CONSTRUCTIONS`, the default builds the
    shipped set)."""
    out: list[Scenario] = []
    counts = solves if solves is not None else []
    todo = [(seed, i, construction) for i in indices]
    if jobs <= 1:
        return [_report(_one(job), len(indices), progress, out, counts) for job in todo]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        done = pool.map(_one, todo, chunksize=1)
        return [_report(s, len(indices), progress, out, counts) for s in done]


def _report(
    made: tuple[Scenario, int], total: int, progress: bool, out: list[Scenario],
    counts: list[int],
) -> Scenario:
    sc, n = made
    out.append(sc)
    counts.append(n)
    if progress:
        print(f"{len(out)}/{total} {sc.id} ({n} solves)", file=sys.stderr, flush=True)
    return sc


def _cpu_seconds() -> float:
    """User + system CPU of this process and of its finished children (the workers)."""
    return sum(
        u.ru_utime + u.ru_stime
        for u in (resource.getrusage(resource.RUSAGE_SELF),
                  resource.getrusage(resource.RUSAGE_CHILDREN))
    )


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--n", type=int, default=N_SCENARIOS)
    parser.add_argument("--indices", type=str, default=None, help="comma-separated subset")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--progress", action="store_true", help="a line per scenario")
    parser.add_argument("--construction", choices=CONSTRUCTIONS, default="default",
                        help="binding-kinds, binding-obligations: experimental "
                        "constructions of issue 47 item 4 (not the shipped set)")
    args = parser.parse_args(argv)
    indices = [int(x) for x in args.indices.split(",")] if args.indices else list(range(args.n))
    start, cpu = time.perf_counter(), _cpu_seconds()
    solves: list[int] = []
    scenarios = build(args.seed, indices, args.jobs, args.progress, solves, args.construction)
    world_path, scenario_path = write(args.out, _world(args.seed), scenarios)
    reasons: Counter[str] = Counter()
    for sc in scenarios:
        reasons.update(sc.meta.get("redraws", {}))
    print(
        f"wrote {world_path} and {scenario_path} ({len(scenarios)} scenarios, "
        f"{time.perf_counter() - start:.1f} s wall, {_cpu_seconds() - cpu:.1f} s CPU, "
        f"{sum(solves)} CP-SAT solves); "
        f"redraws: {sum(reasons.values())} "
        f"({', '.join(f'{k} {n}' for k, n in sorted(reasons.items())) or 'none'}) "
        f"in {sum(bool(sc.meta.get('redraws')) for sc in scenarios)} scenarios",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
