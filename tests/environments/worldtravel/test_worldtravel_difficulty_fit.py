"""Issue 47 item 4 on a graded response: ``stats.difficulty_fit``.

Feasibility is at 0 for every family member on the shipped set, so the count-vs-length
question is asked of the share of global constraints a plan passes. Here the shipped
scenarios' own counts and lengths carry synthetic shares with a known answer (the count
matters and the length not, and the reverse), so the section's verdict can fail; the
slow test in ``test_planner_family.py`` runs it on real plans."""

from __future__ import annotations

import numpy as np
import pytest

from environments.worldtravel.analysis import PlanCounts
from environments.worldtravel.scenario import Scenario
from environments.worldtravel.stats import Outcome, difficulty_fit, graded_responses
from environments.worldtravel.store import shipped_scenarios
from harness.stats import fractional_logit_effects

COUNTS = PlanCounts(True, 1, 1, 0, 1, True)


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return list(shipped_scenarios())


def _outcomes(scenarios: list[Scenario], eta: np.ndarray, seed: int) -> list[Outcome]:
    """One synthetic member: n_global trials per scenario at success rate expit(eta)."""
    rng = np.random.default_rng(seed)
    out: list[Outcome] = []
    for s, e in zip(scenarios, eta, strict=True):
        total = max(1, s.n_global)
        passed = int(rng.binomial(total, 1 / (1 + np.exp(-e))))
        out.append((False, passed / total, COUNTS, (passed, total)))
    return out


def _z(x: list[float]) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    return (a - a.mean()) / a.std()


def test_the_verdict_follows_the_count_when_only_the_count_matters(
    scenarios: list[Scenario],
) -> None:
    zc = _z([s.n_constraints for s in scenarios])
    results = {f"m{j}": _outcomes(scenarios, 1.0 + 0.3 * j - 0.8 * zc, seed=j)
               for j in range(3)}
    out = difficulty_fit(scenarios, results, fractional_logit_effects)
    for row in [*(m["global"] for m in out["members"].values()), out["pooled"]["global"]]:
        assert row["count_larger"] is True, row
        assert row["larger"] == "count" and row["direction"] == "lowers"
        assert row["count"]["high"] < 0 and row["days"]["low"] < 0 < row["days"]["high"]
    assert out["primary"] == "global" and out["scenarios"] == len(scenarios)


def test_the_verdict_follows_the_length_when_only_the_length_matters(
    scenarios: list[Scenario],
) -> None:
    zd = _z([s.days for s in scenarios])
    results = {f"m{j}": _outcomes(scenarios, 1.0 - 0.8 * zd, seed=10 + j) for j in range(3)}
    pooled = difficulty_fit(scenarios, results, fractional_logit_effects)["pooled"]["global"]
    assert pooled["count_larger"] is False
    assert pooled["larger"] == "days" and pooled["direction"] == "lowers"
    assert pooled["difference"]["high"] < 0


def test_no_effect_gives_no_winner(scenarios: list[Scenario]) -> None:
    results = {"m": _outcomes(scenarios, np.full(len(scenarios), 0.5), seed=99)}
    row = difficulty_fit(scenarios, results, fractional_logit_effects)["members"]["m"]["global"]
    assert row["larger"] == "neither" and row["count_larger"] is False


def test_graded_responses_read_the_outcome() -> None:
    rows: list[Outcome] = [(False, 0.75, COUNTS, (1, 4)), (True, 1.0, COUNTS, (0, 0))]
    shares = graded_responses(rows)
    assert shares["global"] == [0.25, 1.0]  # no global constraint: nothing failed
    assert shares["all"] == [0.75, 1.0]
