"""The DR and plug-in responder rules on an easy study."""

from __future__ import annotations

import numpy as np

from methods.treca.rules import chow, fit_logistic, plugin, quadratic_features, treca


def _study(seed: int, n: int = 3000) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 2))
    tau = 1 / (1 + np.exp(-4 * x[:, 0]))
    u = rng.random(n)
    y0, y1 = (u < 0.0).astype(int), (u < tau).astype(int)
    a = (rng.random(n) < 0.5).astype(int)
    return {"x": x, "a": a, "y": np.where(a == 1, y1, y0), "x_test": x, "tau": tau}


def test_logistic_fit_recovers_coefficients() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 1))
    phi = np.column_stack([np.ones(4000), x])
    y = (rng.random(4000) < 1 / (1 + np.exp(-(0.5 + 2 * x[:, 0])))).astype(float)
    assert np.allclose(fit_logistic(phi, y, ridge=0.0), [0.5, 2.0], atol=0.2)


def test_both_rules_agree_with_the_bayes_rule_on_an_easy_study() -> None:
    study = _study(0)
    best = chow(study["tau"], 0.2)
    for rule in (treca, plugin):
        out = rule(study, {"c": 0.2}, 0)
        assert np.mean(out["decisions"] == best) > 0.85
        assert set(np.unique(out["decisions"])) <= {0, 1, 2}


def test_features_and_chow() -> None:
    assert quadratic_features(np.zeros((3, 2))).shape == (3, 1 + 2 + 3)
    assert chow(np.array([0.05, 0.5, 0.95]), 0.1).tolist() == [0, 2, 1]
