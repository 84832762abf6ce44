"""A 5x7 bitmap font drawn into numpy images, and the decoder that reads it back.

Why our own bitmap font instead of a TrueType one: the facts painted into the site's
images must be provably legible, and deterministic across machines. Every glyph is a
5x7 grid of on/off cells scaled to ``scale`` pixels per cell, drawn at integer positions
with no anti-aliasing, so (1) the same text gives the same bytes on any machine (no font
files, no hinting), and (2) a decoder that knows nothing about the world can read a glyph
back exactly by sampling the centre of each cell inside its box. The renderer records the
box of every glyph it draws (:class:`Mark`); the legibility proof decodes the pixels at
those boxes and compares the result with the world.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive), in image pixels
Color = tuple[int, int, int]

_ROWS: dict[str, tuple[str, ...]] = {
    "0": (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    "1": ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "2": (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    "3": ("#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."),
    "4": ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    "5": ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    "6": ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    "7": ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    "8": (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    "9": (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
    "A": (".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "B": ("####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."),
    "C": (".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."),
    "D": ("###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."),
    "E": ("#####", "#....", "#....", "####.", "#....", "#....", "#####"),
    "F": ("#####", "#....", "#....", "####.", "#....", "#....", "#...."),
    "G": (".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"),
    "H": ("#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "I": (".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "J": ("..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."),
    "K": ("#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"),
    "L": ("#....", "#....", "#....", "#....", "#....", "#....", "#####"),
    "M": ("#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"),
    "N": ("#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"),
    "O": (".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "P": ("####.", "#...#", "#...#", "####.", "#....", "#....", "#...."),
    "Q": (".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"),
    "R": ("####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"),
    "S": (".####", "#....", "#....", ".###.", "....#", "....#", "####."),
    "T": ("#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."),
    "U": ("#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "V": ("#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."),
    "W": ("#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."),
    "X": ("#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"),
    "Y": ("#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."),
    "Z": ("#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"),
    ":": (".....", "..#..", "..#..", ".....", "..#..", "..#..", "....."),
    "-": (".....", ".....", ".....", "#####", ".....", ".....", "....."),
    ".": (".....", ".....", ".....", ".....", ".....", ".##..", ".##.."),
    "/": ("....#", "....#", "...#.", "..#..", ".#...", "#....", "#...."),
    "(": ("...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."),
    ")": (".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."),
    ",": (".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."),
    "+": (".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."),
    " ": (".....", ".....", ".....", ".....", ".....", ".....", "....."),
}
GLYPH_W, GLYPH_H = 5, 7
ADVANCE = 6  # cells per character, including one blank column
LINE = 9  # cells per text line, including two blank rows

GLYPHS: dict[str, np.ndarray] = {
    ch: np.array([[c == "#" for c in row] for row in rows], dtype=bool)
    for ch, rows in _ROWS.items()
}
_BY_PATTERN: dict[bytes, str] = {g.tobytes(): ch for ch, g in GLYPHS.items()}
assert len(_BY_PATTERN) == len(GLYPHS), "two glyphs share a bitmap"


@dataclass
class Mark:
    """Where the renderer drew one part of a fact (the legibility proof reads it back).

    ``kind`` is ``glyphs`` (``boxes`` are the character boxes of a string), ``cell`` (one
    box whose fill colour is the value: ``on``/``off``) or ``bar`` (one box: the bar, whose
    height in pixels is the value times ``scale``). ``part`` names what the mark shows
    within the fact (``walk:AVA-R03``, ``2026-06-03``, ...).
    """

    key: str
    part: str
    kind: str
    boxes: list[Box] = field(default_factory=list)
    scale: float = 1.0


class Canvas:
    """An RGB image as a numpy array, with glyph and rectangle drawing that records boxes."""

    def __init__(self, width: int, height: int, background: Color = (252, 250, 244)) -> None:
        self.px = np.empty((height, width, 3), dtype=np.uint8)
        self.px[:, :] = background
        self.marks: list[Mark] = []

    @property
    def width(self) -> int:
        return int(self.px.shape[1])

    @property
    def height(self) -> int:
        return int(self.px.shape[0])

    def rect(self, box: Box, color: Color) -> None:
        """Fill ``box`` (clipped to the image)."""
        x0, y0, x1, y1 = box
        self.px[max(0, y0) : max(0, y1), max(0, x0) : max(0, x1)] = color

    def outline(self, box: Box, color: Color, width: int = 1) -> None:
        """A rectangle outline ``width`` pixels thick."""
        x0, y0, x1, y1 = box
        self.rect((x0, y0, x1, y0 + width), color)
        self.rect((x0, y1 - width, x1, y1), color)
        self.rect((x0, y0, x0 + width, y1), color)
        self.rect((x1 - width, y0, x1, y1), color)

    def text(self, x: int, y: int, text: str, color: Color, scale: int = 2) -> list[Box]:
        """Draw ``text`` (upper-cased) with its top-left at (x, y); the glyph boxes."""
        boxes = []
        for i, ch in enumerate(text.upper()):
            glyph = GLYPHS.get(ch)
            if glyph is None:
                raise ValueError(f"no glyph for {ch!r} in {text!r}")
            gx = x + i * ADVANCE * scale
            box = (gx, y, gx + GLYPH_W * scale, y + GLYPH_H * scale)
            if glyph.any():
                mask = _scaled(ch, scale)
                region = self.px[box[1] : box[3], box[0] : box[2]]
                region[mask[: region.shape[0], : region.shape[1]]] = color
            boxes.append(box)
        return boxes

    def points(self, xs: np.ndarray, ys: np.ndarray, color: Color) -> None:
        """Set the pixels at integer coordinates ``(xs, ys)`` (clipped): lines, crosses."""
        keep = (xs >= 0) & (xs < self.width) & (ys >= 0) & (ys < self.height)
        self.px[ys[keep], xs[keep]] = color

    def mark(self, key: str, part: str, kind: str, boxes: list[Box], scale: float = 1.0) -> None:
        """Record where a fact's part was drawn."""
        self.marks.append(Mark(key, part, kind, list(boxes), scale))

    def png(self) -> bytes:
        """The image as PNG bytes (fixed compression: same pixels, same bytes)."""
        import io

        from PIL import Image

        out = io.BytesIO()
        Image.fromarray(self.px, "RGB").save(out, format="PNG", compress_level=3)
        return out.getvalue()


@functools.cache
def _scaled(ch: str, scale: int) -> np.ndarray:
    return np.kron(GLYPHS[ch], np.ones((scale, scale), dtype=bool))


def text_width(text: str, scale: int = 2) -> int:
    """Pixel width of ``text`` drawn at ``scale``."""
    return len(text) * ADVANCE * scale


# ------------------------------------------------------------------ decoding (pixels only)
def _ink(pixel: np.ndarray, background: np.ndarray) -> bool:
    return bool(np.abs(pixel.astype(int) - background.astype(int)).sum() > 96)


def read_glyph(px: np.ndarray, box: Box) -> str:
    """The character drawn in ``box``: sample each cell's centre, look the bitmap up.

    The background is the colour at the box's top-right cell of the blank column's
    neighbour (a glyph never inks its whole first row and last column at once, but the
    space and '-' rows are blank), so coloured chart backgrounds decode as well.
    Raises ValueError when the pixels are no glyph of the font.
    """
    x0, y0, x1, y1 = box
    sx, sy = (x1 - x0) / GLYPH_W, (y1 - y0) / GLYPH_H
    background = px[y0, min(px.shape[1] - 1, x1)]  # the blank column right of the glyph
    cells = np.zeros((GLYPH_H, GLYPH_W), dtype=bool)
    for r in range(GLYPH_H):
        for c in range(GLYPH_W):
            cells[r, c] = _ink(px[int(y0 + (r + 0.5) * sy), int(x0 + (c + 0.5) * sx)], background)
    found = _BY_PATTERN.get(cells.tobytes())
    if found is None:
        raise ValueError(f"no glyph of the font at {box}")
    return found


def read_text(px: np.ndarray, boxes: list[Box]) -> str:
    """The string drawn in ``boxes`` (trailing spaces kept)."""
    return "".join(read_glyph(px, b) for b in boxes)


def read_cell(px: np.ndarray, box: Box, on: Color) -> bool:
    """Whether the cell in ``box`` is filled with ``on`` (sampled near its top-right
    corner, clear of the cross-out a closed calendar day carries)."""
    x0, y0, x1, y1 = box
    pixel = px[y0 + 2, x1 - 3].astype(int)
    return bool(np.abs(pixel - np.array(on)).sum() < 30)


def read_bar(px: np.ndarray, box: Box, color: Color) -> int:
    """Height in pixels of the bar of ``color`` standing on the bottom edge of ``box``."""
    x0, y0, x1, y1 = box
    column = px[y0:y1, (x0 + x1) // 2].astype(int)
    filled = np.abs(column - np.array(color)).sum(axis=1) < 30
    height = 0
    for value in filled[::-1]:
        if not value:
            break
        height += 1
    return height


def decode_png(data: bytes) -> np.ndarray:
    """PNG bytes -> RGB pixel array (what a decoder reads)."""
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
