"""ANOVA and binomial GLM on a large 4 x 3 x 2 study with all interactions.

CI runs 100k rows; measure the 1M-row target by hand with
``EVALSUITE_PERF_ROWS=1000000 pytest tests/perf/test_analysis_perf.py --benchmark-enable``.
The analysis aggregates to cells, so its cost is dominated by one polars group-by.
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl
import pytest

from harness.factorial.analysis import analyze

ROWS = int(os.environ.get("EVALSUITE_PERF_ROWS", "100000"))

pytestmark = pytest.mark.perf


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    rng = np.random.default_rng(0)
    a, b, c = rng.integers(0, 4, ROWS), rng.integers(0, 3, ROWS), rng.integers(0, 2, ROWS)
    logit = -0.5 + 0.3 * a - 0.4 * b + 0.2 * c + 0.1 * a * c
    y = (rng.random(ROWS) < 1 / (1 + np.exp(-logit))).astype(np.int8)
    return pl.DataFrame(
        {"model": a.astype(str), "prompt": b.astype(str), "k": c.astype(str), "y": y}
    )


def test_anova_large(benchmark, frame: pl.DataFrame) -> None:
    result = benchmark(analyze, frame, "y", ["model", "prompt", "k"], order=3)
    assert result.anova.height == 8 and result.model["n_obs"] == ROWS


def test_binomial_glm_large(benchmark, frame: pl.DataFrame) -> None:
    result = benchmark(analyze, frame, "y", ["model", "prompt", "k"], family="binomial", order=3)
    rows = {r["term"]: r for r in result.anova.to_dicts()}
    assert rows["model"]["p"] < 1e-6  # the planted model effect is found
