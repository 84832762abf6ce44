"""The ESamp probe: seeded items, answer extraction, the unbiased pass@k estimator, diversity
measures, the n-sample solver (one batch per item through whitebox/)."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path
from typing import cast

import pytest
from inspect_ai.dataset import Sample

from benchmarks.probes.esamp_arith import (
    distinct_n,
    esamp_arith,
    last_int,
    make_samples,
    score_replies,
    spread,
    unbiased_pass_at_k,
)


def test_items_are_seeded_and_verifiable() -> None:
    a, b = make_samples(8, seed=1), make_samples(8, seed=1)
    def texts(samples: list[Sample]) -> list[list[str]]:
        return [[m.text for m in s.input] for s in samples]  # type: ignore[union-attr]

    assert texts(a) == texts(b)
    assert texts(make_samples(8, seed=2)) != texts(a)
    for s in a:
        meta = s.metadata or {}
        expected = (meta["a"] + meta["b"] + meta["c"] if meta["kind"] == "sum3"
                    else meta["a"] * meta["b"])
        assert int(str(s.target)) == expected
        question = s.input[-1].text  # type: ignore[union-attr]
        assert str(meta["a"]) in question and str(meta["b"]) in question
    assert {s.metadata["kind"] for s in a} == {"sum3", "product"}  # type: ignore[index]
    assert len({s.id for s in a}) == 8


def test_last_int_and_distinct_n() -> None:
    assert last_int("The answer is 1,234.") == "1234"
    assert last_int("27 + 3 = 30") == "30"
    assert last_int("no number") is None
    assert distinct_n(["a b", "a b"], 1) == pytest.approx(2 / 4)
    assert distinct_n(["a b c", "a b d"], 2) == pytest.approx(3 / 4)
    assert distinct_n([""], 2) == 0.0


def test_unbiased_pass_at_k_by_hand() -> None:
    # 1 - C(n-c, k) / C(n, k), computed by hand
    assert unbiased_pass_at_k(16, 0, 4) == 0.0
    assert unbiased_pass_at_k(16, 1, 1) == pytest.approx(1 / 16)
    assert unbiased_pass_at_k(16, 1, 4) == pytest.approx(4 / 16)  # 1 - 1365/1820
    assert unbiased_pass_at_k(16, 2, 4) == pytest.approx(1 - 1001 / 1820)
    assert unbiased_pass_at_k(16, 1, 16) == 1.0
    assert unbiased_pass_at_k(16, 13, 4) == 1.0  # fewer than k wrong: every k-set hits
    assert unbiased_pass_at_k(4, 2, 2) == pytest.approx(5 / 6)
    with pytest.raises(ValueError):
        unbiased_pass_at_k(4, 5, 1)
    with pytest.raises(ValueError):
        unbiased_pass_at_k(4, 1, 5)


@pytest.mark.parametrize("n,c,k", [(6, 2, 3), (7, 1, 2), (8, 3, 4), (5, 0, 2)])
def test_unbiased_pass_at_k_equals_the_fraction_of_k_subsets_with_a_hit(
    n: int, c: int, k: int
) -> None:
    right = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(right, k))
    assert unbiased_pass_at_k(n, c, k) == pytest.approx(
        sum(any(s) for s in subsets) / len(subsets))


def test_score_replies() -> None:
    replies = ["42", "The answer is 42", "41", "", "42"] + ["7"] * 11
    values = score_replies(replies, "42")
    assert values["correct"] == 3.0
    assert values["pass_at_1"] == pytest.approx(3 / 16)
    assert values["pass_at_4"] == pytest.approx(unbiased_pass_at_k(16, 3, 4))
    assert values["pass_at_16"] == 1.0
    assert values["answers"] == pytest.approx(4 / 16)  # 42, 41, None, 7
    assert set(values) >= {"distinct_1", "distinct_2"}
    assert "pass_at_16" not in score_replies(["1", "2"], "1")  # k > n is not scored


@pytest.mark.slow
def test_spread_orders_identical_below_different() -> None:
    assert spread(["42", "42"]) == pytest.approx(0.0, abs=1e-5)
    assert spread(["42", "The capital of France is Paris."]) > 0.3
    assert spread(["only one"]) == 0.0


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="needs transformers")
def test_task_draws_each_items_samples_as_one_batch(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval

    import harness.models.providers  # noqa: F401

    [log] = inspect_eval(esamp_arith(n=3, samples=4, max_tokens=6),
                         model="whitebox/smollm2-135m",
                         model_args={"method": "esamp", "beta": 0.1, "batch_size": 8},
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert len(log.samples or []) == 3
    for sample in log.samples or []:
        assert len(sample.metadata["replies"]) == 4
        # the item lock keeps an item's 4 requests in one batch: one shared distiller
        assert [m["esamp_group_rows"] for m in sample.metadata["reply_metadata"]] == [4] * 4
        value = cast(dict[str, float], sample.scores["pass_at_k"].value)  # type: ignore[index]
        assert value["pass_at_4"] >= value["pass_at_1"]
        assert "pass_at_16" not in value
        assert 0.0 <= value["distinct_1"] <= 1.0
