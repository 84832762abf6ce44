"""harness.cost: prices in Inspect's --model-cost-config format, dollars as Inspect computes
them, and cost per sample and per point (issue 51 item 8)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from harness.cost import Price, cost_summary, load_pricing, price_for, with_dollars
from harness.errors import UserInputError

INSPECT_FILE = """\
openai/gpt-4o-mini:
  input: 0.15
  output: 0.60
  input_cache_write: 0.0
  input_cache_read: 0.075
local-model:
  input: 1.0
  output: 2.0
"""


def test_an_inspect_cost_config_loads_and_prices_as_inspect_does(tmp_path: Path) -> None:
    from inspect_ai.model import ModelCost, ModelUsage, compute_model_cost

    path = tmp_path / "prices.yaml"
    path.write_text(INSPECT_FILE)
    prices = load_pricing(path)
    full = prices["openai/gpt-4o-mini"]
    # the same mapping is a valid Inspect ModelCost, and a sample costs what Inspect says
    cost = ModelCost(input=0.15, output=0.60, input_cache_write=0.0, input_cache_read=0.075)
    usage = ModelUsage(input_tokens=12_000, output_tokens=3_000, total_tokens=15_000,
                       input_tokens_cache_read=4_000)
    assert full.dollars(12_000, 3_000, 4_000) == pytest.approx(compute_model_cost(cost, usage))
    # a short entry (no cache prices) prices cached input at the input price
    assert prices["local-model"].dollars(1_000, 500, 100) == pytest.approx(
        (1_100 * 1.0 + 500 * 2.0) / 1e6)
    # looked up by the full name, else without the provider
    assert price_for(prices, "embedded/local-model") is prices["local-model"]
    assert price_for(prices, "none/none") is None and price_for(prices, None) is None


@pytest.mark.parametrize("text", ["[1, 2]\n", "m:\n  input: 1\n",
                                  "m:\n  input: 1\n  output: 2\n  per_request: 3\n"])
def test_a_bad_pricing_file_is_one_line_naming_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(UserInputError, match=str(path)):
        load_pricing(path)


def _frame() -> pl.DataFrame:
    return pl.DataFrame({
        "model": ["p/a", "p/a", "p/b", "p/b", "none/none"],
        "cell": ["x", "x", "y", "y", "z"],
        "input_tokens": [1000, 3000, 500, 500, 0], "output_tokens": [100, 300, 50, 50, 0],
        "total_tokens": [1100, 3300, 550, 550, 0], "cache_read_tokens": [0, 0, 0, 0, 0],
        "working_time": [2.0, 4.0, 1.0, 1.0, 0.1], "total_time": [3.0, 5.0, 1.0, 1.0, 0.1],
        "score_value": [1.0, 0.0, 0.0, 0.0, 1.0],
    })


def test_cost_summary_gives_per_sample_means_and_cost_per_point() -> None:
    prices = {"p/a": Price(input=2.0, output=10.0), "p/b": Price(input=1.0, output=1.0)}
    rows = {r["cell"]: r for r in cost_summary(_frame(), ["cell"], prices).iter_rows(
        named=True)}
    a = rows["x"]
    dollars = ((1000 * 2 + 100 * 10) + (3000 * 2 + 300 * 10)) / 1e6 / 2
    assert a["n"] == 2 and a["dollars_per_sample"] == pytest.approx(dollars)
    assert a["tokens_per_sample"] == 2200 and a["working_s_per_sample"] == 3.0
    assert a["mean_score"] == 0.5 and a["score_per_dollar"] == pytest.approx(0.5 / dollars)
    assert a["dollars_per_point"] == pytest.approx(dollars / 0.5)
    assert a["tokens_per_point"] == pytest.approx(4400)
    # a score of 0 has no cost per point; an unpriced model no dollars (never 0)
    assert rows["y"]["dollars_per_point"] is None and rows["y"]["score_per_dollar"] == 0.0
    assert rows["z"]["dollars_per_sample"] is None and rows["z"]["score_per_dollar"] is None
    assert with_dollars(_frame(), {})["dollars"].null_count() == 5


def test_cache_reads_are_priced_once_under_either_token_convention() -> None:
    """One call: 10,000 prompt tokens of which 8,000 re-used, 500 output. Inspect's
    providers log input 2,000 + cache read 8,000 (total 10,500); the embedded provider
    logs input 10,000 and cache read 8,000 (total 10,500). Same dollars either way."""
    price = Price(input=1.0, output=4.0, input_cache_read=0.1)
    want = (2_000 * 1.0 + 500 * 4.0 + 8_000 * 0.1) / 1e6
    assert price.dollars(2_000, 500, 8_000, total_tokens=10_500) == pytest.approx(want)
    assert price.dollars(10_000, 500, 8_000, total_tokens=10_500) == pytest.approx(want)
    frame = pl.DataFrame({"model": ["m", "m"], "input_tokens": [2_000, 10_000],
                          "output_tokens": [500, 500], "cache_read_tokens": [8_000, 8_000],
                          "total_tokens": [10_500, 10_500]})
    assert with_dollars(frame, {"m": price})["dollars"].to_list() == pytest.approx([want, want])
