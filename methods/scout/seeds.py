"""Per-product means of a seeded SCOUT study with 95% CIs over training seeds.

Why: the engine's report clusters its CIs by item (the 12 scored episodes); the issue
asks for CIs over seeds, i.e. how much a product's score moves when the scouts, the tiny
model's init and its SFT batches are re-seeded. This reads the study's eval logs (cells
tagged ``product=...`` and ``seed=...``), takes each cell's mean of every listed score, and
gives the mean over seeds with a t interval over the per-seed means
(:func:`harness.stats.mean_ci`, n = seeds, clipped to [0, 1] for a share, to >= 0 for a
count).

    python -m methods.scout.seeds methods/studies/reports/scout/logs_seeds \\
        --out methods/studies/reports/scout/seeds.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["SCORES", "cell_means", "main", "over_seeds"]

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
    parser.add_argument("log_dir", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    summary = {"log_dir": str(args.log_dir), "ci": "95% t interval over per-seed means",
               "products": over_seeds(cell_means(args.log_dir))}
    args.out.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
