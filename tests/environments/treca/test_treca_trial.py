"""Simulated studies: monotone potential outcomes, the Bayes rule and the exact risk."""

from __future__ import annotations

import numpy as np

from environments.treca import abstention_risk, bayes_rule, make_trial
from environments.treca.trial import tau


def test_outcomes_are_monotone_and_seeded() -> None:
    trial = make_trial(n=500, n_test=100, seed=3)
    assert (trial.y1 >= trial.y0).all()
    again = make_trial(n=500, n_test=100, seed=3)
    assert np.array_equal(trial.y, again.y) and np.array_equal(trial.x_test, again.x_test)


def test_responder_share_matches_tau() -> None:
    trial = make_trial(n=20000, n_test=10, seed=0)
    responders = (trial.y1 == 1) & (trial.y0 == 0)
    assert abs(responders.mean() - tau(trial.x).mean()) < 0.02


def test_the_bayes_rule_has_the_lowest_risk() -> None:
    trial = make_trial(n=10, n_test=4000, seed=1)
    c = 0.2
    best = abstention_risk(bayes_rule(trial.tau_test, c), trial.tau_test, c)
    for other in (np.zeros(4000, dtype=np.int64), np.ones(4000, dtype=np.int64),
                  np.full(4000, 2, dtype=np.int64), bayes_rule(trial.tau_test, 0.3)):
        assert abstention_risk(other, trial.tau_test, c) >= best
    assert np.isclose(abstention_risk(np.full(4000, 2), trial.tau_test, c), c)
