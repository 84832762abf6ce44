"""The family's horizon plot: each reference planner's feasibility by constraint count.

One panel per member of :data:`~environments.worldtravel.planners.PLANNERS`: its
feasibility per constraint-count bucket on the shipped set (when the family was run) and
the share of the generator's fully built draws it passed (``meta.family_draws``, before
the last-resort redraws), one line per trip length. Written by
``harness worldtravel stats --json --plot PATH``.

:func:`plot_graded` is the same layout for the graded response of
:func:`~environments.worldtravel.stats.difficulty_fit` (feasibility is at 0 on the shipped
set): each member's mean share of the scenario's global constraints passed, per count
bucket, one line per trip length (``stats --json --plot-graded PATH``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from environments.worldtravel.analysis import BUCKETS, bucket
from environments.worldtravel.planners import PLANNERS
from environments.worldtravel.scenario import Scenario


def _share(rows: list[tuple[str, bool]], label: str) -> float | None:
    hits = [f for b, f in rows if b == label]
    return sum(hits) / len(hits) if hits else None


def plot_family(
    scenarios: list[Scenario], results: dict[str, list[Any]] | None, out: Path
) -> Path:
    """Write the horizon plot to ``out`` (PNG) and return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{lo}-{hi}" for lo, hi in BUCKETS]
    names = list(PLANNERS)
    fig, axes = plt.subplots(2, (len(names) + 1) // 2, figsize=(16, 7), sharey=True)
    flat = list(axes.ravel())
    days = sorted({s.days for s in scenarios})
    for ax, name in zip(flat, names, strict=False):
        for d in days:
            rows = [(bucket(s.n_constraints), name in draw) for s in scenarios if s.days == d
                    for draw in s.meta.get("family_draws", [])]
            ys = [_share(rows, b) for b in labels]
            ax.plot(labels, [float("nan") if y is None else y for y in ys], marker="o",
                    label=f"draws, {d}-day")
        if results is not None:
            rows = [(bucket(s.n_constraints), f) for s, (f, *_) in zip(scenarios, results[name],
                                                                        strict=True)]
            ys = [_share(rows, b) for b in labels]
            ax.plot(labels, [float("nan") if y is None else y for y in ys], "k--", marker="s",
                    label="shipped set")
        ax.set_title(name)
        ax.set_ylim(-0.05, 1.05)
        ax.tick_params(axis="x", labelrotation=45)
    for ax in flat[len(names):]:
        ax.axis("off")
    flat[0].set_ylabel("feasible share")
    flat[0].legend(fontsize=7)
    fig.suptitle("WorldTravel reference planners: feasibility by constraint count")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def plot_graded(scenarios: list[Scenario], results: dict[str, list[Any]], out: Path) -> Path:
    """Write the graded horizon plot (global constraints passed, by count bucket and trip
    length, one panel per member) to ``out`` (PNG) and return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{lo}-{hi}" for lo, hi in BUCKETS]
    names = list(results)
    fig, axes = plt.subplots(2, (len(names) + 1) // 2, figsize=(16, 7), sharey=True)
    flat = list(axes.ravel())
    days = sorted({s.days for s in scenarios})
    for ax, name in zip(flat, names, strict=False):
        for d in days:
            cells: dict[str, list[float]] = {}
            for s, row in zip(scenarios, results[name], strict=True):
                passed, total = row[-1]
                if s.days == d and total:
                    cells.setdefault(bucket(s.n_constraints), []).append(passed / total)
            ys = [sum(cells[b]) / len(cells[b]) if cells.get(b) else float("nan")
                  for b in labels]
            ax.plot(labels, ys, marker="o", label=f"{d}-day")
        ax.set_title(name)
        ax.set_ylim(-0.05, 1.05)
        ax.tick_params(axis="x", labelrotation=45)
    for ax in flat[len(names):]:
        ax.axis("off")
    flat[0].set_ylabel("share of global constraints passed")
    flat[0].legend(fontsize=7)
    fig.suptitle("WorldTravel reference planners: global constraints passed, by constraint "
                 "count and trip length (shipped set)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out
