"""Images of text (Pillow): the facts that only a model that can see will recover.

Why images: a scraper that reads HTML gets every table and footnote, but not the text
painted into a PNG; the Webscape benchmark needs some facts that way so that vision
matters. Boards are drawn deterministically (same world -> same bytes).
"""

from __future__ import annotations

import functools
import io
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

_FONT_FILES = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"),
)
LINE_HEIGHT = 24
WIDTH = 420


@functools.cache
def _font(size: int = 17) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for path in _FONT_FILES:
        if path.exists():
            return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size)


def text_board(title: str, lines: list[str]) -> bytes:
    """A PNG notice board: a dark title bar and one text line per entry."""
    height = 16 + LINE_HEIGHT * (len(lines) + 1) + 12
    img = Image.new("RGB", (WIDTH, height), (252, 248, 236))
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, WIDTH, LINE_HEIGHT + 10), fill=(40, 52, 80))
    draw.text((12, 6), title, fill=(255, 255, 255), font=_font(16))
    for i, line in enumerate(lines):
        draw.text((14, 18 + LINE_HEIGHT * (i + 1)), line, fill=(20, 20, 20), font=_font())
    out = io.BytesIO()
    img.save(out, format="PNG", optimize=False, compress_level=1)
    return out.getvalue()
