"""IRT fits and anchor subsets (harness.stats, issue 51 item 7) against data with planted
parameters, and the Rasch fit against statsmodels' logistic regression (the same model as
a GLM with one dummy per subject and per item)."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from harness.stats import (
    anchor_estimates,
    anchor_holdout,
    fit_irt,
    irt_ability_bootstrap,
    item_embedding,
    select_anchors,
)


def simulate(n_sub: int, n_item: int, seed: int, log_a_sd: float = 0.3
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """0/1 responses from a 2PL with abilities and difficulties ~ N(0, 1)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_sub)
    b = rng.normal(0, 1, n_item)
    a = np.exp(rng.normal(0, log_a_sd, n_item))
    p = 1 / (1 + np.exp(-a * (theta[:, None] - b[None, :])))
    return (rng.random(p.shape) < p).astype(float), theta, b, a


def test_2pl_recovers_planted_parameters() -> None:
    y, theta, b, a = simulate(300, 60, seed=1)
    fit = fit_irt(y, "2pl")
    assert fit.converged
    assert np.corrcoef(fit.difficulty, b)[0, 1] >= 0.95
    assert np.corrcoef(fit.ability, theta)[0, 1] >= 0.9
    assert np.corrcoef(fit.discrimination, a)[0, 1] >= 0.6
    # the identified scale (abilities mean 0, sd 1) is the planted one, so the intervals
    # can be checked against the truth: 95% Wald bounds cover most planted abilities
    ci = fit.ability_ci()
    coverage = np.mean((ci[:, 0] <= theta) & (theta <= ci[:, 1]))
    assert 0.85 <= coverage <= 1.0
    ci_b = fit.difficulty_ci()
    assert np.mean((ci_b[:, 0] <= b) & (b <= ci_b[:, 1])) >= 0.8


def test_rasch_recovers_difficulties_with_missing_responses() -> None:
    y, _, b, _ = simulate(200, 40, seed=2, log_a_sd=0.0)
    rng = np.random.default_rng(3)
    y[rng.random(y.shape) < 0.2] = np.nan  # a fifth of the cells never ran
    fit = fit_irt(y, "rasch")
    assert np.allclose(fit.discrimination, 1.0)
    assert np.corrcoef(fit.difficulty, b)[0, 1] >= 0.95


def test_rasch_matches_statsmodels_fixed_effects_logit() -> None:
    y, _, _, _ = simulate(60, 15, seed=4, log_a_sd=0.0)
    means_s, means_i = y.mean(axis=1), y.mean(axis=0)
    y = y[(means_s > 0) & (means_s < 1)][:, (means_i > 0) & (means_i < 1)]
    n_sub, n_item = y.shape
    rows, cols = np.indices(y.shape)
    # logit P = theta_j - b_i; item 0's difficulty is the reference (0)
    design = np.hstack([np.eye(n_sub)[rows.ravel()], -np.eye(n_item)[cols.ravel()][:, 1:]])
    glm = sm.GLM(y.ravel(), design, family=sm.families.Binomial()).fit()
    b_ref = np.concatenate([[0.0], glm.params[n_sub:]])
    # near-flat priors: the posterior mode is the maximum likelihood the GLM finds
    fit = fit_irt(y, "rasch", ability_sd=100.0, difficulty_sd=100.0)
    ours = fit.difficulty - fit.difficulty[0]
    assert np.max(np.abs(ours - b_ref)) < 0.02
    assert np.corrcoef(fit.ability, glm.params[:n_sub])[0, 1] > 0.999


def test_fixed_items_score_a_new_subject() -> None:
    y, theta, _, _ = simulate(301, 80, seed=5)
    cal = fit_irt(y[:300])
    new = fit_irt(y[300:], item_params=(cal.difficulty, cal.discrimination))
    joint = fit_irt(y)
    # scoring on calibrated items lands where a joint fit puts the subject
    assert abs(new.ability[0] - joint.ability[300]) < 0.15
    assert abs(new.ability[0] - theta[300]) < 3 * new.ability_se[0]


def test_perfect_rows_stay_finite_and_order_abilities() -> None:
    y = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]], dtype=float)
    fit = fit_irt(y)
    assert np.all(np.isfinite(fit.ability)) and np.all(np.isfinite(fit.difficulty))
    assert list(np.argsort(-fit.ability)) == [0, 1, 2, 3]
    assert fit.difficulty[0] < fit.difficulty[1] < fit.difficulty[3]


def test_select_anchors_one_per_cluster_weighted_by_size() -> None:
    rng = np.random.default_rng(6)
    centres = np.array([[-5.0, 0.0], [0.0, 5.0], [5.0, 0.0]])
    sizes = [10, 30, 20]
    emb = np.vstack([c + 0.1 * rng.normal(size=(n, 2)) for c, n in zip(centres, sizes,
                                                                       strict=True)])
    anchors = select_anchors(emb, 3, seed=0)
    blob = np.repeat([0, 1, 2], sizes)
    assert sorted(blob[anchors.items]) == [0, 1, 2]
    assert dict(zip(blob[anchors.items], anchors.weights, strict=True)) == pytest.approx(
        {0: 10 / 60, 1: 30 / 60, 2: 20 / 60})


def test_anchor_estimates_are_exact_when_every_item_is_an_anchor() -> None:
    y, _, _, _ = simulate(40, 12, seed=7)
    cal = fit_irt(y)
    anchors = select_anchors(item_embedding(cal), 12)
    if len(anchors.items) < 12:  # k-means may merge identical embeddings
        pytest.skip("k-means merged items")
    est = anchor_estimates(y, anchors, cal)
    assert np.allclose(est["anchor"], y.mean(axis=1))
    assert np.allclose(est["irt"], y.mean(axis=1))


def test_holdout_irt_anchors_beat_random_subsets() -> None:
    y, _, _, _ = simulate(60, 150, seed=8, log_a_sd=0.5)
    result = anchor_holdout(y, k=15, folds=5, seed=0)
    assert np.allclose(result.truth, y.mean(axis=1))
    assert not np.isnan(result.estimates["irt"]).any()
    # held-out subjects: the p-IRT estimate from 15 anchors errs less than 15 random items
    assert result.mae["irt"].estimate < result.mae["random"].estimate
    assert result.mae["irt"].estimate < 0.08


def test_ability_bootstrap_brackets_the_fit() -> None:
    y, _, _, _ = simulate(30, 40, seed=9)
    fit = fit_irt(y)
    ci = irt_ability_bootstrap(y, n_boot=40, seed=0)
    assert np.all(ci[:, 0] <= ci[:, 1])
    assert np.mean((ci[:, 0] <= fit.ability) & (fit.ability <= ci[:, 1])) >= 0.9


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fit_irt(np.array([[0.0, 2.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="2pl"):
        fit_irt(np.zeros((2, 2)), "3pl")
    with pytest.raises(ValueError, match="observed"):
        fit_irt(np.array([[np.nan, 1.0], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match="3 subjects"):
        anchor_holdout(np.zeros((2, 5)), k=2)
