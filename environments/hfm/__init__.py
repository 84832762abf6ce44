"""Few-shot episodes on a frozen digit encoder's features with text roots (the Hyperbolic
Flow Matching method task's world). No Inspect imports."""

from environments.hfm.digits import (
    BASE_CLASSES,
    CLASS_NAMES,
    NOVEL_CLASSES,
    Episode,
    encoder_features,
    make_episode,
    reduce_roots,
)

__all__ = ["BASE_CLASSES", "CLASS_NAMES", "NOVEL_CLASSES", "Episode", "encoder_features",
           "make_episode", "reduce_roots"]
