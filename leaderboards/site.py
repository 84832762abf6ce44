"""Leaderboard -> a static HTML site (Jinja2 templates, sortable tables, SVG plots).

``index.html`` holds the overall table, one row per benchmark and the list of logs; each
benchmark gets ``<slug>.html`` with its entries (sortable), a forest plot of scores with
their CIs, the pairwise difference matrix and links to every log (open them with
``inspect view``). Each page states the headline's direction and the errored-sample policy
with its count (from the benchmark's eval.yaml); a lower-is-better benchmark colours a
pairwise cell green when the row is lower. The site is plain files with no external
requests, so it works from ``file://`` or any static server; the style sheet and the
sorting script are inlined from ``templates/`` so every page stands alone.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

__all__ = ["forest_svg", "write_site"]

_HERE = Path(__file__).parent
TEMPLATES = _HERE / "templates"


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _sort_value(value: Any) -> str:
    """The ``data-sort`` attribute: numbers as numbers, missing values sort last."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def forest_svg(entries: list[dict[str, Any]], width: int = 640, row: int = 22) -> str:
    """An SVG forest plot: one row per entry, a dot at the score and a bar for its CI
    (no dot for an entry without a score)."""
    values = [v for e in entries for v in (e["score"], e["ci_lo"], e["ci_hi"])
              if v is not None and not math.isnan(v)]
    lo, hi = (min(values + [0.0]), max(values + [1.0])) if values else (0.0, 1.0)
    span = hi - lo or 1.0
    left, right, top = 40, 20, 20
    plot = width - left - right
    height = top + row * len(entries) + 30

    def x(v: float) -> float:
        return left + (v - lo) / span * plot

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="forest" width="{width}" '
             f'height="{height}" role="img" aria-label="scores with confidence intervals">']
    for tick in (lo, lo + span / 2, hi):
        parts.append(f'<line x1="{x(tick):.1f}" y1="{top - 5}" x2="{x(tick):.1f}" '
                     f'y2="{height - 25}" class="grid"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 10}" text-anchor="middle">'
                     f'{tick:.2f}</text>')
    for i, e in enumerate(entries):
        y = top + row * i + row / 2
        label = html.escape(f"{e['rank']}. {e['entry']}")
        parts.append(f'<g class="row"><title>{label}: {_fmt(e["score"])} '
                     f'[{_fmt(e["ci_lo"])}, {_fmt(e["ci_hi"])}]</title>')
        if e["ci_lo"] is not None and e["ci_hi"] is not None:
            parts.append(f'<line x1="{x(e["ci_lo"]):.1f}" y1="{y:.1f}" '
                         f'x2="{x(e["ci_hi"]):.1f}" y2="{y:.1f}" class="ci"/>')
        if e["score"] is not None:
            parts.append(f'<circle cx="{x(e["score"]):.1f}" cy="{y:.1f}" r="4" class="dot"/>')
        parts.append(f'<text x="4" y="{y + 4:.1f}" class="rank">{e["rank"]}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _pair_matrix(entries: list[dict[str, Any]], pairs: list[dict[str, Any]]
                 ) -> list[list[dict[str, Any] | None]]:
    """Rows/columns in rank order; cell = the pair ``row - column`` (None on the diagonal)."""
    index = {(p["a"], p["b"]): p for p in pairs}
    names = [e["entry"] for e in entries]
    return [[None if a == b else index.get((a, b)) for b in names] for a in names]


def _cell_class(pair: dict[str, Any] | None, lower_is_better: bool = False) -> str:
    """``win`` when the row (``a``) is better than the column beyond its CI, ``loss`` when
    worse, ``tie`` otherwise; better means lower on a lower-is-better benchmark."""
    if pair is None or pair["ci_lo"] is None or pair["ci_hi"] is None:
        return "na"
    above, below = pair["ci_lo"] > 0, pair["ci_hi"] < 0
    if lower_is_better:
        above, below = below, above
    if above:
        return "win"
    if below:
        return "loss"
    return "tie"


def write_site(document: dict[str, Any], folder: Path, title: str = "Leaderboard") -> Path:
    """Render the project document (see :mod:`leaderboards.exports`) into ``folder``.

    Log links in ``document`` must already be relative to ``folder``.
    Returns the path of ``index.html``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    env = Environment(loader=FileSystemLoader(TEMPLATES),
                      autoescape=select_autoescape(["html", "j2"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = _fmt
    env.filters["sortval"] = _sort_value
    env.globals["cell_class"] = _cell_class
    log_dirs = sorted({str(Path(log["log_file"]).parent) for log in document["logs"]})
    common = {"title": title, "doc": document, "log_dirs": log_dirs}
    for bench in document["benchmarks"]:
        page = env.get_template("benchmark.html.j2").render(
            **common, bench=bench, forest=forest_svg(bench["entries"]),
            matrix=_pair_matrix(bench["entries"], bench["pairwise"]))
        (folder / f"{bench['slug']}.html").write_text(page)
    index = folder / "index.html"
    index.write_text(env.get_template("index.html.j2").render(**common))
    return index
