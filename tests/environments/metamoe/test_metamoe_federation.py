"""The federation: seeded, distractors marked, each expert good only on its own domain."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from environments.metamoe import make_federation


def test_seeded_and_shaped() -> None:
    a, b = make_federation(seed=3), make_federation(seed=3)
    assert np.array_equal(a.public_x, b.public_x) and np.array_equal(a.test_y, b.test_y)
    assert len(a.private_x) == 6 and a.public_x.shape == (4000, 16)
    assert np.isclose((a.public_domain == -1).mean(), 0.3)
    assert np.bincount(a.test_domain).tolist() == [200] * 6


def test_experts_are_domain_specialists() -> None:
    f = make_federation(clients=3, seed=1)
    expert = LogisticRegression(max_iter=1000).fit(f.private_x[0], f.private_y[0])
    own = f.test_domain == 0
    acc_own = (expert.predict(f.test_x[own]) == f.test_y[own]).mean()
    acc_other = (expert.predict(f.test_x[~own]) == f.test_y[~own]).mean()
    assert acc_own > 0.85 and acc_other < 0.75
