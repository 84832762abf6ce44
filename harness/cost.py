"""What a run cost: tokens, time and, given prices, dollars per sample, and per point of score.

Why here: boards (:mod:`leaderboards.tables`) and factorial reports
(:mod:`harness.factorial.report`) both show cost next to score, and must price a token the
same way. Prices come in Inspect's own format, the file ``inspect eval
--model-cost-config FILE`` reads (``{model: {input, output, input_cache_write,
input_cache_read}}`` in US dollars per million tokens, Inspect's ``ModelCost``), so one
file prices a run, its board and its report. Usage comes from the results frame
(:mod:`harness.results`, the one reader of logs): per sample the input, output and
cache-read tokens and the total and working time.

A dollar figure is Inspect's ``compute_model_cost`` applied to a sample's summed usage;
cache writes are not in the per-sample usage the frame carries, so they are not priced (a
provider that bills them costs more than shown). Inspect's providers log ``input_tokens``
without the cached part (``total = input + output + cache reads``); a provider that logs
every prompt token as input and the re-used ones again as cache reads (the suite's
embedded llama.cpp provider: ``total = input + output``) would have its cached tokens
priced twice, so the cached tokens already inside ``input_tokens`` (``input + output +
cache_read - total``, when the total is logged) are taken out of the input first. A model
without a price has no dollar figure (never 0): a scripted agent or a local model is
unpriced unless the file prices it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

__all__ = ["PRICE_KEYS", "Price", "cost_summary", "load_pricing", "price_for", "with_dollars"]

PRICE_KEYS = ("input", "output", "input_cache_write", "input_cache_read")
"""The fields of Inspect's ``ModelCost`` ($ per million tokens)."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens, as Inspect's ``ModelCost``.

    ``input_cache_read`` prices the prompt tokens served from a provider's cache (the
    frame's ``cache_read_tokens``); left out, they cost the input price.
    ``input_cache_write`` is kept so an Inspect file loads unchanged; it is unused (see the
    module docstring).
    """

    input: float
    output: float
    input_cache_write: float | None = None
    input_cache_read: float | None = None

    def dollars(self, input_tokens: int, output_tokens: int, cache_read_tokens: int = 0,
                total_tokens: int | None = None) -> float:
        """Inspect's ``compute_model_cost`` on summed usage (cache writes not logged);
        with ``total_tokens``, cache reads already counted in the input are priced once."""
        cached = self.input if self.input_cache_read is None else self.input_cache_read
        inside = (0 if not total_tokens else
                  min(cache_read_tokens, max(0, input_tokens + output_tokens
                                             + cache_read_tokens - total_tokens)))
        return ((input_tokens - inside) * self.input + output_tokens * self.output
                + cache_read_tokens * cached) / 1e6


def load_pricing(path: str | Path) -> dict[str, Price]:
    """Model prices from an Inspect ``--model-cost-config`` file (JSON, or YAML by suffix).

    Inspect requires all four prices; here the two cache prices may be left out. A model
    is named as in the logs (``openai/gpt-4o-mini``) or without its provider.

    Raises:
        UserInputError: The file is not such a mapping (one line naming the file).
    """
    from harness.errors import UserInputError

    text = Path(path).read_text()
    if str(path).endswith((".yaml", ".yml")):
        import yaml

        data = yaml.safe_load(text)
    else:
        data = json.loads(text)
    if not isinstance(data, dict):
        raise UserInputError(f"{path}: a pricing file maps model -> {{input, output}} $/Mtok")
    prices: dict[str, Price] = {}
    for model, cost in data.items():
        unknown = sorted(set(cost) - set(PRICE_KEYS)) if isinstance(cost, dict) else None
        if not isinstance(cost, dict) or unknown or "input" not in cost or "output" not in cost:
            raise UserInputError(
                f"{path}: {model}: needs input and output (optionally input_cache_write, "
                f"input_cache_read) in $ per million tokens"
                + (f"; unknown {', '.join(unknown)}" if unknown else ""))
        prices[str(model)] = Price(**{k: float(v) for k, v in cost.items()})
    return prices


def price_for(pricing: Mapping[str, Price], model: str | None) -> Price | None:
    """The price of ``model``: by its full name, else without the provider prefix."""
    if not model:
        return None
    found = pricing.get(model)
    if found is None and "/" in model:
        found = pricing.get(model.split("/", 1)[1])
    return found


def with_dollars(frame: pl.DataFrame, pricing: Mapping[str, Price],
                 model_column: str = "model") -> pl.DataFrame:
    """``frame`` (rows of the results frame) with ``dollars``: each row's sample priced at
    its model's price (null for an unpriced model). ``model_column`` holds the Inspect
    model name (a study frame keeps it as ``log_model`` when a factor is named ``model``)."""
    models = (frame.get_column(model_column).unique().to_list()
              if model_column in frame.columns else [])
    rows = [(m, p.input, p.output, p.input if p.input_cache_read is None else p.input_cache_read)
            for m in models if (p := price_for(pricing, m)) is not None]
    table = pl.DataFrame(rows, schema={model_column: pl.String(), "_pin": pl.Float64(),
                                       "_pout": pl.Float64(), "_pcache": pl.Float64()},
                         orient="row")
    cached = (pl.col("cache_read_tokens").fill_null(0) if "cache_read_tokens" in frame.columns
              else pl.lit(0))
    given, out = pl.col("input_tokens").fill_null(0), pl.col("output_tokens").fill_null(0)
    total = pl.col("total_tokens").fill_null(0) if "total_tokens" in frame.columns else pl.lit(0)
    # cache reads a provider also counted as input (see the module docstring)
    inside = (pl.when(total > 0)
              .then(pl.min_horizontal(cached, pl.max_horizontal(given + out + cached - total,
                                                                pl.lit(0))))
              .otherwise(0))
    return (frame.join(table, on=model_column, how="left")
            .with_columns((((given - inside) * pl.col("_pin") + out * pl.col("_pout")
                            + cached * pl.col("_pcache")) / 1e6).alias("dollars"))
            .drop("_pin", "_pout", "_pcache"))


def _ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """``num / den`` where ``den`` is positive, else null (no division by a zero cost)."""
    return pl.when(den > 0).then(num / den).otherwise(None)


def cost_summary(frame: pl.DataFrame, by: Sequence[str], pricing: Mapping[str, Price],
                 score: str = "score_value", model_column: str = "model") -> pl.DataFrame:
    """Per group of ``by``: samples, tokens, seconds and dollars per sample, the mean
    score, and what a point of it cost.

    ``frame`` holds one row per sample x epoch (one score key). ``dollars_per_sample`` is
    null when any row's model has no price; ``score_per_dollar`` and ``dollars_per_point``
    / ``tokens_per_point`` are null without a positive cost or score (a ratio of a
    lower-is-better score to cost means nothing; the caller leaves it out).
    """
    priced = with_dollars(frame, pricing, model_column)
    out = (priced.group_by(list(by), maintain_order=True)
           .agg(pl.len().alias("n"),
                pl.col("input_tokens").fill_null(0).mean().alias("input_tokens_per_sample"),
                pl.col("output_tokens").fill_null(0).mean().alias("output_tokens_per_sample"),
                pl.col("total_tokens").fill_null(0).mean().alias("tokens_per_sample"),
                pl.col("working_time").mean().alias("working_s_per_sample"),
                pl.col("total_time").mean().alias("total_s_per_sample"),
                pl.when(pl.col("dollars").is_null().any()).then(None)
                .otherwise(pl.col("dollars").mean()).alias("dollars_per_sample"),
                pl.col(score).mean().alias("mean_score")))
    return out.with_columns(
        _ratio(pl.col("mean_score"), pl.col("dollars_per_sample")).alias("score_per_dollar"),
        _ratio(pl.col("dollars_per_sample"), pl.col("mean_score")).alias("dollars_per_point"),
        _ratio(pl.col("tokens_per_sample"), pl.col("mean_score")).alias("tokens_per_point"),
    )
