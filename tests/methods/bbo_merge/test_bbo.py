"""The black-box optimisers: each reaches the sphere's minimum within its budget, spends
the budget exactly, is a function of its seed, and the hybrids reduce to their constituents
at the ends of their interpolation parameter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from methods.bbo_merge.bbo import (
    METHODS,
    ackley,
    batched,
    benchmark,
    laplace_weights,
    minimise,
    paired_comparisons,
    rank_weights,
    rastrigin,
    rosenbrock,
    sphere,
)


def test_test_functions_have_their_minimum_where_stated() -> None:
    zero = np.zeros((1, 4))
    assert sphere(zero)[0] == 0.0 and rastrigin(zero)[0] == 0.0
    assert abs(ackley(zero)[0]) < 1e-12
    assert rosenbrock(np.ones((1, 4)))[0] == 0.0
    shifted = np.full((1, 4), 0.3)
    assert min(sphere(shifted)[0], rastrigin(shifted)[0], ackley(shifted)[0]) > 0.1


@pytest.mark.parametrize("method", METHODS)
def test_each_optimiser_finds_the_sphere_minimum(method: str) -> None:
    result = minimise(sphere, [2.0, 2.0, 2.0], budget=400, seed=0, method=method, sigma0=1.0)
    assert result.best_f < 1e-2
    assert np.linalg.norm(result.best_x) < 0.1
    assert result.best_f == pytest.approx(float(sphere(result.best_x[None])[0]))
    curve = result.best_so_far()
    assert curve[-1] < curve[0] / 100  # it moved, not a lucky first draw


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("budget", [1, 7, 8, 45, 48])
def test_budget_is_spent_exactly(method: str, budget: int) -> None:
    calls: list[int] = []

    def counted(points: np.ndarray) -> np.ndarray:
        calls.append(len(points))
        return sphere(points)

    result = minimise(counted, np.ones(3), budget=budget, seed=1, method=method)
    assert sum(calls) == budget == result.evals == len(result.points)


@pytest.mark.parametrize("method", METHODS)
def test_same_seed_same_run_other_seed_other_run(method: str) -> None:
    a = minimise(rastrigin, np.ones(4), budget=96, seed=3, method=method)
    b = minimise(rastrigin, np.ones(4), budget=96, seed=3, method=method)
    c = minimise(rastrigin, np.ones(4), budget=96, seed=4, method=method)
    assert np.array_equal(a.points, b.points) and np.array_equal(a.history, b.history)
    assert not np.array_equal(a.points, c.points)


def test_es_ovi_is_es_at_kappa_0_and_ovi_at_kappa_1() -> None:
    args: dict[str, Any] = {"budget": 160, "seed": 5, "bounds": (-5.12, 5.12)}
    x0 = np.array([1.5, -2.0, 0.7])
    es = minimise(rastrigin, x0, method="es", **args)
    ovi = minimise(rastrigin, x0, method="ovi", **args)
    assert np.array_equal(minimise(rastrigin, x0, method="es-ovi", kappa=0.0, **args).points,
                          es.points)
    assert np.array_equal(minimise(rastrigin, x0, method="es-ovi", kappa=1.0, **args).points,
                          ovi.points)
    middle = minimise(rastrigin, x0, method="es-ovi", kappa=0.5, **args)
    assert not np.array_equal(middle.points, es.points)
    assert not np.array_equal(middle.points, ovi.points)


def test_cbo_ovi_is_cbo_at_rho_0_and_ovi_at_rho_1() -> None:
    args: dict[str, Any] = {"budget": 160, "seed": 6}
    x0 = np.array([1.5, -2.0, 0.7])
    cbo = minimise(ackley, x0, method="cbo", **args)
    ovi = minimise(ackley, x0, method="ovi", lr_ovi=1.0, **args)
    assert np.array_equal(minimise(ackley, x0, method="cbo-ovi", rho=0.0, **args).points,
                          cbo.points)
    # rho = 1 redraws every particle around the consensus v = sum w x, which is OVI's new
    # mean m + sum w (x - m) with lr_ovi = 1: equal up to float rounding
    hybrid = minimise(ackley, x0, method="cbo-ovi", rho=1.0, **args)
    assert float(np.max(np.abs(hybrid.points - ovi.points))) < 1e-9


def test_weights() -> None:
    values = np.array([3.0, 1.0, 2.0, 10.0])
    u = rank_weights(values)
    assert u.sum() == pytest.approx(0.0) and np.abs(u).sum() == pytest.approx(1.0)
    assert np.argmax(u) == 1 and np.argmin(u) == 3
    assert np.array_equal(rank_weights(values), rank_weights(values * 100 + 7))  # monotone
    w = laplace_weights(values, 10.0)
    assert w.sum() == pytest.approx(1.0) and np.argmax(w) == 1
    np.testing.assert_allclose(w, laplace_weights(values * 100 + 7, 10.0))  # scale-free
    assert np.allclose(laplace_weights(values, 0.0), 0.25)


def test_bounds_clip_and_batched() -> None:
    result = minimise(batched(lambda p: float(np.sum((p - 3.0) ** 2))), bounds=(-1.0, 1.0),
                      x0=np.zeros(2), budget=64, seed=0, method="ovi")
    assert result.points.min() >= -1.0 and result.points.max() <= 1.0
    assert np.all(result.best_x > 0.5)  # moved towards the corner nearest the optimum
    with pytest.raises(ValueError):
        minimise(sphere, np.zeros(2), budget=8, method="nelder-mead")
    with pytest.raises(ValueError):
        minimise(sphere, np.zeros(2), budget=8, method="es", temperature=1.0)


def test_benchmark_frame_and_paired_comparisons() -> None:
    frame = benchmark(functions=("sphere", "rastrigin"), dims=(2,), seeds=range(3),
                      budget=48)
    assert frame.height == 2 * len(METHODS)
    for row in frame.iter_rows(named=True):
        assert row["lo"] <= row["mean"] <= row["hi"] and len(row["values"]) == 3
    paired = paired_comparisons(frame)
    assert set(zip(paired["hybrid"], paired["versus"], strict=True)) == {
        ("es-ovi", "es"), ("es-ovi", "ovi"), ("cbo-ovi", "cbo"), ("cbo-ovi", "ovi")}
