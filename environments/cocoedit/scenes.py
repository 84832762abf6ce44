"""Small RGB scenes, an edit instruction each, its region and the ideal edited image.

A scene is ``size x size`` RGB in [0, 1]: a smooth random background (a colour gradient
plus faint noise) and an object, a square or a disk (with ``distractor``, both, placed
apart), filled with one of :data:`PALETTE`'s colours. An instruction is "make the <shape> <colour>"
(a shape index and a palette index different from the object's colour); its region is the
object's mask, and the ideal edit recolours exactly that region and leaves every other
pixel alone. Instructions are encoded as one-hot vectors (shape, colour) so an editor
needs no text model.

:func:`leaky_targets` makes the supervised targets an off-the-shelf editor is pre-trained
on in this miniature: the ideal edit plus a global tint of the whole image toward the new
colour (strength ``leak``), the unwanted change in unintended regions that the paper sets
out to remove.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

PALETTE: Array = np.array([
    [0.9, 0.1, 0.1], [0.1, 0.8, 0.1], [0.15, 0.25, 0.95],
    [0.95, 0.85, 0.1], [0.8, 0.1, 0.85], [0.1, 0.85, 0.85],
])
"""The colours an object can have or be recoloured to (red, green, blue, yellow,
magenta, cyan)."""

SHAPES = ("square", "disk")


@dataclass(frozen=True)
class EditSet:
    """``n`` edit problems: sources ``(n, 3, s, s)``, instructions ``(n, 2 + K)`` one-hot,
    region masks ``(n, s, s)`` (0/1), ideal targets ``(n, 3, s, s)``, and the requested
    colours ``(n, 3)``."""

    source: Array
    instruction: Array
    mask: Array
    target: Array
    colour: Array


def _background(rng: np.random.Generator, size: int) -> Array:
    lo, hi = rng.uniform(0.2, 0.6, size=3), rng.uniform(0.2, 0.6, size=3)
    angle = rng.uniform(0, 2 * np.pi)
    yy, xx = np.mgrid[0:size, 0:size] / max(size - 1, 1)
    t = 0.5 + 0.5 * (np.cos(angle) * (xx - 0.5) + np.sin(angle) * (yy - 0.5))
    img = lo[:, None, None] * (1 - t) + hi[:, None, None] * t
    return np.asarray(np.clip(img + rng.normal(0, 0.02, img.shape), 0, 1))


def _masks(rng: np.random.Generator, size: int) -> tuple[Array, Array]:
    """A square and a disk on opposite halves (left/right or top/bottom, at random)."""
    yy, xx = np.mgrid[0:size, 0:size]
    half = size // 2
    side = int(rng.integers(3, max(4, size // 3) + 1))
    radius = float(rng.uniform(1.6, max(2.0, size / 5)))
    flip, vertical = bool(rng.integers(2)), bool(rng.integers(2))
    boxes = [(0, half), (half, size)]
    if flip:
        boxes = boxes[::-1]
    (a0, a1), (b0, b1) = boxes

    def place(lo: int, hi: int, extent: int) -> int:
        return int(rng.integers(lo, max(lo + 1, hi - extent + 1)))

    sq_main, sq_other = place(a0, a1, side), place(0, size, side)
    c = int(np.ceil(radius))
    dk_main = place(b0 + c, b1 - c, 1) if b1 - b0 > 2 * c else (b0 + b1) // 2
    dk_other = place(c, size - c, 1)
    if vertical:
        square = ((yy >= sq_main) & (yy < sq_main + side)
                  & (xx >= sq_other) & (xx < sq_other + side))
        disk = (yy - dk_main) ** 2 + (xx - dk_other) ** 2 <= radius**2
    else:
        square = ((xx >= sq_main) & (xx < sq_main + side)
                  & (yy >= sq_other) & (yy < sq_other + side))
        disk = (xx - dk_main) ** 2 + (yy - dk_other) ** 2 <= radius**2
    return square.astype(float), (disk & ~square).astype(float)


def make_edit_set(n: int, size: int = 12, seed: int = 0, distractor: bool = False) -> EditSet:
    """``n`` seeded scenes, each with one recolouring instruction and its ideal edit; with
    ``distractor`` the other shape is drawn too (the editor must tell them apart)."""
    rng = np.random.default_rng(seed)
    k = len(PALETTE)
    sources, instr, masks, targets, colours = [], [], [], [], []
    for _ in range(n):
        img = _background(rng, size)
        shape_masks = _masks(rng, size)
        which = int(rng.integers(2))
        own = rng.choice(k, size=2, replace=False)
        drawn = range(2) if distractor else (which,)
        for j in drawn:
            img = img * (1 - shape_masks[j]) + PALETTE[own[j]][:, None, None] * shape_masks[j]
        new = int(rng.choice([c for c in range(k) if c != own[which]]))
        m = shape_masks[which]
        code = np.zeros(2 + k)
        code[which], code[2 + new] = 1.0, 1.0
        sources.append(img)
        instr.append(code)
        masks.append(m)
        targets.append(img * (1 - m) + PALETTE[new][:, None, None] * m)
        colours.append(PALETTE[new])
    return EditSet(np.stack(sources), np.stack(instr), np.stack(masks), np.stack(targets),
                   np.stack(colours))


def leaky_targets(edits: EditSet, leak: float = 0.35) -> Array:
    """The ideal edits with every pixel outside the region tinted toward the new colour by
    ``leak`` (0 = the ideal edit)."""
    outside = 1.0 - edits.mask[:, None]
    tint = edits.source + leak * (edits.colour[:, :, None, None] - edits.source)
    return np.asarray(edits.target * (1 - outside) + tint * outside)
