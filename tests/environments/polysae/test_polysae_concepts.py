"""PolySAE's probe sentences are co-occurrence matched; the metrics score what they say."""

from __future__ import annotations

from collections import Counter

import numpy as np

from environments.polysae import (
    CONCEPTS,
    cooccurrence,
    cv_f1,
    fvu,
    pair_correlation,
    probe_sentences,
    synthetic_activations,
    topk_param_count,
)


def test_sentences_are_seeded_and_both_classes_hold_both_constituents() -> None:
    a, b = probe_sentences(8, seed=3), probe_sentences(8, seed=3)
    assert a == b and a != probe_sentences(8, seed=4)
    assert len(a) == 8 * 2 * len(CONCEPTS)
    for concept in CONCEPTS:
        rows = [s for s in a if s.concept == concept.name]
        assert Counter(s.label for s in rows) == {1: 8, 0: 8}
        for s in rows:
            words = s.text.replace(".", " ").replace(",", " ").split()
            assert concept.first in words and concept.second in words
            composed = f"{concept.first} {concept.second}" in s.text
            assert composed == bool(s.label), s.text


def test_binding_controls_have_the_same_words_as_some_positive() -> None:
    """A bag-of-words probe cannot separate a binding concept: the control sentences use
    exactly the positives' vocabulary (same colour and object lists)."""
    rows = [s for s in probe_sentences(30, seed=0) if s.concept == "red_cube"]
    vocab = {lab: set(" ".join(s.text for s in rows if s.label == lab).split())
             for lab in (0, 1)}
    assert vocab[0] == vocab[1]


def test_metrics() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5))
    assert fvu(x, x) == 0.0
    assert abs(fvu(x, np.tile(x.mean(0), (200, 1))) - 1.0) < 1e-12
    assert topk_param_count(576, 1024) == 2 * 576 * 1024 + 1024 + 576
    labels = np.repeat([0, 1], 50)
    separable = np.column_stack([labels + 0.1 * rng.normal(size=100), rng.normal(size=100)])
    assert cv_f1(separable, labels, 0) > 0.95
    assert cv_f1(rng.normal(size=(100, 2)), labels, 0) < 0.8
    active = rng.random((500, 6)) < 0.3
    active[:, 1] = active[:, 0]
    c = cooccurrence(active)
    assert np.allclose(np.diag(c), active.mean(0)) and c[0, 1] == active[:, 0].mean()
    assert pair_correlation(c, c, np.arange(6)) > 0.999


def test_synthetic_has_compositions_disjoint_from_cooccurring_pairs() -> None:
    data = synthetic_activations(0, n_train=200, n_test=50)
    assert data.train.shape == (200, 32) and data.test.shape == (50, 32)
    assert not set(data.composed.ravel()) & set(data.cooccurring.ravel())
    again = synthetic_activations(0, n_train=200, n_test=50)
    assert np.array_equal(data.train, again.train)
