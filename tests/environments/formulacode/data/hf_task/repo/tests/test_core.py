import numpy as np
from binstat import bin_counts, bin_means


def test_counts_drop_values_outside_the_edges():
    values = [-5.0, 0.0, 0.5, 1.0, 1.5, 2.0, 9.0]
    assert bin_counts(values, [0.0, 1.0, 2.0]).tolist() == [2, 2]


def test_means_are_nan_for_empty_bins_and_match_numpy():
    means = bin_means([0.1, 0.2, 2.5], [1.0, 3.0, 5.0], [0.0, 1.0, 2.0, 3.0])
    assert means[0] == 2.0 and np.isnan(means[1]) and means[2] == 5.0
    rng = np.random.default_rng(4)
    values, edges = rng.standard_normal(1000), np.linspace(-2.0, 2.0, 9)
    expected, _ = np.histogram(values[(values >= -2.0) & (values < 2.0)], edges)
    assert bin_counts(values, edges).tolist() == expected.tolist()
