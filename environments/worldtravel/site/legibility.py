"""Read image facts back from their pixels: the legibility proof of the site's images.

Why: a fact that exists only as pixels is only fair if it can be seen. For every image
fact the renderer records where it drew each part (:class:`~.glyphs.Mark`); this module
decodes the PNG bytes at those places with nothing but the pixels (glyph cells sampled
and looked up in the bitmap font, cell colours, bar heights) and returns the value in the
world's own terms, so a test can compare it with the world record. It never reads the
world. Bar heights are also checked against the printed labels (within a pixel), so a
chart is legible from its bars as well as from its numbers.
"""

from __future__ import annotations

from typing import Any

from environments.worldtravel.model import parse_hhmm
from environments.worldtravel.site.glyphs import Mark, decode_png, read_bar, read_cell, read_text
from environments.worldtravel.site.images import BAR, CLOSED, SLOT_ON
from environments.worldtravel.site.render import Fact, SiteBuild


class IllegibleError(ValueError):
    """The pixels at a fact's marks do not decode to a consistent value."""


def decode_fact(build: SiteBuild, fact: Fact) -> Any:
    """The value of image fact ``fact`` as decoded from its PNG (world-comparable).

    Returns, by medium: ``travel_map`` -> ``{dest: (walk, transit, taxi, fare)}``;
    ``calendar`` -> sorted closed dates; ``price_chart`` -> prices in date order;
    ``slot_grid`` -> sorted start minutes; ``notice`` -> minutes (check-in/out) or days.
    """
    if fact.asset is None or fact.presentation != "image":
        raise ValueError(f"{fact.key} is not an image fact")
    px = decode_png(build.files[fact.asset])
    marks = [m for m in build.marks.get(fact.asset, []) if m.key == fact.key]
    if not marks:
        raise IllegibleError(f"{fact.key}: no marks recorded in {fact.asset}")
    decoder = _DECODERS.get(fact.medium)
    if decoder is None:
        raise ValueError(f"unknown image medium {fact.medium!r}")
    return decoder(px, marks, fact)


def _glyphs(px: Any, marks: list[Mark]) -> dict[str, str]:
    return {m.part: read_text(px, m.boxes) for m in marks if m.kind == "glyphs"}


def _travel(px: Any, marks: list[Mark], fact: Fact) -> dict[str, tuple[int, ...]]:
    text = _glyphs(px, marks)
    dests: dict[str, dict[str, int]] = {}
    for part, value in text.items():
        mode, dest = part.split(":", 1)
        dests.setdefault(dest, {})[mode] = int(value)
    return {d: (v["walk"], v["transit"], v["taxi"], v["fare"]) for d, v in dests.items()}


def _calendar(px: Any, marks: list[Mark], fact: Fact) -> list[str]:
    labels = _glyphs(px, marks)
    closed = []
    for m in marks:
        if m.kind != "cell":
            continue
        if labels.get(m.part) != m.part[5:]:
            raise IllegibleError(f"{fact.key}: cell label {labels.get(m.part)!r} for {m.part}")
        if read_cell(px, m.boxes[0], CLOSED):
            closed.append(m.part)
    return sorted(closed)


def _prices(px: Any, marks: list[Mark], fact: Fact) -> list[int]:
    labels = _glyphs(px, marks)
    prices = []
    for m in marks:
        if m.kind != "bar":
            continue
        price = int(labels[m.part])
        height = read_bar(px, m.boxes[0], BAR)
        if abs(height - price * m.scale) > 1:
            raise IllegibleError(f"{fact.key} {m.part}: bar {height}px for label {price}")
        prices.append(price)
    return prices


def _slots(px: Any, marks: list[Mark], fact: Fact) -> list[int]:
    on = [m.part for m in marks if m.kind == "cell" and read_cell(px, m.boxes[0], SLOT_ON)]
    return sorted(parse_hhmm(t) or 0 for t in on)


def _notice(px: Any, marks: list[Mark], fact: Fact) -> int:
    [value] = _glyphs(px, marks).values()
    minutes = parse_hhmm(value)
    return int(value) if minutes is None else minutes


_DECODERS = {
    "travel_map": _travel,
    "calendar": _calendar,
    "price_chart": _prices,
    "slot_grid": _slots,
    "notice": _notice,
}
