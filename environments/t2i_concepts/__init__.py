"""Seeded attribute-captioned shape images with a deliberate bias under neutral captions
(the T2I concept-vector paper's fairness setting, in miniature). No Inspect imports."""

from environments.t2i_concepts.images import (
    UNSPECIFIED,
    CaptionedImages,
    attributes,
    make_captioned,
    neutral_prompts,
)

__all__ = ["UNSPECIFIED", "CaptionedImages", "attributes", "make_captioned",
           "neutral_prompts"]
