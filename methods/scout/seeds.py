"""Per-product means of a seeded SCOUT study with 95% CIs over training seeds.

Why: the engine's report clusters its CIs by item (the 12 scored episodes); the issue
asks for CIs over seeds, i.e. how much a product's score moves when the scouts, the tiny
model's init and its SFT batches are re-seeded. This reads the study's eval logs (cells
tagged ``product=...`` and ``seed=...``), takes each cell's mean of every listed score, and
gives the mean over seeds with a t interval over the per-seed means
(:func:`harness.stats.mean_ci`, n = seeds, clipped to [0, 1] for a share, to >= 0 for a
count).

    python -m methods.scout.seeds methods/studies/scout/logs/seeds \\
        --out methods/studies/scout/seeds.json

Several log folders may be given (a study's and the later stages' evals, tagged the same
way); ``--pair A:B`` adds the per-seed difference ``A - B`` of every score over the seeds
both products have, with a paired t interval (:func:`harness.stats.paired_difference_ci`):
the question "did multi-turn RL improve on the SFT it started from" is paired by seed.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["SCORES", "cell_means", "main", "over_seeds", "paired"]

SCORES = ("solved", "efficiency", "invalid_calls", "illegal", "moves")
_BOUNDED = {"solved", "efficiency"}


def _tags(tags: Iterable[str]) -> dict[str, str]:
    return dict(t.split("=", 1) for t in tags if "=" in t)


def cell_means(log_dir: Path, scorer: str = "scout_score") -> dict[tuple[str, str], dict[str,
                                                                                       float]]:
    """``(product, seed) -> {score: mean over the cell's samples}`` from the logs (read
    through :func:`harness.results.read_results`, the suite's one log reader)."""
    from harness.results import read_results

    frame = read_results(log_dir)
    if frame.is_empty():
        raise ValueError(f"no eval logs in {log_dir}")
    out: dict[tuple[str, str], dict[str, float]] = {}
    for (log_file,), rows in frame.group_by(["log_file"], maintain_order=True):
        name = Path(str(log_file)).name
        tags = _tags(rows["tags"][0].to_list())
        if "product" not in tags or "seed" not in tags:
            raise ValueError(f"{name}: not tagged with product= and seed=")
        if rows["status"][0] != "success":
            raise ValueError(f"{name}: status {rows['status'][0]}, no samples to average")
        means: dict[str, float] = {}
        for score in SCORES:
            values = rows.filter(rows["score_key"] == f"{scorer}/{score}")["score_value"]
            if values.is_empty():
                raise ValueError(f"{name}: no {scorer}/{score} score")
            means[score] = float(values.cast(float).mean())  # type: ignore[arg-type]
        cell = (tags["product"], tags["seed"])
        if cell in out:
            raise ValueError(f"two logs for product={cell[0]} seed={cell[1]}")
        out[cell] = means
    return out


def paired(cells: dict[tuple[str, str], dict[str, float]], a: str, b: str) -> dict[str, Any]:
    """Per score: the per-seed differences ``a - b`` over their common seeds, their mean
    and its paired 95% t interval (``lo``/``hi`` None with fewer than 2 seeds)."""
    from harness.stats import paired_difference_ci

    seeds = sorted({s for p, s in cells if p == a} & {s for p, s in cells if p == b}, key=int)
    if not seeds:
        raise ValueError(f"products {a!r} and {b!r} share no seed")
    row: dict[str, Any] = {"seeds": seeds}
    for score in SCORES:
        xa = [cells[(a, s)][score] for s in seeds]
        xb = [cells[(b, s)][score] for s in seeds]
        diffs = [x - y for x, y in zip(xa, xb, strict=True)]
        if len(seeds) < 2:
            row[score] = {"per_seed": diffs, "mean": diffs[0], "lo": None, "hi": None}
            continue
        est = paired_difference_ci(xa, xb)
        row[score] = {"per_seed": diffs, "mean": est.estimate, "lo": est.lo, "hi": est.hi}
    return row


def over_seeds(cells: dict[tuple[str, str], dict[str, float]]) -> dict[str, Any]:
    """Per product and score: per-seed means, their mean and 95% t CI over seeds."""
    from harness.stats import mean_ci

    result: dict[str, Any] = {}
    for product in sorted({p for p, _ in cells}):
        seeds = sorted((s for p, s in cells if p == product), key=int)
        row: dict[str, Any] = {"seeds": seeds}
        for score in SCORES:
            per_seed = [cells[(product, s)][score] for s in seeds]
            bounds = (0.0, 1.0) if score in _BOUNDED else (0.0, float("inf"))  # counts
            if len(per_seed) < 2:
                row[score] = {"per_seed": per_seed, "mean": per_seed[0], "lo": None,
                              "hi": None}
                continue
            est = mean_ci(per_seed, bounds=bounds)
            row[score] = {"per_seed": per_seed, "mean": est.estimate, "lo": est.lo,
                          "hi": est.hi}
        result[product] = row
    return result


def main(argv: list[str] | None = None) -> None:
    """Write the over-seeds summary of a study's logs to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log_dir", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pair", action="append", default=[], metavar="A:B",
                        help="also the per-seed difference A - B (repeatable)")
    args = parser.parse_args(argv)
    cells: dict[tuple[str, str], dict[str, float]] = {}
    for folder in args.log_dir:
        found = cell_means(folder)
        twice = sorted(set(found) & set(cells))
        if twice:
            raise ValueError(f"{folder}: cells already read from another folder: {twice}")
        cells.update(found)
    dirs = [str(d) for d in args.log_dir]
    summary: dict[str, Any] = {"log_dir": dirs[0] if len(dirs) == 1 else dirs,
                               "ci": "95% t interval over per-seed means",
                               "products": over_seeds(cells)}
    for spec in args.pair:
        a, sep, b = spec.partition(":")
        if not sep or not a or not b:
            raise SystemExit(f"--pair wants A:B, got {spec!r}")
        summary.setdefault("paired", {})[f"{a} - {b}"] = paired(cells, a, b)
    args.out.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    from harness.errors import guarded

    guarded(main)
