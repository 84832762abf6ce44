"""Spherical black-box optimisers — ES, CBO, OVI and the ES-OVI / CBO-OVI hybrids — in
numpy, behind one interface, with the standard test functions and an equal-budget benchmark.

The paper ("Bridging Spherical Black-Box Optimizers", ICML 2026) puts these methods in one
framework in which they differ in two choices: **fitness aggregation** (how the sampled
fitness values become a move: ES's centred ranks estimate the gradient of the
Gaussian-smoothed objective and so prefer flat minima; OVI's and CBO's Laplace weights
``exp(-beta f)`` concentrate on the best samples, sharp or not) and **consensus scope**
(ES and OVI are *parametric*: one Gaussian, every sample redrawn around one mean each
generation, so one mode; CBO is *particle-based*: each particle keeps its own position and
drifts towards a consensus point, so the swarm can hold several modes for a while). Only
the paper's abstract was available to us, not its update equations, so the rules below are
the standard forms of each method written in that common frame, and the two hybrids are
our reading of "interpolate between existing methods" along exactly one of the two axes:

* every method draws one ``[popsize, d]`` block of standard normals per generation, from one
  seeded generator, in the same order; generation 0 is ``x0 + sigma0 * xi`` for all, so
  runs with the same seed start from the same population (common random numbers);
* ``es`` (parametric, rank aggregation): ``m <- m + lr_es * sum_i u_i (x_i - m)`` with
  ``u`` the centred fitness ranks (best positive, ``sum u = 0``, ``sum |u| = 1``), samples
  ``m + sigma_t xi``;
* ``ovi`` (parametric, Laplace aggregation, "optimisation via integration": the minimiser
  is the limit of ``E[x exp(-beta f)] / E[exp(-beta f)]``):
  ``m <- m + lr_ovi * sum_i w_i (x_i - m)``, ``w = softmax(-beta z)``, ``z`` the fitness
  standardised over the generation (so ``beta`` is scale-free); with ``lr_ovi = 1`` the
  new mean is the Laplace-weighted mean of the samples;
* ``es-ovi`` (interpolates fitness aggregation): the move weights are
  ``(1 - kappa) * lr_es * u + kappa * lr_ovi * w``; ``kappa = 0`` is ES and ``kappa = 1``
  OVI, exactly (same draws, same schedule);
* ``cbo`` (particles, Laplace consensus): ``v = sum_i w_i x_i``;
  ``x_i <- x_i + lam dt (v - x_i) + sigma_cbo sqrt(dt) |x_i - v| / sqrt(d) xi_i``
  (isotropic "spherical" noise scaled by the particle's distance to the consensus, divided
  by ``sqrt(d)`` so its per-coordinate size does not grow with the dimension);
* ``cbo-ovi`` (interpolates consensus scope): ``x_i <- (1 - rho) * cbo_i + rho * (v +
  sigma_t xi_i)``: each particle keeps a ``1 - rho`` share of its own CBO move and is
  otherwise redrawn around the shared consensus as OVI does; ``rho = 0`` is CBO exactly and
  ``rho = 1`` is OVI with ``lr_ovi = 1`` (to float rounding: ``v`` vs ``m + sum w (x - m)``).

The parametric methods' sampling scale follows one geometric schedule, ``sigma_t = sigma0 *
sigma_ratio ** (t / (T - 1))`` over the run's ``T`` generations, the same for every
method that samples around a centre; CBO's noise anneals by itself as the particles meet.

Budget: exactly ``budget`` evaluations — ``ceil(budget / popsize)`` generations, the last
one evaluating only the points that still fit. The result's best point is the best
*evaluated* point (a parametric method's final mean is never evaluated, so never reported).

    python -m methods.bbo_merge.bbo benchmark --out bbo_benchmark.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["DEFAULTS", "FUNCTIONS", "METHODS", "Result", "ackley", "batched", "benchmark",
           "minimise", "paired_comparisons", "rastrigin", "rosenbrock", "sphere"]

Array = NDArray[np.float64]
Objective = Callable[[Array], Array]
"""``f(X) -> values``: ``X`` is ``[n, d]``, the result ``[n]`` (lower is better)."""

METHODS = ("es", "cbo", "ovi", "es-ovi", "cbo-ovi")
DEFAULTS: dict[str, float] = {
    "popsize": 8, "sigma_ratio": 0.01, "lr_es": 1.0, "lr_ovi": 1.0, "beta": 10.0,
    "kappa": 0.5, "lam": 1.0, "dt": 0.5, "sigma_cbo": 1.2, "rho": 0.5,
}
"""Hyperparameters shared by every run unless overridden: 8 samples a generation (the
merging budget of 48 is then 6 generations); the parametric scale shrinks 100x over the
run; Laplace weights on standardised fitness at inverse temperature 10; CBO with
``lam dt = 0.5`` and noise 1.2 (mean-square contraction ``(1 - lam dt)^2 + sigma^2 dt =
0.97`` a step: near-critical, so 8 particles keep exploring instead of collapsing onto
their first consensus); the hybrids half-way. Chosen by a small grid on sphere and
Rastrigin in 3 dimensions (5 seeds; CBO's noise and step, the shared ``beta``), before the
benchmark was run; ES's and OVI's defaults were not tuned."""


@dataclass(frozen=True)
class Result:
    """One run: the best evaluated point and value, and every evaluation in order."""

    method: str
    best_x: Array
    best_f: float
    history: Array
    """Fitness of every evaluation, in evaluation order (``len == budget``)."""
    points: Array = field(repr=False)
    """``[budget, d]``: every evaluated point, in the same order."""

    @property
    def evals(self) -> int:
        return int(self.history.shape[0])

    def best_so_far(self) -> Array:
        """The running minimum of :attr:`history` (the convergence curve)."""
        return np.minimum.accumulate(self.history)


# --------------------------------------------------------------------------- test functions


def sphere(x: Array) -> Array:
    """``sum x^2``: unimodal, minimum 0 at the origin (the convergence check)."""
    return np.sum(np.asarray(x) ** 2, axis=-1)


def rastrigin(x: Array) -> Array:
    """``10 d + sum (x^2 - 10 cos 2 pi x)``: a regular grid of local minima, global 0 at 0."""
    x = np.asarray(x)
    return 10.0 * x.shape[-1] + np.sum(x**2 - 10.0 * np.cos(2 * np.pi * x), axis=-1)


def ackley(x: Array) -> Array:
    """Ackley: a nearly flat, bumpy plateau around one narrow funnel; global 0 at 0."""
    x = np.asarray(x)
    d = x.shape[-1]
    a = -20.0 * np.exp(-0.2 * np.sqrt(np.sum(x**2, axis=-1) / d))
    b = -np.exp(np.sum(np.cos(2 * np.pi * x), axis=-1) / d)
    return a + b + 20.0 + math.e


def rosenbrock(x: Array) -> Array:
    """Rosenbrock's curved valley; global 0 at ``(1, ..., 1)``."""
    x = np.asarray(x)
    return np.sum(100.0 * (x[..., 1:] - x[..., :-1] ** 2) ** 2 + (1 - x[..., :-1]) ** 2,
                  axis=-1)


FUNCTIONS: dict[str, tuple[Objective, float]] = {
    "sphere": (sphere, 5.12), "rastrigin": (rastrigin, 5.12), "ackley": (ackley, 32.768),
    "rosenbrock": (rosenbrock, 2.048),
}
"""Each test function with the half-width of its usual search box ``[-h, h]^d``."""


def batched(f: Callable[[Array], float]) -> Objective:
    """A population objective from a one-point one (the merging fitness is one model per
    call: evaluating is the expensive part, there is nothing to vectorise)."""
    return lambda points: np.array([float(f(p)) for p in np.atleast_2d(points)])


# --------------------------------------------------------------------------- weights


def _standardised(values: Array) -> Array:
    spread = float(values.std())
    shifted = values - values.min()
    return shifted / spread if spread > 0 else np.zeros_like(values)


def laplace_weights(values: Array, beta: float) -> Array:
    """``softmax(-beta z)`` over the generation, ``z`` the standardised fitness: the
    Laplace-principle weights of CBO's consensus and OVI's mean."""
    logits = -beta * _standardised(values)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def rank_weights(values: Array) -> Array:
    """Centred ranks (best highest), ``sum = 0`` and ``sum |u| = 1``: ES's fitness shaping,
    invariant to any monotone change of the fitness."""
    n = values.shape[0]
    ranks = np.empty(n)
    ranks[np.argsort(values, kind="stable")] = np.arange(n)  # 0 = best
    centred = (n - 1) / 2.0 - ranks
    total = np.abs(centred).sum()
    return centred / total if total > 0 else centred


# --------------------------------------------------------------------------- minimise


def _hyper(overrides: dict[str, Any]) -> dict[str, float]:
    unknown = sorted(set(overrides) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown hyperparameters {unknown}; known: {sorted(DEFAULTS)}")
    return {**DEFAULTS, **{k: float(v) for k, v in overrides.items()}}


def minimise(f: Objective, x0: Sequence[float] | Array | None = None, *, budget: int,
             seed: int = 0, method: str = "cbo-ovi",
             bounds: tuple[Sequence[float] | float, Sequence[float] | float] | None = None,
             sigma0: float | None = None, **hyper: Any) -> Result:
    """Minimise ``f`` with ``method`` in exactly ``budget`` evaluations.

    Args:
        f: The population objective, ``[n, d] -> [n]`` (wrap a one-point function with
            :func:`batched`).
        x0: The initial centre (default: the middle of ``bounds``).
        budget: Evaluations, spent exactly.
        seed: Seeds the one generator every random draw comes from.
        method: One of :data:`METHODS`.
        bounds: ``(low, high)`` box (scalars or per-coordinate); samples are clipped to it.
        sigma0: The initial sampling scale (default: a sixth of the box width, else 1).
        **hyper: Overrides of :data:`DEFAULTS` (``popsize``, ``beta``, ``kappa``, ...).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}")
    if budget < 1:
        raise ValueError("budget must be >= 1")
    h = _hyper(hyper)
    if x0 is None and bounds is None:
        raise ValueError("give x0 or bounds")
    lo = hi = None
    if bounds is not None:
        d_hint = None if x0 is None else len(np.ravel(x0))
        lo_b = np.asarray(bounds[0], dtype=np.float64)
        hi_b = np.asarray(bounds[1], dtype=np.float64)
        if d_hint is not None:
            lo_b, hi_b = np.broadcast_to(lo_b, (d_hint,)), np.broadcast_to(hi_b, (d_hint,))
        lo, hi = lo_b, hi_b
    centre = (np.asarray(x0, dtype=np.float64).ravel() if x0 is not None
              else (np.asarray(lo) + np.asarray(hi)) / 2.0)
    d = centre.shape[0]
    if sigma0 is None:
        sigma0 = float(np.mean(np.asarray(hi) - np.asarray(lo))) / 6.0 if lo is not None \
            else 1.0
    popsize = int(h["popsize"])
    if popsize < 2:
        raise ValueError("popsize must be >= 2")
    generations = math.ceil(budget / popsize)
    rng = np.random.default_rng(seed)

    def clip(points: Array) -> Array:
        return points if lo is None else np.clip(points, lo, hi)

    def sigma_at(t: int) -> float:
        return float(sigma0) * h["sigma_ratio"] ** (t / max(generations - 1, 1))

    history: list[Array] = []
    points_seen: list[Array] = []
    mean = centre.copy()
    population = clip(centre + sigma0 * rng.standard_normal((popsize, d)))
    for t in range(generations):
        take = min(popsize, budget - t * popsize)
        values = np.asarray(f(population[:take]), dtype=np.float64).reshape(take)
        history.append(values)
        points_seen.append(population[:take].copy())
        if t == generations - 1:
            break
        xi = rng.standard_normal((popsize, d))
        proposed, mean = _next(method, h, population, values, mean, xi, sigma_at(t + 1))
        population = clip(proposed)
    all_values = np.concatenate(history)
    all_points = np.concatenate(points_seen)
    best = int(np.argmin(all_values))
    return Result(method, all_points[best].copy(), float(all_values[best]), all_values,
                  all_points)


def _next(method: str, h: dict[str, float], x: Array, values: Array, mean: Array, xi: Array,
          sigma: float) -> tuple[Array, Array]:
    """The next generation's points (and the parametric mean, unchanged for particles)
    from this generation's points and values; ``xi`` is the generation's normal draw."""
    if method in ("es", "ovi", "es-ovi"):
        a_es = h["lr_es"] * rank_weights(values)
        a_ovi = h["lr_ovi"] * laplace_weights(values, h["beta"])
        if method == "es":
            weights = a_es
        elif method == "ovi":
            weights = a_ovi
        else:
            weights = (1.0 - h["kappa"]) * a_es + h["kappa"] * a_ovi
        new_mean = mean + weights @ (x - mean)
        return new_mean + sigma * xi, new_mean
    w = laplace_weights(values, h["beta"])
    consensus = w @ x
    gap = consensus - x
    dist = np.linalg.norm(gap, axis=1, keepdims=True) / math.sqrt(x.shape[1])
    cbo = x + h["lam"] * h["dt"] * gap + h["sigma_cbo"] * math.sqrt(h["dt"]) * dist * xi
    if method == "cbo":
        return cbo, mean
    rho = h["rho"]
    return (1.0 - rho) * cbo + rho * (consensus + sigma * xi), mean


# --------------------------------------------------------------------------- benchmark


def _starts(name: str, dim: int, seed: int) -> tuple[Array, float]:
    """The seed's start for a test function: a uniform point in the inner half of the box
    (away from the optimum at the centre, which a centred start would find for free) and
    ``sigma0`` a sixth of the box width; the same for every method (common random
    numbers), so methods compare pairwise per seed."""
    half = FUNCTIONS[name][1]
    rng = np.random.default_rng([seed, dim, sum(map(ord, name))])
    return rng.uniform(-half / 2, half / 2, size=dim), 2 * half / 6.0


def benchmark(methods: Sequence[str] = METHODS,
              functions: Sequence[str] = ("sphere", "rastrigin", "ackley"),
              dims: Sequence[int] = (2, 10), seeds: Sequence[int] = tuple(range(10)),
              budget: int = 800, **hyper: Any) -> Any:
    """Every method on every function and dimension over ``seeds``, all at ``budget``
    evaluations from the same starts: a polars frame, one row per (method, function, dim)
    with the mean best value and its percentile-bootstrap 95% CI over seeds
    (:func:`harness.stats.bootstrap_ci`), the median, and the per-seed values."""
    import polars as pl

    from harness.stats import bootstrap_ci

    rows: list[dict[str, Any]] = []
    for name in functions:
        fn, half = FUNCTIONS[name]
        for dim in dims:
            for method in methods:
                best = []
                for seed in seeds:
                    x0, sigma0 = _starts(name, dim, seed)
                    result = minimise(fn, x0, budget=budget, seed=seed, method=method,
                                      bounds=(-half, half), sigma0=sigma0, **hyper)
                    best.append(result.best_f)
                est = bootstrap_ci(best, seed=0)
                rows.append({"method": method, "function": name, "dim": dim,
                             "budget": budget, "seeds": len(best), "mean": est.estimate,
                             "lo": est.lo, "hi": est.hi, "median": float(np.median(best)),
                             "values": best})
    return pl.DataFrame(rows)


HYBRIDS: dict[str, tuple[str, str]] = {"es-ovi": ("es", "ovi"), "cbo-ovi": ("cbo", "ovi")}


def paired_comparisons(frame: Any) -> Any:
    """Each hybrid minus each of its constituents, paired by seed (the same start and
    draws), per function and dimension: mean difference with its t 95% CI
    (:func:`harness.stats.paired_difference_ci`); negative = the hybrid is better."""
    import polars as pl

    from harness.stats import paired_difference_ci

    rows: list[dict[str, Any]] = []
    cells = {(r["method"], r["function"], r["dim"]): r["values"]
             for r in frame.iter_rows(named=True)}
    for (method, name, dim), values in cells.items():
        for other in HYBRIDS.get(method, ()):
            if (other, name, dim) not in cells:
                continue
            est = paired_difference_ci(values, cells[(other, name, dim)])
            wins = sum(a < b for a, b in zip(values, cells[(other, name, dim)], strict=True))
            rows.append({"hybrid": method, "versus": other, "function": name, "dim": dim,
                         "diff": est.estimate, "lo": est.lo, "hi": est.hi,
                         "hybrid_wins": wins, "seeds": len(values)})
    return pl.DataFrame(rows)


def markdown(frame: Any, digits: int = 3) -> str:
    """The benchmark frame as a method x (function, dim) table of ``mean [lo, hi]``."""
    cols = sorted({(r["function"], r["dim"]) for r in frame.iter_rows(named=True)},
                  key=lambda c: (list(FUNCTIONS).index(c[0]), c[1]))
    cell = {(r["method"], r["function"], r["dim"]): r for r in frame.iter_rows(named=True)}
    methods = [m for m in METHODS if any(k[0] == m for k in cell)]
    lines = ["| method | " + " | ".join(f"{f} d={d}" for f, d in cols) + " |",
             "|---|" + "---|" * len(cols)]
    for m in methods:
        parts = []
        for f, d in cols:
            r = cell[(m, f, d)]
            parts.append(f"{r['mean']:.{digits}g} [{r['lo']:.{digits}g}, {r['hi']:.{digits}g}]")
        lines.append(f"| {m} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m methods.bbo_merge.bbo benchmark --out FILE.json``."""
    parser = argparse.ArgumentParser(prog="python -m methods.bbo_merge.bbo")
    sub = parser.add_subparsers(dest="command", required=True)
    bench = sub.add_parser("benchmark", help="every optimiser on every test function")
    bench.add_argument("--out", required=True, help="JSON file for the rows")
    bench.add_argument("--budget", type=int, default=800)
    bench.add_argument("--seeds", type=int, default=10)
    bench.add_argument("--dims", default="2,10")
    bench.add_argument("--functions", default="sphere,rastrigin,ackley")
    args = parser.parse_args(argv)
    frame = benchmark(functions=args.functions.split(","),
                      dims=[int(d) for d in args.dims.split(",")],
                      seeds=range(args.seeds), budget=args.budget)
    paired = paired_comparisons(frame)
    doc = {"budget": args.budget, "seeds": args.seeds, "hyper": DEFAULTS,
           "rows": frame.to_dicts(), "paired": paired.to_dicts()}
    with open(args.out, "w") as handle:
        json.dump(doc, handle, indent=1)
    print(markdown(frame))
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    sys.exit(guarded(main))
