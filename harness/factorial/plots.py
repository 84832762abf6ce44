"""Plots for factorial reports, rendered off-screen to inline ``data:`` PNG URIs.

Why PNG data URIs: the HTML report must be one self-contained file that opens anywhere
(mail attachment, CI artefact) without scripts, fonts or network; an ``<img>`` with a
base64 PNG is the most portable way to carry a figure. Matplotlib's SVG output would also
embed, but it names XML namespaces with ``http://`` URLs, which muddies the "no external
references" check the report guarantees.

Every function takes plain Python data (no frames, no analysis objects), so the plots can
be tested and reused without running an analysis, and builds its own ``Figure`` (never
``pyplot``), so nothing touches global backend state.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = [
    "LevelPoint",
    "figure_to_data_uri",
    "interaction_plot",
    "level_means_plot",
    "variance_shares_plot",
]

_DPI = 96
_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]

_MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
_LINES = ["-", "--", "-.", ":"]


@dataclass(frozen=True)
class LevelPoint:
    """One level's estimate with its confidence interval (bounds may be unknown)."""

    level: str
    estimate: float
    lo: float | None = None
    hi: float | None = None


def figure_to_data_uri(fig: Figure) -> str:
    """Render a figure to a ``data:image/png;base64,...`` URI (no metadata, reproducible)."""
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI, bbox_inches="tight",
                metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _errors(points: Sequence[LevelPoint]) -> tuple[list[float], list[float]] | None:
    """Asymmetric error-bar lengths, or None when no point has a usable interval."""
    if not any(_finite(p.lo) and _finite(p.hi) for p in points):
        return None
    below = [p.estimate - p.lo if _finite(p.lo) else 0.0 for p in points]  # type: ignore[operator]
    above = [p.hi - p.estimate if _finite(p.hi) else 0.0 for p in points]  # type: ignore[operator]
    return [max(b, 0.0) for b in below], [max(a, 0.0) for a in above]


def level_means_plot(
    by_factor: Mapping[str, Sequence[LevelPoint]],
    *,
    ylabel: str,
    title: str,
) -> str:
    """One panel per factor: the mean response at each level with its CI (error bars).

    Used for both main-effect plots (raw level means) and estimated marginal means.
    Panels share the y axis so effect sizes compare at a glance across factors.
    """
    factors = [f for f, pts in by_factor.items() if pts]
    n = max(len(factors), 1)
    fig = Figure(figsize=(min(3.2 * n, 12.8), 3.4), layout="constrained")
    axes = fig.subplots(1, n, sharey=True, squeeze=False)[0]
    for ax, factor in zip(axes, factors, strict=False):
        points = list(by_factor[factor])
        xs = list(range(len(points)))
        ys = [p.estimate for p in points]
        err = _errors(points)
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4, color=_COLORS[0], linewidth=1.5)
        ax.set_xticks(xs, [p.level for p in points], rotation=20 if len(points) > 3 else 0)
        ax.set_xlim(-0.5, len(points) - 0.5)
        ax.set_title(factor, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel(ylabel)
    fig.suptitle(title, fontsize=11)
    return figure_to_data_uri(fig)


def interaction_plot(
    x_factor: str,
    trace_factor: str,
    x_levels: Sequence[str],
    traces: Mapping[str, Sequence[float | None]],
    *,
    ylabel: str,
) -> str:
    """Mean response across ``x_factor`` levels, one line per ``trace_factor`` level.

    Parallel lines mean no interaction; crossing or diverging lines show that the effect of
    one factor depends on the other. ``traces[level][i]`` is the mean at ``x_levels[i]``
    (None where that cell was not run, e.g. in a fractional design).
    """
    fig = Figure(figsize=(4.6, 3.3))
    ax = fig.subplots()
    xs = list(range(len(x_levels)))
    width = 0.04 * (len(traces) - 1)
    for i, (level, ys) in enumerate(traces.items()):
        values = [math.nan if y is None else y for y in ys]
        # dodge and vary the style so coinciding lines (no effect at all) stay visible
        shift = (i / max(len(traces) - 1, 1) - 0.5) * width
        ax.plot([x + shift for x in xs], values, marker=_MARKERS[i % len(_MARKERS)],
                linestyle=_LINES[i % len(_LINES)], label=str(level),
                color=_COLORS[i % len(_COLORS)])
    ax.set_xticks(xs, list(x_levels), rotation=20 if len(x_levels) > 3 else 0)
    ax.set_xlabel(x_factor)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{x_factor} \u00d7 {trace_factor}", fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(title=trace_factor, fontsize=8, title_fontsize=8, frameon=False)
    return figure_to_data_uri(fig)


def variance_shares_plot(shares: Sequence[tuple[str, float]], *, title: str) -> str:
    """Horizontal bars: the share of the response's variance attributed to each term."""
    fig = Figure(figsize=(6.0, 0.45 * max(len(shares), 2) + 1.0))
    ax = fig.subplots()
    labels = [term for term, _ in shares][::-1]
    values = [100.0 * share for _, share in shares][::-1]
    bars = ax.barh(labels, values, color=_COLORS[0])
    for bar, value in zip(bars, values, strict=True):
        ax.annotate(f"{value:.1f}%", (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                    xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_xlabel("share of variance (%)")
    ax.set_xlim(0, max([*values, 1.0]) * 1.15)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="x", alpha=0.3)
    return figure_to_data_uri(fig)
