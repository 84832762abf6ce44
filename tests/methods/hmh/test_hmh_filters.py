"""HMH's Haar bands, hierarchy and Chebyshev features on small hand-made data."""

from __future__ import annotations

import numpy as np

from methods.hmh.filters import (
    adjacency,
    chebnet,
    chebyshev_features,
    haar_bands,
    hierarchy,
    hmh,
)


def test_haar_bands_are_orthogonal_and_sum_to_the_signal() -> None:
    rng = np.random.default_rng(0)
    f = rng.normal(size=(12, 3))
    levels = [np.arange(12) // 2, np.arange(12) // 6]
    bands = haar_bands(f, levels)
    assert np.allclose(sum(bands), f)
    for i in range(len(bands)):
        for j in range(i + 1, len(bands)):
            assert abs(float((bands[i] * bands[j]).sum())) < 1e-9


def test_hierarchy_coarsens_to_nested_partitions() -> None:
    z = np.random.default_rng(1).normal(size=(400, 4))
    levels = hierarchy(z, k=2, ratio=4, seed=0)
    assert len(levels) >= 2
    sizes = [len(np.unique(a)) for a in levels]
    assert sizes == sorted(sizes, reverse=True)
    for fine, coarse in zip(levels, levels[1:], strict=False):  # nested: fine -> one parent
        for c in np.unique(fine):
            assert len(np.unique(coarse[fine == c])) == 1


def test_chebyshev_recurrence_on_a_path() -> None:
    a = adjacency(3, [[0, 1], [1, 2]])
    x = np.eye(3)
    feats = chebyshev_features(a, x, 2)
    lt = -np.diag(1 / np.sqrt([1, 2, 1])) @ a.toarray() @ np.diag(1 / np.sqrt([1, 2, 1]))
    assert np.allclose(feats[:, 6:9], 2 * lt @ lt - np.eye(3))


def _inputs(n: int = 200) -> dict[str, object]:
    rng = np.random.default_rng(3)
    y = np.arange(n) % 2
    x = np.column_stack([y * 2.0 - 1, np.zeros(n)]) + rng.normal(size=(n, 2)) * 0.3
    edges = np.column_stack([np.arange(n - 1), np.arange(1, n)])
    idx = rng.permutation(n)
    train, val, test = idx[:80], idx[80:120], idx[120:]
    return {"n": n, "edges": edges, "x": x, "train": train, "val": val, "test": test,
            "y_train": y[train], "y_val": y[val], "k": 2, "_y_test": y[test]}


def test_methods_classify_separable_nodes() -> None:
    inputs = _inputs()
    for fn in (hmh, chebnet):
        out = fn(inputs, {}, 0)
        assert np.mean(np.asarray(out["pred"]) == inputs["_y_test"]) > 0.9
