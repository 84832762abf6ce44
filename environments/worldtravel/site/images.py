"""The site's images: facts that exist only as pixels (numpy drawing, the bitmap font).

Why images: a scraper (or a text-only browsing agent) reads every table and footnote, but
not what is painted into a PNG; the Webscape benchmark needs facts that decide feasibility
that way, so that vision matters. Five kinds, each with no text or accessibility-tree
equivalent on the site (the ``<img>`` alt text names the picture, never its content):

- ``notice``: a notice board of label/value lines (check-in/out times, booking lead);
- ``travel_map``: a city map with the origin and every place drawn, beside a drawn matrix
  of door-to-door minutes by mode and taxi fares from the origin;
- ``calendar``: an opening calendar, closed dates filled red and crossed;
- ``price_chart``: a price-by-date bar chart of a hotel room (one panel per week, each bar
  labelled with its price);
- ``slot_grid``: a positional grid of bookable start times (rows are hours, columns are
  five-minute steps; a filled cell is a bookable time).

Every builder returns the PNG and the :class:`~environments.worldtravel.site.glyphs.Mark`
list of where each fact's parts were drawn. Same input, same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from environments.worldtravel.site.glyphs import Canvas, Color, Mark, text_width

INK: Color = (28, 32, 48)
PAPER: Color = (252, 250, 244)
TITLE_BG: Color = (40, 52, 80)
TITLE_FG: Color = (255, 255, 255)
OPEN: Color = (206, 238, 206)
CLOSED: Color = (240, 170, 170)
SLOT_ON: Color = (46, 110, 190)
SLOT_OFF: Color = (236, 238, 242)
BAR: Color = (70, 120, 180)
GRID: Color = (170, 176, 190)
S = 2  # glyph scale: 10x14 px characters on a 12x18 px grid


@dataclass
class Drawn:
    """One image: its PNG bytes and where each fact part sits in it."""

    png: bytes
    marks: list[Mark]


def _title(canvas: Canvas, title: str) -> int:
    canvas.rect((0, 0, canvas.width, 30), TITLE_BG)
    canvas.text(10, 8, title, TITLE_FG, S)
    return 40


def notice(key: str, title: str, rows: list[tuple[str, str, str]]) -> Drawn:
    """A notice board: one ``LABEL VALUE`` line per (part, label, value) row."""
    width = 24 + max(text_width(f"{label} {value}") for _, label, value in rows)
    width = max(width, 24 + text_width(title))
    canvas = Canvas(width, 50 + 24 * len(rows))
    y = _title(canvas, title)
    for part, label, value in rows:
        x = 12 + text_width(label + " ")
        canvas.text(12, y, label, INK, S)
        canvas.mark(key, part, "glyphs", canvas.text(x, y, value, INK, S))
        y += 24
    return Drawn(canvas.png(), canvas.marks)


MATRIX_MODES = ("walk", "transit", "taxi", "fare")


def travel_map(
    key: str,
    title: str,
    coords: list[tuple[float, float]],
    origin: int,
    rows: list[tuple[str, dict[str, int]]],
) -> Drawn:
    """A city map (every place a dot, the origin a ring, a line to each place) and the
    drawn matrix: one row per destination id with walk/transit/taxi minutes and taxi fare.
    """
    map_size, row_h = 300, 20
    id_w = max(text_width(dest) for dest, _ in rows) + 12
    col_w = text_width("TRANSIT") + 12
    width = 20 + map_size + 20 + id_w + col_w * len(MATRIX_MODES) + 10
    canvas = Canvas(width, max(360, 70 + row_h * (len(rows) + 1)))
    top = _title(canvas, title)
    # the map: coordinates scaled into a square panel
    xs, ys = np.array([c[0] for c in coords]), np.array([c[1] for c in coords])
    span = max(float(np.ptp(xs)), float(np.ptp(ys)), 1e-6)

    def at(i: int) -> tuple[int, int]:
        x = 20 + 10 + (xs[i] - xs.min()) / span * (map_size - 20)
        y = top + 10 + (ys.max() - ys[i]) / span * (map_size - 20)
        return int(x), int(y)

    canvas.outline((20, top, 20 + map_size, top + map_size), GRID)
    ox, oy = at(origin)
    t = np.linspace(0.0, 1.0, 120)
    for i in range(len(coords)):
        x, y = at(i)
        canvas.points((ox + (x - ox) * t).astype(int), (oy + (y - oy) * t).astype(int), GRID)
    for i in range(len(coords)):
        x, y = at(i)
        canvas.rect((x - 3, y - 3, x + 4, y + 4), INK)
    canvas.outline((ox - 8, oy - 8, ox + 9, oy + 9), (190, 40, 40), 3)
    # the matrix
    x0 = 20 + map_size + 20
    canvas.text(x0, top, "TO", INK, S)
    for k, mode in enumerate(MATRIX_MODES):
        canvas.text(x0 + id_w + k * col_w, top, mode, INK, S)
    y = top + row_h + 4
    canvas.rect((x0, y - 5, width - 10, y - 4), GRID)
    for dest, values in rows:
        canvas.text(x0, y, dest, INK, S)
        for k, mode in enumerate(MATRIX_MODES):
            boxes = canvas.text(x0 + id_w + k * col_w, y, str(values[mode]), INK, S)
            canvas.mark(key, f"{mode}:{dest}", "glyphs", boxes)
        y += row_h
    return Drawn(canvas.png(), canvas.marks)


def calendar(key: str, title: str, dates: list[str], first_weekday: int, closed: set[str]) -> Drawn:
    """An opening calendar: Mon..Sun columns, ``MM-DD`` per cell, closed cells red + X."""
    cell_w, cell_h = 76, 40
    canvas = Canvas(20 + 7 * cell_w, 90 + cell_h * ((first_weekday + len(dates) + 6) // 7))
    top = _title(canvas, title)
    for i, day in enumerate(("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")):
        canvas.text(10 + i * cell_w + 20, top, day, INK, S)
    top += 24
    for n, date in enumerate(dates):
        slot = first_weekday + n
        x, y = 10 + (slot % 7) * cell_w, top + (slot // 7) * cell_h
        box = (x + 1, y + 1, x + cell_w - 1, y + cell_h - 1)
        shut = date in closed
        canvas.rect(box, CLOSED if shut else OPEN)
        label = date[5:]
        canvas.mark(key, date, "glyphs", canvas.text(x + 6, y + 4, label, INK, S))
        # the state swatch: the cell's lower band (a cross on closed days)
        swatch = (x + 6, y + 24, x + cell_w - 6, y + cell_h - 4)
        canvas.mark(key, date, "cell", [swatch])
        if shut:  # a thick diagonal cross-out through the swatch
            t = np.linspace(0.0, 1.0, 80)
            xs = (swatch[0] + (swatch[2] - swatch[0] - 2) * t).astype(int)
            ys = (swatch[1] + (swatch[3] - swatch[1] - 2) * t).astype(int)
            for dx in (0, 1):
                for dy in (0, 1):
                    canvas.points(xs + dx, ys + dy, INK)
    return Drawn(canvas.png(), canvas.marks)


def price_chart(
    key: str, title: str, dates: list[str], first_weekday: int, prices: list[int]
) -> Drawn:
    """Price-by-date bars, one panel per calendar week; each bar labelled with its price.

    Bar height is ``price * scale`` pixels (``scale`` in the bar's mark), so the chart can
    be read from the bars (to the pixel) as well as from the labels (exactly).
    """
    bar_w, gap, plot_h = 40, 10, 90
    scale = plot_h / max(prices)
    weeks = (first_weekday + len(dates) + 6) // 7
    panel_h = plot_h + 56
    canvas = Canvas(60 + 7 * (bar_w + gap), 40 + weeks * panel_h + 10)
    top = _title(canvas, title)
    for n, (date, price) in enumerate(zip(dates, prices, strict=True)):
        slot = first_weekday + n
        week, col = slot // 7, slot % 7
        base_y = top + week * panel_h + 18 + plot_h
        x = 40 + col * (bar_w + gap)
        if col == 0 or n == 0:
            canvas.rect((36, base_y, 40 + 7 * (bar_w + gap), base_y + 1), GRID)
        height = round(price * scale)
        canvas.rect((x, base_y - height, x + bar_w, base_y), BAR)
        canvas.mark(key, date, "bar", [(x, base_y - plot_h - 1, x + bar_w, base_y)], scale)
        label = str(price)
        lx = x + (bar_w - text_width(label, 1)) // 2
        canvas.mark(key, date, "glyphs", canvas.text(lx, base_y - height - 10, label, INK, 1))
        canvas.mark(key, f"day:{date}", "glyphs", canvas.text(x + 8, base_y + 6, date[8:], INK, S))
    return Drawn(canvas.png(), canvas.marks)


SLOT_HOURS = range(8, 24)


def slot_grid(key: str, title: str, slots: list[int]) -> Drawn:
    """Bookable start times as a grid: hour rows 08..23, five-minute columns 00..55."""
    cell_w, cell_h = 28, 20
    canvas = Canvas(50 + 12 * cell_w + 10, 64 + cell_h * len(SLOT_HOURS) + 8)
    top = _title(canvas, title)
    for c in range(12):
        canvas.text(50 + c * cell_w + 2, top, f"{5 * c:02d}", INK, S)
    top += 22
    on = set(slots)
    for r, hour in enumerate(SLOT_HOURS):
        y = top + r * cell_h
        canvas.text(8, y + 3, f"{hour:02d}", INK, S)
        for c in range(12):
            minute = hour * 60 + 5 * c
            box = (50 + c * cell_w + 1, y + 1, 50 + (c + 1) * cell_w - 1, y + cell_h - 1)
            canvas.rect(box, SLOT_ON if minute in on else SLOT_OFF)
            canvas.mark(key, f"{hour:02d}:{5 * c:02d}", "cell", [box])
    return Drawn(canvas.png(), canvas.marks)
