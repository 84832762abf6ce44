"""Basic statistical inference for eval scores: the project's only statistics module.

Leaderboards, factorial reports and the ANOVA code all take their intervals from here, so
"the 95% CI" means the same thing everywhere. Conventions:

* Every interval is returned as an :class:`Estimate` (point estimate, standard error,
  bounds, counts, level).
* Inputs may be lists, numpy arrays or polars Series. Missing values (None/NaN) raise
  ``ValueError``: whether an errored sample scores 0 or is excluded is the caller's
  decision (see ``harness.results``), never made silently here.
* Intervals for means use Student's t with n - 1 degrees of freedom, or G - 1 when the
  standard error is clustered over G clusters; for large samples this is the normal
  interval of Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640), and for
  the small item counts common in agent benchmarks it is less overconfident.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray
from scipy import optimize
from scipy import stats as sps

__all__ = [
    "Estimate",
    "RankIntervals",
    "bootstrap_ci",
    "bootstrap_rank_interval",
    "clopper_pearson_ci",
    "clustered_se",
    "critical_value",
    "fit_logistic",
    "holm_adjust",
    "items_needed",
    "kendall_tau",
    "kendall_w",
    "mean_ci",
    "minimum_detectable_difference",
    "paired_difference",
    "paired_difference_ci",
    "paired_power",
    "paired_t_p_value",
    "two_sided_p",
    "wilson_ci",
]

Values = ArrayLike | pl.Series | Sequence[float]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its standard error and a two-sided confidence interval.

    ``n`` counts observations; ``n_clusters`` is the number of clusters the standard
    error was computed over (None when observations were treated as independent).
    """

    estimate: float
    se: float
    lo: float
    hi: float
    n: int
    n_clusters: int | None
    level: float

    @property
    def width(self) -> float:
        """``hi - lo``."""
        return self.hi - self.lo


# --------------------------------------------------------------------------- helpers


def _values(values: Values, name: str = "values") -> NDArray[np.float64]:
    """A 1-d float array; rejects missing values instead of dropping them."""
    if isinstance(values, pl.Series):
        if values.null_count():
            raise ValueError(f"{name} has {values.null_count()} nulls; fill or filter first")
        values = values.to_numpy()
    arr = np.asarray(values, dtype=np.float64).ravel()
    if np.isnan(arr).any():
        raise ValueError(f"{name} has NaN values; fill or filter first")
    return arr


def _cluster_codes(cluster: Values | Sequence[Any], n: int) -> tuple[NDArray[np.int64], int]:
    """Integer codes 0..G-1 for any labels (ints, strings, a polars Series)."""
    labels = cluster if isinstance(cluster, pl.Series) else pl.Series(list(np.asarray(cluster)))
    if len(labels) != n:
        raise ValueError(f"cluster has {len(labels)} labels for {n} values")
    if labels.null_count():
        raise ValueError("cluster labels contain nulls")
    codes = labels.rank("dense").cast(pl.Int64).to_numpy() - 1
    return codes, int(codes.max()) + 1 if n else 0


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def _t_interval(
    estimate: float, se: float, df: int, level: float
) -> tuple[float, float]:
    if df < 1 or not math.isfinite(se):
        return math.nan, math.nan
    half = critical_value(df, level) * se
    return estimate - half, estimate + half


# --------------------------------------------------------------------------- t and normal


def critical_value(df: float, level: float = 0.95) -> float:
    """The two-sided critical value at ``level``: the ``0.5 + level/2`` quantile of
    Student's t with ``df`` degrees of freedom, or of the standard normal when ``df`` is
    infinite (a fit whose inference is asymptotic, e.g. a GLM)."""
    q = 0.5 + level / 2
    return float(sps.norm.ppf(q) if not math.isfinite(df) else sps.t.ppf(q, df))


def two_sided_p(stat: ArrayLike, df: float) -> Any:
    """Two-sided p-value(s) of t statistic(s) with ``df`` degrees of freedom (normal when
    ``df`` is infinite). A NaN statistic gives a NaN p-value; an array in, an array out."""
    dist = sps.t(df) if math.isfinite(df) else sps.norm()
    return 2 * dist.sf(np.abs(stat))


def paired_t_p_value(difference: Estimate) -> float:
    """Two-sided p-value of the t test that a mean difference is zero.

    ``difference`` is a :func:`paired_difference_ci` (or :func:`mean_ci`) estimate; the
    test uses the same degrees of freedom as its interval (n - 1, or G - 1 clustered).
    NaN when the standard error is zero or undefined.
    """
    t = difference.estimate / difference.se if difference.se > 0 else math.nan
    if not math.isfinite(t):
        return math.nan
    df = (difference.n_clusters or difference.n) - 1
    return float(two_sided_p(t, df))


# --------------------------------------------------------------------------- means


def clustered_se(values: Values, cluster: Values | Sequence[Any]) -> tuple[float, int]:
    """Cluster-robust standard error of the mean, and the number of clusters G.

    ``SE^2 = G/(G-1) * sum_c (sum_{i in c} (x_i - mean))^2 / n^2`` -- the CLT over cluster
    sums (Miller 2024, eq. 4) times the usual small-sample factor G/(G-1) (the CR1 / Stata
    correction for a mean). With every cluster of size one this is exactly ``s^2 / n``,
    the unclustered standard error, so the correction never makes clustering look
    spuriously tighter when there is nothing to cluster.
    """
    x = _values(values)
    codes, g = _cluster_codes(cluster, len(x))
    if g < 2:
        return math.nan, g
    residual_sums = np.bincount(codes, weights=x - x.mean(), minlength=g)
    var = g / (g - 1) * float(np.sum(residual_sums**2)) / len(x) ** 2
    return math.sqrt(var), g


def mean_ci(
    values: Values,
    cluster: Values | Sequence[Any] | None = None,
    level: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """Mean with a t interval; clustered standard error when ``cluster`` is given.

    Cluster by item (``sample_id``) when several epochs of the same item are pooled, or by
    the unit that was sampled (passage, repository) when items come in groups: the
    independent-observation interval is too narrow otherwise.

    ``bounds`` clips the interval to the score's possible range (e.g. ``(0, 1)`` for
    accuracy), so a near-0 or near-1 proportion never shows an impossible limit; the
    estimate and standard error are unchanged.
    """
    est = _mean_ci(values, cluster, level)
    if bounds is None:
        return est
    low, high = bounds
    return Estimate(est.estimate, est.se, min(max(est.lo, low), high),
                    max(min(est.hi, high), low), est.n, est.n_clusters, est.level)


def _mean_ci(values: Values, cluster: Values | Sequence[Any] | None, level: float) -> Estimate:
    _check_level(level)
    x = _values(values)
    n = len(x)
    if n == 0:
        raise ValueError("no values")
    mean = float(x.mean())
    if cluster is None:
        se = float(x.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
        lo, hi = _t_interval(mean, se, n - 1, level)
        return Estimate(mean, se, lo, hi, n, None, level)
    se, g = clustered_se(x, cluster)
    lo, hi = _t_interval(mean, se, g - 1, level)
    return Estimate(mean, se, lo, hi, n, g, level)


def _apply_rows(statistic: Callable[..., Any], data: NDArray[np.float64]) -> NDArray[np.float64]:
    """``statistic`` over each row, vectorised when it takes ``axis`` (numpy reducers do)."""
    try:
        out = np.asarray(statistic(data, axis=1), dtype=np.float64)
        if out.shape == (data.shape[0],):
            return out
    except TypeError:
        pass
    return np.array([statistic(row) for row in data], dtype=np.float64)


def bootstrap_ci(
    values: Values,
    statistic: Callable[..., Any] = np.mean,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    cluster: Values | Sequence[Any] | None = None,
) -> Estimate:
    """Percentile bootstrap interval for ``statistic`` (default: the mean).

    Resampling is one ``(n_boot, n)`` index draw, so reducers that take ``axis`` (the
    numpy ones) run without a Python loop. With ``cluster``, whole clusters are resampled
    (the cluster bootstrap); for the mean this stays vectorised through cluster sums and
    sizes, for other statistics it loops over resamples, since resampled sizes differ.
    ``se`` is the standard deviation of the bootstrap distribution.
    """
    _check_level(level)
    x = _values(values)
    n = len(x)
    if n == 0:
        raise ValueError("no values")
    rng = np.random.default_rng(seed)
    estimate = float(statistic(x))
    g: int | None = None
    if cluster is None:
        boot = _apply_rows(statistic, x[rng.integers(0, n, size=(n_boot, n))])
    else:
        codes, g = _cluster_codes(cluster, n)
        draws = rng.integers(0, g, size=(n_boot, g))
        if statistic is np.mean:
            sums = np.bincount(codes, weights=x, minlength=g)
            sizes = np.bincount(codes, minlength=g).astype(np.float64)
            boot = sums[draws].sum(axis=1) / sizes[draws].sum(axis=1)
        else:
            members = [x[codes == c] for c in range(g)]
            boot = np.array(
                [float(statistic(np.concatenate([members[c] for c in row]))) for row in draws]
            )
    alpha = 1.0 - level
    lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    se = float(boot.std(ddof=1)) if n_boot > 1 else math.nan
    return Estimate(estimate, se, float(lo), float(hi), n, g, level)


# --------------------------------------------------------------------------- paired


def paired_difference_ci(
    a: Values, b: Values, level: float = 0.95, cluster: Values | Sequence[Any] | None = None
) -> Estimate:
    """Mean of ``a - b`` over aligned items, with its (optionally clustered) t interval.

    Pairing removes the between-item variance both conditions share, which is why a paired
    comparison of two models on the same items needs far fewer items than two separate CIs
    suggest (Miller 2024, sec. 4).
    """
    xa, xb = _values(a, "a"), _values(b, "b")
    if len(xa) != len(xb):
        raise ValueError(f"a has {len(xa)} values and b has {len(xb)}; align them first")
    return mean_ci(xa - xb, cluster=cluster, level=level)


def paired_difference(
    df: pl.DataFrame,
    by: str,
    value: str,
    item: str | Sequence[str],
    levels: tuple[Any, Any] | None = None,
    cluster: str | None = None,
    level: float = 0.95,
) -> tuple[Estimate, pl.DataFrame]:
    """Paired difference ``levels[0] - levels[1]`` of ``value`` between two levels of ``by``.

    Rows are first averaged per item and level (so several epochs count once per item),
    then aligned on ``item``. Items present under only one level are not paired; they are
    returned, never silently lost.

    Args:
        df: A frame with one or more rows per item and level (e.g. the results frame).
        by: Column holding the two conditions (e.g. ``model``).
        value: Numeric column to compare (e.g. ``score_value``).
        item: Column(s) identifying an item (e.g. ``sample_id``).
        levels: The two levels to compare; default: the column's two distinct values,
            sorted.
        cluster: Optional column grouping items (constant per item) for a clustered SE.
        level: Confidence level.

    Returns:
        The estimate, and a frame of unmatched items with the ``by`` level they have.
    """
    items = [item] if isinstance(item, str) else list(item)
    if levels is None:
        found = df.get_column(by).unique().sort().to_list()
        if len(found) != 2:
            raise ValueError(f"{by} has {len(found)} levels {found}; pass levels=")
        levels = (found[0], found[1])
    keep = [*items, *([cluster] if cluster else [])]
    per_item = (
        df.filter(pl.col(by).is_in(list(levels)))
        .group_by([*keep, by])
        .agg(pl.col(value).mean())
    )
    left = per_item.filter(pl.col(by) == levels[0]).drop(by)
    right = per_item.filter(pl.col(by) == levels[1]).drop(by)
    paired = left.join(right, on=keep, how="inner", suffix="_b").sort(items)
    unmatched = pl.concat([
        left.join(right, on=items, how="anti").select(items).with_columns(
            pl.lit(levels[0]).alias(by)),
        right.join(left, on=items, how="anti").select(items).with_columns(
            pl.lit(levels[1]).alias(by)),
    ])
    if paired.height == 0:
        raise ValueError("no item is present under both levels")
    est = paired_difference_ci(
        paired.get_column(value), paired.get_column(f"{value}_b"), level=level,
        cluster=paired.get_column(cluster) if cluster else None,
    )
    return est, unmatched


# --------------------------------------------------------------------------- proportions


def _check_counts(successes: int, n: int) -> None:
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n > 0, got {successes}/{n}")


def wilson_ci(successes: int, n: int, level: float = 0.95) -> Estimate:
    """Wilson score interval for a proportion: stays inside [0, 1] and is not degenerate at
    0 or n successes, unlike the normal (Wald) interval."""
    _check_level(level)
    _check_counts(successes, n)
    z = float(sps.norm.ppf(0.5 + level / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at 0 or n successes the bound is exactly 0 or 1; the formula leaves rounding error
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return Estimate(p, math.sqrt(p * (1 - p) / n), lo, hi, n, None, level)


def clopper_pearson_ci(successes: int, n: int, level: float = 0.95) -> Estimate:
    """Exact (Clopper-Pearson) interval from beta quantiles: conservative, never too short."""
    _check_level(level)
    _check_counts(successes, n)
    alpha = 1 - level
    lo = 0.0 if successes == 0 else float(sps.beta.ppf(alpha / 2, successes, n - successes + 1))
    hi = 1.0 if successes == n else float(sps.beta.ppf(1 - alpha / 2, successes + 1,
                                                       n - successes))
    p = successes / n
    return Estimate(p, math.sqrt(p * (1 - p) / n), lo, hi, n, None, level)


# --------------------------------------------------------------------------- regression


def fit_logistic(
    x: Values, y: Values, ridge: float = 1e-3, iters: int = 50
) -> tuple[float, float]:
    """(intercept, slope) of a logistic regression of ``y`` (0/1 or proportions) on ``x``,
    by Newton's method.

    A small ridge penalty keeps the fit finite under separation (all-0 / all-1 groups),
    where an unpenalised maximum-likelihood fit diverges; away from separation it moves
    the estimates negligibly. ``x`` is centred internally for stability.
    """
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    mu = xs.mean() if len(xs) else 0.0
    design = np.column_stack([np.ones_like(xs), xs - mu])
    beta = np.zeros(2)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-design @ beta))
        grad = design.T @ (ys - p) - ridge * beta
        hess = design.T @ (design * (p * (1 - p))[:, None]) + ridge * np.eye(2)
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if np.abs(step).max() < 1e-9:
            break
    return float(beta[0] - beta[1] * mu), float(beta[1])


# --------------------------------------------------------------------------- multiplicity


def holm_adjust(pvalues: Values) -> NDArray[np.float64]:
    """Holm step-down adjusted p-values (family-wise error control), in input order.

    ``adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))`` over the ascending p-values.
    """
    p = _values(pvalues, "pvalues")
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


# --------------------------------------------------------------------------- agreement


def kendall_w(matrix: ArrayLike) -> float:
    """Kendall's coefficient of concordance W, with the correction for ties.

    Rows are raters (or conditions, e.g. benchmarks), columns the items they rank
    (e.g. models); values are scores or ranks, ranked within each row (ties get average
    ranks). ``W = 12 S / (m^2 (n^3 - n) - m sum T)``, ``S`` the squared deviations of the
    column rank sums from their mean and ``T = sum (t^3 - t)`` over each row's tie groups.
    1 means every row orders the items the same way, 0 no agreement.
    """
    data = np.asarray(matrix, dtype=np.float64)
    if data.ndim != 2 or data.shape[0] < 2 or data.shape[1] < 2:
        raise ValueError("need a 2-d matrix with at least 2 raters and 2 items")
    if np.isnan(data).any():
        raise ValueError("matrix has NaN values")
    m, n = data.shape
    ranks = sps.rankdata(data, axis=1)
    column_sums = ranks.sum(axis=0)
    s = float(np.sum((column_sums - column_sums.mean()) ** 2))
    ties = 0.0
    for row in data:
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts.astype(np.float64) ** 3 - counts))
    denom = m * m * (n**3 - n) - m * ties
    return math.nan if denom == 0 else 12.0 * s / denom


def _tied_pairs(x: NDArray[np.float64]) -> float:
    _, counts = np.unique(x, return_counts=True)
    return float(np.sum(counts * (counts - 1) / 2))


def kendall_tau(a: Values, b: Values) -> float:
    """Kendall's tau-b rank correlation (tie-adjusted), e.g. between two leaderboards.

    ``tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2))`` with ``n0 = n(n-1)/2`` pairs and
    ``n1``, ``n2`` the pairs tied in ``a`` and in ``b``. ``C - D`` is summed in row blocks
    so memory stays O(n * block) for long vectors.
    """
    x, y = _values(a, "a"), _values(b, "b")
    n = len(x)
    if n != len(y):
        raise ValueError(f"a has {n} values and b has {len(y)}")
    if n < 2:
        return math.nan
    block = max(1, 2_000_000 // n)
    s = 0.0
    for start in range(0, n, block):
        stop = min(n, start + block)
        dx = np.sign(x[start:stop, None] - x[None, :])
        dy = np.sign(y[start:stop, None] - y[None, :])
        s += float(np.sum(dx * dy))
    n0 = n * (n - 1) / 2
    denom = math.sqrt((n0 - _tied_pairs(x)) * (n0 - _tied_pairs(y)))
    return math.nan if denom == 0 else (s / 2) / denom


# --------------------------------------------------------------------------- power


def paired_power(
    n: int, diff: float, sd_diff: float, alpha: float = 0.05, two_sided: bool = True
) -> float:
    """Power of the paired t-test on ``n`` items (exact, via the noncentral t)."""
    if n < 2:
        return math.nan
    df = n - 1
    nc = abs(diff) / sd_diff * math.sqrt(n)  # power is symmetric in the sign of diff
    if two_sided:
        crit = float(sps.t.ppf(1 - alpha / 2, df))
        # the far tail can come back NaN from scipy's nct where it is ~0 (nc >> crit)
        far = float(np.nan_to_num(sps.nct.cdf(-crit, df, nc), nan=0.0))
        return float(sps.nct.sf(crit, df, nc)) + far
    crit = float(sps.t.ppf(1 - alpha, df))
    return float(sps.nct.sf(crit, df, nc))


def items_needed(
    diff: float,
    sd_diff: float,
    alpha: float = 0.05,
    power: float = 0.8,
    two_sided: bool = True,
) -> int:
    """Smallest number of paired items for a paired t-test to detect ``diff`` with ``power``.

    ``sd_diff`` is the standard deviation of per-item differences (estimate it from a
    pilot: ``sd(a - b)``). The normal approximation
    ``n = ((z_{1-alpha/2} + z_power) sd_diff / diff)^2`` is the starting point; the exact
    noncentral-t power then fixes the small-n answer.
    """
    if diff == 0 or sd_diff <= 0:
        raise ValueError("need diff != 0 and sd_diff > 0")
    z_alpha = float(sps.norm.ppf(1 - alpha / 2 if two_sided else 1 - alpha))
    z_power = float(sps.norm.ppf(power))
    n = max(2, math.ceil(((z_alpha + z_power) * sd_diff / abs(diff)) ** 2))
    while n > 2 and paired_power(n - 1, abs(diff), sd_diff, alpha, two_sided) >= power:
        n -= 1
    while paired_power(n, abs(diff), sd_diff, alpha, two_sided) < power:
        n += 1
    return n


def minimum_detectable_difference(
    n: int,
    sd_diff: float,
    alpha: float = 0.05,
    power: float = 0.8,
    two_sided: bool = True,
) -> float:
    """Smallest mean paired difference ``n`` items detect with ``power`` (the inverse of
    :func:`items_needed`): what a benchmark of this size can and cannot tell apart."""
    if n < 2 or sd_diff <= 0:
        raise ValueError("need n >= 2 and sd_diff > 0")

    def gap(d: float) -> float:
        return paired_power(n, d, sd_diff, alpha, two_sided) - power

    hi = sd_diff
    while gap(hi) < 0:
        hi *= 2
    return float(optimize.brentq(gap, 0.0, hi, xtol=1e-12 * sd_diff))


# --------------------------------------------------------------------------- rankings
# (added for leaderboards: ranks with bootstrap intervals over items)


@dataclass(frozen=True)
class RankIntervals:
    """Observed ranks of several systems with percentile bootstrap intervals.

    Ranks are competition ranks (1 = best; systems with equal means share the smaller
    rank). ``lo``/``hi`` are the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of
    each system's rank over item resamples, rounded outward to whole ranks.
    """

    rank: NDArray[np.int64]
    lo: NDArray[np.int64]
    hi: NDArray[np.int64]
    n_boot: int
    level: float


def _competition_ranks(means: NDArray[np.float64], higher_is_better: bool) -> NDArray[np.int64]:
    """Row-wise competition ranks of ``means`` (..., k); NaN ranks last."""
    m = np.where(np.isnan(means), -np.inf if higher_is_better else np.inf, means)
    if not higher_is_better:
        m = -m
    better = (m[..., None, :] > m[..., :, None]).sum(axis=-1)
    return (better + 1).astype(np.int64)


def bootstrap_rank_interval(
    matrix: ArrayLike,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    higher_is_better: bool = True,
    chunk: int = 64,
) -> RankIntervals:
    """Ranks of systems (columns) by their mean over items (rows), with bootstrap intervals.

    Items are resampled with replacement, the same draw for every system, so the
    resampling keeps the pairing: two systems that differ by less than the paired noise
    swap places in many resamples and get overlapping rank intervals, while a system
    that wins on nearly every resample keeps a tight one. A system missing an item
    (NaN) is averaged over the items it has in each resample. Resamples are processed
    ``chunk`` at a time as count-weighted matrix products, so memory is
    O(chunk x items) however many resamples are drawn.

    Args:
        matrix: (items x systems) per-item scores (average epochs first); NaN = missing.
        n_boot: Number of item resamples.
        level: Coverage of each rank interval.
        seed: Seed of the resampling.
        higher_is_better: Rank 1 is the highest mean (else the lowest).
        chunk: Resamples per matrix product.
    """
    _check_level(level)
    data = np.asarray(matrix, dtype=np.float64)
    if data.ndim != 2 or data.shape[0] == 0 or data.shape[1] == 0:
        raise ValueError("need a non-empty 2-d (items x systems) matrix")
    if n_boot < 1:
        raise ValueError("n_boot must be >= 1")
    n_items, k = data.shape
    present = ~np.isnan(data)
    if not present.any(axis=0).all():
        raise ValueError("every system needs at least one scored item")
    filled = np.where(present, data, 0.0)
    weights = present.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = filled.sum(axis=0) / weights.sum(axis=0)
    rank = _competition_ranks(observed, higher_is_better)
    rng = np.random.default_rng(seed)
    boot = np.empty((n_boot, k), dtype=np.int64)
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        draws = rng.integers(0, n_items, size=(size, n_items))
        offsets = (np.arange(size) * n_items)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=size * n_items)
        counts = counts.reshape(size, n_items).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (counts @ filled) / (counts @ weights)
        boot[start:start + size] = _competition_ranks(means, higher_is_better)
    alpha = 1.0 - level
    lo = np.floor(np.quantile(boot, alpha / 2, axis=0)).astype(np.int64)
    hi = np.ceil(np.quantile(boot, 1 - alpha / 2, axis=0)).astype(np.int64)
    return RankIntervals(rank, lo, hi, n_boot, level)
