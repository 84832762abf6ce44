"""Seeded recolouring scenes with an instruction and a ground-truth edit region (the
CoCoEdit paper's content-consistent editing setting, in miniature). No Inspect imports."""

from environments.cocoedit.scenes import (
    PALETTE,
    SHAPES,
    EditSet,
    leaky_targets,
    make_edit_set,
)

__all__ = ["PALETTE", "SHAPES", "EditSet", "leaky_targets", "make_edit_set"]
