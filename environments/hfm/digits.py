"""Few-shot episodes on features of a small frozen encoder, with text roots (the HFM method
task's world): sklearn's 8x8 digits, an encoder trained on the base classes 0-4 only, and
5-way episodes on the novel classes 5-9.

Why this shape: HFM (and the Euclidean flow matching it improves on) adapts a frozen
vision-language model to new classes from a few shots by transporting image features to
the text embedding ("root") of their class. Here the "vision model" is an MLP trained on
the base classes, aligned to the text roots by a ridge map fitted on the base classes
only (a CLIP-like shared space learned without the novel classes); the roots are the
caller's sentence embeddings of the class names, reduced to ``dim`` principal directions
of the ten roots. An image's feature is its aligned part (``dim``) followed by ``visual``
image-only coordinates (the encoder's principal directions on the base classes), where
every root is 0: the modality gap a flow must close. The novel classes' images were never
seen by the encoder or the map.

No Inspect, no torch: sklearn and numpy. The encoder and map are fitted once per process
(fixed seed 0: they are the frozen backbone, not a per-episode choice); an episode's
seed picks only its support shots.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

__all__ = ["BASE_CLASSES", "CLASS_NAMES", "NOVEL_CLASSES", "Episode", "encoder_features",
           "make_episode"]

BASE_CLASSES = (0, 1, 2, 3, 4)
NOVEL_CLASSES = (5, 6, 7, 8, 9)
CLASS_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


@dataclass(frozen=True)
class Episode:
    """A 5-way few-shot episode in the shared space: support/query features and labels
    (0..4 index the novel classes) and the novel classes' roots ``(5, dim)``."""

    support_x: Array
    support_y: NDArray[np.int64]
    query_x: Array
    query_y: NDArray[np.int64]
    roots: Array
    shots: int


@lru_cache(maxsize=1)
def encoder_features() -> tuple[Array, NDArray[np.int64]]:
    """Hidden-layer features (64 ReLU units) of every digit image from an MLP trained on the
    base classes only, and the labels. Deterministic (seed 0)."""
    from sklearn.datasets import load_digits
    from sklearn.neural_network import MLPClassifier

    data = load_digits()
    x = data.data / 16.0
    y = data.target.astype(np.int64)
    base = np.isin(y, BASE_CLASSES)
    mlp = MLPClassifier(hidden_layer_sizes=(64,), max_iter=400, random_state=0)
    mlp.fit(x[base], y[base])
    hidden = np.maximum(x @ mlp.coefs_[0] + mlp.intercepts_[0], 0.0)
    return hidden, y


def reduce_roots(text: Array, dim: int) -> Array:
    """The ten class-name embeddings ``(10, D)`` on their top ``dim`` principal directions,
    scaled to unit RMS norm."""
    centred = text - text.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    roots = centred @ vt[:dim].T
    return roots / np.sqrt((roots**2).sum(axis=1).mean())


@lru_cache(maxsize=8)
def _shared(text_key: bytes, shape: tuple[int, int], dim: int, visual: int,
            ridge: float) -> tuple[Array, Array]:
    text = np.frombuffer(text_key, dtype=np.float64).reshape(shape)
    roots = reduce_roots(text, dim)
    h, y = encoder_features()
    base = np.isin(y, BASE_CLASSES)
    design = np.column_stack([h[base], np.ones(base.sum())])
    target = roots[y[base]]
    w = np.linalg.solve(design.T @ design + ridge * np.eye(design.shape[1]), design.T @ target)
    aligned = np.column_stack([h, np.ones(len(h))]) @ w
    # the image-only part (the modality gap): the encoder's top principal directions on the
    # base classes, at the aligned part's RMS norm; the roots are 0 there
    centre = h[base].mean(axis=0)
    _, _, vt = np.linalg.svd(h[base] - centre, full_matrices=False)
    extra = (h - centre) @ vt[:visual].T
    rms = np.sqrt((aligned[base] ** 2).sum(axis=1).mean() / (extra[base] ** 2).sum(axis=1).mean())
    extra *= rms
    shared = np.column_stack([aligned, extra])
    return shared, np.column_stack([roots, np.zeros((len(roots), visual))])


def make_episode(seed: int, shots: int, text: Array, *, dim: int = 8, visual: int = 8,
                 ridge: float = 1.0) -> Episode:
    """A 5-way ``shots``-shot episode on the novel classes; every other novel image is a
    query. ``text``: the ten class names' embeddings, ``(10, D)``, in digit order."""
    text = np.ascontiguousarray(text, dtype=np.float64)
    shared, roots = _shared(text.tobytes(), text.shape, dim, visual, ridge)
    _, y = encoder_features()
    rng = np.random.default_rng([seed, shots])
    support: list[int] = []
    for c in NOVEL_CLASSES:
        idx = np.flatnonzero(y == c)
        support.extend(rng.choice(idx, size=shots, replace=False).tolist())
    novel = np.flatnonzero(np.isin(y, NOVEL_CLASSES))
    query = np.setdiff1d(novel, support)
    relabel = {c: i for i, c in enumerate(NOVEL_CLASSES)}
    s = np.array(support)
    return Episode(support_x=shared[s], support_y=np.array([relabel[c] for c in y[s]]),
                   query_x=shared[query], query_y=np.array([relabel[c] for c in y[query]]),
                   roots=roots[list(NOVEL_CLASSES)], shots=shots)
