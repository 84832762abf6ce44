import numpy as np
from segments import segment_max, segment_sums


def test_sums_and_max_with_empty_segments():
    values = [1.0, 2.0, 3.0, 4.0, -1.0]
    lengths = [2, 0, 3, 0]
    assert segment_sums(values, lengths).tolist() == [3.0, 0.0, 6.0, 0.0]
    assert segment_max(values, lengths).tolist() == [2.0, -np.inf, 4.0, -np.inf]


def test_all_empty_and_random():
    assert segment_sums([], [0, 0]).tolist() == [0.0, 0.0]
    rng = np.random.default_rng(5)
    lengths = rng.integers(0, 6, size=100)
    values = rng.standard_normal(lengths.sum())
    parts = np.split(values, np.cumsum(lengths)[:-1])
    assert np.allclose(segment_sums(values, lengths), [p.sum() for p in parts])
    assert np.array_equal(segment_max(values, lengths),
                          [p.max() if len(p) else -np.inf for p in parts])
