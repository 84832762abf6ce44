import numpy as np
import pytest
from winmax import running_max, running_min


@pytest.mark.parametrize("w", [1, 2, 3, 7, 10])
def test_matches_naive(w):
    x = np.random.default_rng(w).standard_normal(10)
    assert running_max(x, w).tolist() == [max(x[i:i + w]) for i in range(11 - w)]
    assert running_min(x, w).tolist() == [min(x[i:i + w]) for i in range(11 - w)]


def test_bad_window():
    with pytest.raises(ValueError):
        running_max([1.0, 2.0], 3)
