import numpy as np
import pytest
from winfeat import rolling_mean, rolling_std


@pytest.mark.parametrize("w", [1, 2, 5, 12])
def test_matches_naive(w):
    x = np.random.default_rng(w).standard_normal(12)
    assert np.allclose(rolling_mean(x, w), [x[i:i + w].mean() for i in range(13 - w)])
    assert np.allclose(rolling_std(x, w), [x[i:i + w].std() for i in range(13 - w)])


def test_bad_window():
    with pytest.raises(ValueError):
        rolling_std([1.0], 2)
