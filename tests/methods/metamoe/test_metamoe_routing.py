"""MetaMoE's proxies: diverse selection spreads out, and routes better than relevance-only."""

from __future__ import annotations

import numpy as np
import pytest

from environments.metamoe import make_federation
from methods.metamoe.routing import (
    diverse_top,
    metamoe,
    random_proxies,
    relevance_proxies,
    uniform_ensemble,
)


def _inputs(seed: int) -> tuple[dict, object]:
    f = make_federation(seed=seed)
    return {"private_x": f.private_x, "private_y": f.private_y, "public_x": f.public_x,
            "test_x": f.test_x}, f


def test_diverse_top_is_spread_and_relevant() -> None:
    rng = np.random.default_rng(0)
    pool = rng.normal(size=(500, 2))
    rel = -np.linalg.norm(pool, axis=1)
    picked = diverse_top(pool, rel, 10, 100, 1.0)
    top = np.argsort(-rel)[:10]
    assert len(set(picked.tolist())) == 10 and set(picked) <= set(np.argsort(-rel)[:100])

    def spread(idx: np.ndarray) -> float:
        d = np.linalg.norm(pool[idx][:, None] - pool[idx][None], axis=-1)
        return float(d[np.triu_indices(len(idx), 1)].mean())

    assert spread(picked) > 1.1 * spread(top)
    assert spread(diverse_top(pool, rel, 10, 100, 10.0)) > 2 * spread(top)
    assert set(diverse_top(pool, rel, 10, 100, 0.0)) == set(top)  # no diversity: top-m


@pytest.mark.slow
def test_metamoe_routes_better_than_its_baseline() -> None:
    """Fails if ``metamoe`` is replaced by ``relevance-proxies`` (development seeds 0-3):
    the diverse proxies route more test points to their own domain's expert."""
    gaps = []
    for seed in range(4):
        inputs, f = _inputs(seed)
        ours, base = metamoe(inputs, {}, seed), relevance_proxies(inputs, {}, seed)
        gaps.append((np.asarray(ours["route"]) == f.test_domain).mean()
                    - (np.asarray(base["route"]) == f.test_domain).mean())
    assert np.mean(gaps) > 0.01


def test_references_are_weaker_than_any_selection() -> None:
    inputs, f = _inputs(0)
    routed = (np.asarray(metamoe(inputs, {}, 0)["pred"]) == f.test_y).mean()
    rand = (np.asarray(random_proxies(inputs, {}, 0)["pred"]) == f.test_y).mean()
    unif = uniform_ensemble(inputs, {}, 0)
    assert routed > rand + 0.1 and routed > (np.asarray(unif["pred"]) == f.test_y).mean() + 0.1
    assert unif["route"][0] == -1


def test_a_one_class_client_gets_a_constant_expert() -> None:
    inputs, f = _inputs(100)  # seed 100 has such a client
    assert any(len(np.unique(y)) == 1 for y in f.private_y)
    for method in (relevance_proxies, uniform_ensemble):
        pred = np.asarray(method(inputs, {}, 100)["pred"])
        assert len(pred) == len(f.test_y) and set(pred.tolist()) <= {0, 1}
