"""Leaderboard -> a static HTML site (Jinja2 templates, sortable tables, SVG plots).

``index.html`` shows every benchmark as a picture first (:func:`board_svg`: each entry's
score with its interval, tie groups shaded, the floor and the oracle marked), then the
overall table, one row per benchmark and the list of logs; each benchmark gets
``<slug>.html`` with the same picture on top, its entries (sortable, with tie groups and the
minimum detectable difference to the next entry), the pairwise difference matrix and links
to every log (open them with ``inspect view``), and ``<slug>.svg``, the picture on its own.
Entries are named as a person reads them (``readable_name``: the agent for a scripted
solver that Inspect logs as model ``none/none``). Each page states the headline's
direction and the errored-sample policy with its count (from the benchmark's eval.yaml);
a lower-is-better benchmark colours a pairwise cell green when the row is lower. The site
is plain files with no external requests, so it works from ``file://`` or any static
server; the style sheet and the sorting script are inlined from ``templates/`` so every
page stands alone.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

__all__ = ["board_svg", "write_site"]

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


_BANDS = ("#e3edf8", "#f4f4f4")
"""Fill of alternate tie groups in the picture (a group is one band)."""


def _span(bench: dict[str, Any]) -> tuple[float, float]:
    """The picture's x range: every score, interval and reference; [0, 1] at least for a
    bounded score."""
    values = [v for e in bench["entries"] for v in (e["score"], e["ci_lo"], e["ci_hi"])
              if v is not None and math.isfinite(v)]
    values += [v for v in (bench.get("floor"), bench.get("oracle"))
               if v is not None and math.isfinite(v)]
    if bench.get("bounded", False) or not values:
        values += [0.0, 1.0]
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def board_svg(bench: dict[str, Any], level: float = 0.95, width: int = 820,
              row: int = 24) -> str:
    """One benchmark as a picture (issue 51): a row per entry in rank order, the score as
    a dot and its interval as a bar, tie groups as shaded bands labelled on the right,
    the floor and oracle references as dashed lines. Plain SVG with its own styling, so
    the same text is inline in the pages and a standalone ``<slug>.svg``."""
    entries = bench["entries"]
    lo, hi = _span(bench)
    label_w, right_w, top, bottom = 300, 90, 46, 34
    plot = width - label_w - right_w
    height = top + row * max(len(entries), 1) + bottom

    def x(v: float) -> float:
        return label_w + (v - lo) / (hi - lo) * plot

    direction = "lower is better" if bench.get("lower_is_better") else "higher is better"
    heading = (f"{bench['name']}: {bench['score_key']} ({direction}), "
               f"{round(level * 100)}% intervals, {bench['n_items']} items")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="forest board" '
           f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'font-family="system-ui, sans-serif" font-size="11" role="img" '
           f'aria-label="{html.escape(heading)}">',
           f"<title>{html.escape(heading)}</title>",
           f'<text x="4" y="14" font-size="13" font-weight="bold" fill="#222">'
           f"{html.escape(heading)}</text>"]
    # tie groups: one band per group of consecutive rows
    start = 0
    for i in range(1, len(entries) + 1):
        if i == len(entries) or entries[i].get("tie_group") != entries[start].get("tie_group"):
            group = entries[start].get("tie_group")
            y0 = top + row * start
            fill = _BANDS[(int(group or 1) - 1) % 2]
            out.append(f'<g class="tie-group" data-group="{group}">'
                       f'<rect x="0" y="{y0}" width="{width}" height="{row * (i - start)}" '
                       f'fill="{fill}"/><text x="{width - 4}" y="{y0 + 14}" '
                       f'text-anchor="end" fill="#456">tie group {group}</text></g>')
            start = i
    for k in range(5):
        tick = lo + (hi - lo) * k / 4
        out.append(f'<line x1="{x(tick):.1f}" y1="{top}" x2="{x(tick):.1f}" '
                   f'y2="{height - bottom}" stroke="#ccc" class="grid"/>'
                   f'<text x="{x(tick):.1f}" y="{height - bottom + 14}" text-anchor="middle" '
                   f'fill="#333">{tick:.3g}</text>')
    for key, colour, dy in (("floor", "#a0522d", 28), ("oracle", "#2e7d32", 40)):
        value = bench.get(key)
        if value is None or not math.isfinite(value):
            continue
        source = html.escape(str(bench.get(f"{key}_from") or ""))
        out.append(f'<g class="ref ref-{key}"><title>{key} {value:.3f}: {source}</title>'
                   f'<line x1="{x(value):.1f}" y1="{top - 8}" x2="{x(value):.1f}" '
                   f'y2="{height - bottom}" stroke="{colour}" stroke-dasharray="5,3" '
                   f'stroke-width="1.5"/><text x="{x(value) + 3:.1f}" y="{dy}" '
                   f'fill="{colour}">{key} {value:.3g}</text></g>')
    for i, e in enumerate(entries):
        y = top + row * i + row / 2
        setup = "" if e.get("setup") in (None, "default") else f" — {e['setup']}"
        name = e.get("name") or e["entry"]
        label = _short(f"{e['rank']}. {name}{setup}", 52)
        tip = (f"{e['rank']}. {name}{setup}: {_fmt(e['score'])} "
               f"[{_fmt(e['ci_lo'])}, {_fmt(e['ci_hi'])}], rank interval "
               f"{e['rank_lo']}–{e['rank_hi']}, tie group {e.get('tie_group')}, n {e['n']}")
        colour = {"oracle": "#2e7d32", "floor": "#a0522d"}.get(e.get("reference") or "", "#c33")
        out.append(f'<g class="row"><title>{html.escape(tip)}</title>'
                   f'<text x="4" y="{y + 4:.1f}" class="label" fill="#222">'
                   f"{html.escape(label)}</text>")
        if e["ci_lo"] is not None and e["ci_hi"] is not None:
            out.append(f'<line x1="{x(e["ci_lo"]):.1f}" y1="{y:.1f}" x2="{x(e["ci_hi"]):.1f}" '
                       f'y2="{y:.1f}" stroke="#357" stroke-width="2" class="ci"/>')
        if e["score"] is not None:
            out.append(f'<circle cx="{x(e["score"]):.1f}" cy="{y:.1f}" r="4" '
                       f'fill="{colour}" class="dot"/>')
        out.append("</g>")
    out.append(f'<text x="4" y="{height - 4}" fill="#555">dot: mean score (green: oracle, '
               f'brown: floor reference); bar: {round(level * 100)}% interval; band: a tie '
               f"group (rank intervals overlap); dashed: floor and oracle</text></svg>")
    return "".join(out)


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
    log_dirs = sorted({log["log_file"].rsplit("/", 1)[0] if "://" in log["log_file"]
                       else str(Path(log["log_file"]).parent) for log in document["logs"]})
    common = {"title": title, "doc": document, "log_dirs": log_dirs}
    pictures = {b["slug"]: board_svg(b, level=document["level"])
                for b in document["benchmarks"]}
    for bench in document["benchmarks"]:
        page = env.get_template("benchmark.html.j2").render(
            **common, bench=bench, picture=pictures[bench["slug"]],
            matrix=_pair_matrix(bench["entries"], bench["pairwise"]))
        (folder / f"{bench['slug']}.html").write_text(page)
        (folder / f"{bench['slug']}.svg").write_text(pictures[bench["slug"]] + "\n")
    index = folder / "index.html"
    index.write_text(env.get_template("index.html.j2").render(**common, pictures=pictures))
    return index
