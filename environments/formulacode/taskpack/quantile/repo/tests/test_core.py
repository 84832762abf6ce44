import numpy as np
import pytest
from qstats import Sample


@pytest.mark.parametrize("n", [1, 2, 7, 100])
def test_quantiles_match_numpy(n):
    v = np.random.default_rng(n).standard_normal(n)
    s = Sample(v)
    for q in (0.0, 0.1, 0.5, 0.77, 1.0):
        assert s.quantile(q) == pytest.approx(np.quantile(v, q), rel=1e-12, abs=1e-12)
    assert np.allclose(s.quantile([0.2, 0.9]), np.quantile(v, [0.2, 0.9]))


def test_fraction_below():
    s = Sample([3.0, 1.0, 2.0, 2.0])
    assert [s.fraction_below(x) for x in (0, 2, 2.5, 9)] == [0.0, 0.25, 0.75, 1.0]
