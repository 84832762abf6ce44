import numpy as np
from matchain import apply_chain, chain_norms


def test_chain():
    rng = np.random.default_rng(4)
    mats = [rng.normal(size=(4, 4)) for _ in range(3)]
    v = rng.normal(size=4)
    np.testing.assert_allclose(apply_chain(mats, v), mats[0] @ mats[1] @ mats[2] @ v)
    assert len(chain_norms(mats, [v, v])) == 2
