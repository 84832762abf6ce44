"""Minimal pairs differ in one marked place; CKA and RSA score what they should."""

from __future__ import annotations

import numpy as np

from environments.brain_compression import PHENOMENA, linear_cka, minimal_pairs, rsa


def test_pairs_are_seeded_and_differ_by_one_word() -> None:
    pairs = minimal_pairs(10, seed=1)
    assert pairs == minimal_pairs(10, seed=1) and pairs != minimal_pairs(10, seed=2)
    assert [p.phenomenon for p in pairs] == [n for n in PHENOMENA for _ in range(10)]
    for p in pairs:
        good, bad = p.good.split(), p.bad.split()
        assert len(good) == len(bad)
        assert sum(g != b for g, b in zip(good, bad, strict=True)) == 1, p


def test_grammatical_side_is_the_right_one() -> None:
    for p in minimal_pairs(20, seed=0):
        if p.phenomenon == "agreement":
            subject = p.good.split()[1]
            assert ("are" in p.good.split()) == subject.endswith("s")
        if p.phenomenon == "past_tense":
            assert not any(w in p.good for w in ("eated", "goed", "runned", "seed "))


def test_cka_and_rsa() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(60, 8))
    q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    assert abs(linear_cka(a, 3.0 * a @ q) - 1.0) < 1e-9
    assert linear_cka(a, rng.normal(size=(60, 8))) < 0.5
    assert abs(rsa(a, a) - 1.0) < 1e-9
    noisy = a + 0.1 * rng.normal(size=a.shape)
    assert rsa(a, noisy) > rsa(a, rng.normal(size=a.shape))
