"""Small RGB images of one shape, captioned by (shape, colour, size), biased when a caption
leaves an attribute out.

An image is ``size x size`` RGB in [0, 1]: a dark noisy background and one object, a
square or a disk, red or blue, small or large, at a random place. A caption is three token
ids: the shape (0 square, 1 disk), the colour (0 red, 1 blue, 2 = :data:`UNSPECIFIED`) and
the size (0 small, 1 large, 2 = unspecified). With probability ``p_neutral`` an
attribute is left out of the caption, and then the image is drawn with the *biased* prior
(red and small with probability ``bias``); captions that name the attribute are balanced.
So a generator trained on these learns "an unspecified shape is red and small", the bias
concept vectors are meant to correct.

:func:`attributes` is the exact attribute reader the task scores generations with (colour
by the object's mean red vs blue, size by the object's pixel count).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
UNSPECIFIED = 2
RED = np.array([0.9, 0.15, 0.15])
BLUE = np.array([0.15, 0.15, 0.9])
SIZE = 8
LARGE_PIXELS = 15  # small shapes cover 9-13 pixels, large ones 21-25


@dataclass(frozen=True)
class CaptionedImages:
    """``images (n, 3, s, s)``, ``captions (n, 3)`` token ids, and the true attributes
    ``colour``, ``large`` (0/1 each)."""

    images: Array
    captions: IntArray
    colour: IntArray
    large: IntArray


def _draw(rng: np.random.Generator, shape: int, blue: int, large: int) -> Array:
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    img = 0.08 + rng.normal(0, 0.02, size=(3, SIZE, SIZE))
    if shape == 0:
        side = 5 if large else 3
        y0, x0 = rng.integers(0, SIZE - side + 1, size=2)
        mask = (yy >= y0) & (yy < y0 + side) & (xx >= x0) & (xx < x0 + side)
    else:
        radius = 2.6 if large else 1.6
        c = int(np.ceil(radius))
        cy, cx = rng.integers(c - 1, SIZE - c + 1, size=2)
        mask = (yy - cy) ** 2 + (xx - cx) ** 2 <= radius**2
    colour = (BLUE if blue else RED) * rng.uniform(0.92, 1.05)
    img = np.where(mask[None], colour[:, None, None], img)
    return np.asarray(np.clip(img, 0, 1))


def make_captioned(n: int, seed: int = 0, p_neutral: float = 0.5,
                   bias: float = 0.9) -> CaptionedImages:
    """``n`` seeded captioned images; neutral captions carry the ``bias`` (red, small)."""
    rng = np.random.default_rng(seed)
    images, captions, colours, larges = [], [], [], []
    for _ in range(n):
        shape = int(rng.integers(2))
        caption = [shape, 0, 0]
        attrs = []
        for slot in (1, 2):
            if rng.random() < p_neutral:
                value = int(rng.random() >= bias)  # the biased prior: 0 with prob. bias
                caption[slot] = UNSPECIFIED
            else:
                value = int(rng.integers(2))
                caption[slot] = value
            attrs.append(value)
        images.append(_draw(rng, shape, attrs[0], attrs[1]))
        captions.append(caption)
        colours.append(attrs[0])
        larges.append(attrs[1])
    return CaptionedImages(np.stack(images), np.array(captions, dtype=np.int64),
                           np.array(colours, dtype=np.int64), np.array(larges, dtype=np.int64))


def neutral_prompts(n: int, seed: int = 0) -> IntArray:
    """``n`` captions that name only the shape (colour and size unspecified)."""
    rng = np.random.default_rng(seed)
    shapes = rng.integers(0, 2, size=n)
    return np.column_stack([shapes, np.full(n, UNSPECIFIED), np.full(n, UNSPECIFIED)])


def attributes(images: Array) -> tuple[IntArray, IntArray, IntArray]:
    """Per image: blue (0/1), large (0/1), and whether an object is visible at all (0/1):
    the object is the pixels whose brightest channel exceeds 0.4."""
    obj = images.max(axis=1) > 0.4
    count = obj.sum(axis=(1, 2))
    red = (images[:, 0] * obj).sum(axis=(1, 2))
    blue = (images[:, 2] * obj).sum(axis=(1, 2))
    return ((blue > red).astype(np.int64), (count > LARGE_PIXELS).astype(np.int64),
            (count >= 5).astype(np.int64))
