"""The ESamp probe: seeded items, answer extraction, diversity measures, the k-sample solver."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import cast

import pytest

from benchmarks.probes.esamp_arith import distinct_n, esamp_arith, last_int, make_samples, spread


def test_items_are_seeded_and_verifiable() -> None:
    a, b = make_samples(8, seed=1), make_samples(8, seed=1)
    assert [s.input for s in a] == [s.input for s in b]
    assert [s.input for s in make_samples(8, seed=2)] != [s.input for s in a]
    for s in a:
        assert int(str(s.target)) == s.metadata["a"] + s.metadata["b"]  # type: ignore[index]
    assert len({s.id for s in a}) == 8


def test_last_int_and_distinct_n() -> None:
    assert last_int("The answer is 1,234.") == "1234"
    assert last_int("27 + 3 = 30") == "30"
    assert last_int("no number") is None
    assert distinct_n(["a b", "a b"], 1) == pytest.approx(2 / 4)
    assert distinct_n(["a b c", "a b d"], 2) == pytest.approx(3 / 4)
    assert distinct_n([""], 2) == 0.0


@pytest.mark.slow
def test_spread_orders_identical_below_different() -> None:
    assert spread(["42", "42"]) == pytest.approx(0.0, abs=1e-5)
    assert spread(["42", "The capital of France is Paris."]) > 0.3
    assert spread(["only one"]) == 0.0


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="needs transformers")
def test_task_runs_k_samples_through_whitebox(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval

    import harness.models.providers  # noqa: F401

    [log] = inspect_eval(esamp_arith(n=2, k=3, max_tokens=6), model="whitebox/smollm2-135m",
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    for sample in log.samples or []:
        assert len(sample.metadata["replies"]) == 3
        value = cast(dict[str, float], sample.scores["pass_at_k"].value)  # type: ignore[index]
        assert value["pass_at_k"] >= value["pass_at_1"]
        assert 0.0 <= value["distinct_1"] <= 1.0
