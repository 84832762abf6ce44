"""Captioned shapes: seeded, the reader is exact, neutral captions carry the bias."""

from __future__ import annotations

import numpy as np

from environments.t2i_concepts import UNSPECIFIED, attributes, make_captioned, neutral_prompts


def test_seeded_and_read_exactly() -> None:
    a, b = make_captioned(300, seed=2), make_captioned(300, seed=2)
    assert np.array_equal(a.images, b.images) and a.images.shape == (300, 3, 8, 8)
    blue, large, visible = attributes(a.images)
    assert np.array_equal(blue, a.colour) and np.array_equal(large, a.large) and visible.all()


def test_named_attributes_follow_the_caption_and_neutral_ones_the_bias() -> None:
    d = make_captioned(4000, seed=1, bias=0.9)
    named = d.captions[:, 1] != UNSPECIFIED
    assert np.array_equal(d.colour[named], d.captions[named, 1])
    assert abs(d.colour[named].mean() - 0.5) < 0.05
    assert abs(d.colour[~named].mean() - 0.1) < 0.03  # neutral: red 90% of the time
    assert abs(d.large[d.captions[:, 2] == UNSPECIFIED].mean() - 0.1) < 0.03
    p = neutral_prompts(10, seed=3)
    assert (p[:, 1:] == UNSPECIFIED).all() and set(p[:, 0]) <= {0, 1}
