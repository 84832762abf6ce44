"""Results frame -> leaderboard tables: entries, ranks, pairwise differences, overall.

An *entry* is one (benchmark, model, agent, setup): the model column of the log, the solver
(agent) that ran it, and the *setup*, a short label of the eval settings that vary between
logs of the same benchmark (task args, generation config, model args and, in the suite's
factorial logs, the factor levels). Settings that are the same in every log of a benchmark
are not part of the label, so an ordinary leaderboard of models has one row per model.

Per entry: the headline score (mean over samples x epochs), a 95% CI whose standard error is
clustered by item (``sample_id``), counts of samples, completed and errored samples, tokens,
cost when pricing is given, time, the normalised score where the benchmark has reference
agents (floor -> 0, oracle -> 1), and a rank with a bootstrap rank interval over items. Per
benchmark: every pair's paired difference with its CI. Across benchmarks: mean normalised
score and mean win rate per (model, agent).

What each benchmark's ``eval.yaml`` decides (:mod:`harness.evalspec`, overridable through
:class:`Options`): the headline score key, its direction (a lower-is-better score ranks
ascending: rank 1 is the lowest mean), the floor/ceiling agents (tried after the options'
references), and how an errored or unscored sample counts
(:func:`harness.results.apply_errored_policy`): ``zero`` scores it 0 and keeps it in the
mean; ``drop`` leaves it out of the mean and the ranking. Either way it is counted in
``errors``, and a minimised score never takes ``zero`` (0 would beat every real result), so
an errored sample can never rank above a real one. An entry whose every sample was
dropped has no score and ranks after every entry that has one.

All intervals come from :mod:`harness.stats`; this module only reshapes frames.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from harness.consistency import entry_consistency
from harness.cost import Price, price_for, with_dollars
from harness.evalspec import BenchmarkTask, ErroredPolicy, spec_for_task
from harness.results import apply_errored_policy, with_unreported_keys
from harness.stats import (
    adjacent_mdd,
    bootstrap_rank_interval,
    is_binary,
    is_proportion_score,
    paired_difference_ci,
    rank_tie_groups,
    score_mean_ci,
)

__all__ = [
    "Leaderboard",
    "Options",
    "Price",
    "Reference",
    "compute",
    "entry_frame",
    "parse_reference",
    "readable_name",
]

_AGENT_KEYS = {"agent", "solver"}  # task args already reflected in the solver column
_MODEL_FACTORS = {"model", "agent", "solver"}  # factor levels that duplicate a column


@dataclass(frozen=True)
class Reference:
    """How to find a benchmark's floor or oracle score.

    ``pattern`` matches (case-insensitive substring) an entry's model or agent; ``value``
    is a fixed score instead (e.g. a floor of 0 where random guessing cannot score).
    ``benchmark`` restricts the reference to one benchmark (None: any).
    """

    pattern: str | None = None
    value: float | None = None
    benchmark: str | None = None


def parse_reference(text: str) -> Reference:
    """``[BENCHMARK=]PATTERN_OR_NUMBER`` -> :class:`Reference` (the CLI's syntax)."""
    bench, sep, rest = text.rpartition("=")
    target = rest if sep else text
    try:
        value: float | None = float(target)
    except ValueError:
        value = None
    return Reference(pattern=None if value is not None else target, value=value,
                     benchmark=bench if sep else None)


@dataclass(frozen=True)
class Options:
    """What the build computes; the defaults suit any Inspect log.

    Attributes:
        headline: benchmark -> score key to rank on (default: the ``headline`` of the
            benchmark's eval.yaml when its logs hold that key, else the first score key
            that has any value).
        errored: how an errored sample counts: one policy (``zero`` or ``drop``) for every
            benchmark, or benchmark -> policy; the default (None) is each benchmark's
            eval.yaml (``zero`` for a benchmark without one).
        lower_is_better: benchmark -> direction of its headline, overriding eval.yaml
            (a benchmark eval.yaml does not describe is higher-is-better).
        oracle: references that define a normalised score of 1.
        floor: references that define a normalised score of 0.
        pricing: model -> price (:func:`harness.cost.load_pricing`); a model is
            looked up by its full name, then without its provider prefix; cost columns
            stay empty for models without one (scripted agents cost nothing to price).
        level: confidence level of every interval.
        n_boot: item resamples for the rank intervals.
        seed: seed of those resamples.
    """

    headline: Mapping[str, str] = field(default_factory=dict)
    errored: ErroredPolicy | Mapping[str, ErroredPolicy] | None = None
    lower_is_better: Mapping[str, bool] = field(default_factory=dict)
    oracle: tuple[Reference, ...] = (Reference(pattern="oracle"),)
    floor: tuple[Reference, ...] = (Reference(pattern="random"), Reference(pattern="floor"))
    pricing: Mapping[str, Price] = field(default_factory=dict)
    level: float = 0.95
    n_boot: int = 1000
    seed: int = 0


@dataclass
class Leaderboard:
    """Everything the outputs render.

    Attributes:
        entries: one row per (benchmark, model, agent, setup), best first per benchmark.
        pairwise: one row per ordered pair of entries of a benchmark: ``a - b``.
        overall: one row per (model, agent) across benchmarks.
        benchmarks: one row per benchmark: score key, references used, counts.
        logs: one row per log file: task, model, status, samples read.
        options: the options used.
    """

    entries: pl.DataFrame
    pairwise: pl.DataFrame
    overall: pl.DataFrame
    benchmarks: pl.DataFrame
    logs: pl.DataFrame
    options: Options


# --------------------------------------------------------------------------- entries


def _decode(text: str | None) -> dict[str, Any]:
    value = json.loads(text) if text else {}
    return value if isinstance(value, dict) else {}


def _settings(row: Mapping[str, Any]) -> dict[str, str]:
    """One eval's settings as flat ``name -> JSON value`` (the candidates for the setup)."""
    flat: dict[str, str] = {}
    sources: tuple[tuple[str, str, set[str]], ...] = (
        ("task_args", "", _AGENT_KEYS), ("generate_config", "", set()),
        ("model_args", "model.", set()))
    for column, prefix, skip in sources:
        for key, value in _decode(row[column]).items():
            if key not in skip:
                flat[prefix + key] = json.dumps(value, sort_keys=True)
    factors = _decode(row["eval_metadata"]).get("factors")
    if isinstance(factors, dict):
        for key, value in factors.items():
            name = str(key)
            if name not in _MODEL_FACTORS and name not in flat:
                flat[name] = json.dumps(value, sort_keys=True)
    return flat


def _label(value: str) -> str:
    decoded = json.loads(value)
    return decoded if isinstance(decoded, str) else value


def _setup_labels(configs: pl.DataFrame) -> pl.DataFrame:
    """Per benchmark, label each distinct config by the settings that vary within it."""
    out = []
    for (_bench,), group in configs.group_by(["benchmark"], maintain_order=True):
        rows = group.to_dicts()
        flats = [_settings(r) for r in rows]
        keys = sorted({k for f in flats for k in f})
        varying = [k for k in keys if len({f.get(k) for f in flats}) > 1]
        for row, flat in zip(rows, flats, strict=True):
            parts = [f"{k}={_label(flat[k])}" for k in varying if k in flat]
            out.append({**{c: row[c] for c in configs.columns},
                        "setup": ", ".join(parts) or "default"})
    return pl.DataFrame(out, schema={**configs.schema, "setup": pl.String()})


_NO_MODEL = {"", "none", "none/none"}


def _short_agent(agent: str) -> str:
    """The part of a solver a reader recognises: ``pkg/agents.py@oracle`` -> ``oracle``,
    ``start_game -> use_tools -> causalgame_agent`` -> ``causalgame_agent``."""
    last = agent.rsplit("@", 1)[-1] if "@" in agent else agent.split("->")[-1].strip()
    return last.rsplit("/", 1)[-1].removesuffix(".py") or agent


def readable_name(model: str | None, agent: str | None) -> str:
    """An entry's name for people: the agent for a scripted solver run without a model
    (Inspect logs it as ``none/none``), the model and its agent otherwise."""
    model, agent = model or "", agent or ""
    short = _short_agent(agent) if agent and agent != "(none)" else ""
    if model in _NO_MODEL:
        return f"{short or 'no model'} (agent)"
    provider, _, name = model.partition("/")
    if provider == "scripted":
        return f"{name} (scripted)"
    return f"{name or model} · {short}" if short else (name or model)


def _spec(task: str | None) -> BenchmarkTask | None:
    return spec_for_task(task) if task else None


def _headline_keys(frame: pl.DataFrame, headline: Mapping[str, str]) -> dict[str, str]:
    """benchmark -> score key: the requested one, else eval.yaml's headline when the logs
    hold it, else the first key with any value."""
    from harness.tool_validity import is_auxiliary

    chosen: dict[str, str] = {}
    present = set(frame.select("task", "score_key").unique().iter_rows())
    for task in frame.get_column("task").unique(maintain_order=True).to_list():
        found = _spec(task)
        # the headline, or its scorer's bare name (a log whose every sample errored)
        known = found is not None and ((task, found.headline) in present or
                                       (task, found.headline.split("/", 1)[0]) in present)
        if task not in headline and found is not None and known:
            chosen[task] = found.headline
    scored = frame.filter(pl.col("score_key").is_not_null())
    own = scored.filter(~pl.col("score_key").map_elements(is_auxiliary, return_dtype=pl.Boolean))
    scored = own if own.height else scored
    firsts = (scored.group_by("task", "score_key", maintain_order=True)
              .agg(pl.col("score_value").is_not_null().any().alias("any")))
    for row in firsts.iter_rows(named=True):
        task, key = row["task"], row["score_key"]
        if task in headline:
            chosen[task] = headline[task]
        elif task not in chosen and row["any"]:
            chosen[task] = key
    for row in firsts.iter_rows(named=True):  # benchmarks where nothing was scored
        chosen.setdefault(row["task"], row["score_key"])
    return chosen


_CONFIG = ["task", "model", "solver", "task_args", "model_args", "generate_config",
           "eval_metadata"]
_VALIDITY = "tool_call_validity"
"""Scorer of :mod:`harness.tool_validity`: its counts become columns of each entry."""


def _validity(frame: pl.DataFrame) -> pl.DataFrame:
    """Per (log, sample, epoch): tool calls made and well-formed (null where not scored)."""
    keys = {f"{_VALIDITY}/calls": "tc_calls", f"{_VALIDITY}/valid": "tc_valid"}
    rows = frame.filter(pl.col("score_key").is_in(list(keys)))
    columns = {"log_file": pl.String(), "sample_id": pl.String(), "epoch": pl.Int64(),
               "tc_calls": pl.Float64(), "tc_valid": pl.Float64()}
    if rows.height == 0:
        return pl.DataFrame(schema=columns)
    wide = (rows.with_columns(pl.col("score_key").replace_strict(keys).alias("key"))
            .pivot(on="key", index=["log_file", "sample_id", "epoch"], values="score_value",
                   aggregate_function="first"))
    for name in ("tc_calls", "tc_valid"):
        if name not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Float64()).alias(name))
    return wide.select(list(columns)).cast(columns)  # type: ignore[arg-type]


def entry_frame(frame: pl.DataFrame, options: Options | None = None) -> pl.DataFrame:
    """The headline score's rows with ``benchmark``, ``agent``, ``setup`` and ``entry``.

    One row per sample x epoch of each entry; ``score`` is the headline value counted
    under the benchmark's errored-sample policy (``zero``: an errored or unscored sample
    scores 0; ``drop``: its score is null and ``counted`` false), ``completed`` says whether
    the sample has a value and no error, ``errored`` whether it has an error, and
    ``errored_policy`` which policy applied.
    """
    options = options or Options()
    keys = _headline_keys(frame, options.headline)
    chosen = pl.DataFrame({"task": list(keys), "score_key": list(keys.values())},
                          schema={"task": pl.String(), "score_key": pl.String()})
    frame = with_unreported_keys(frame, {t: [k] for t, k in keys.items()})
    rows = frame.join(chosen, on=["task", "score_key"], how="inner")
    # a policy the board applied itself replaces one an upstream caller applied
    rows = rows.drop([c for c in ("errored", "counted", "errored_policy") if c in rows.columns])
    completed = pl.col("score_value").is_not_null() & pl.col("error").is_null()
    rows = rows.with_columns(completed.alias("completed"))
    rows = apply_errored_policy(rows, options.errored, keep_dropped=True)
    rows = rows.join(_validity(frame), on=["log_file", "sample_id", "epoch"], how="left")
    configs = (rows.select(_CONFIG).unique(maintain_order=True)
               .with_columns(pl.col("task").alias("benchmark")))
    labelled = _setup_labels(configs)
    rows = rows.join(labelled.drop("benchmark"), on=_CONFIG, how="left", nulls_equal=True)
    return rows.with_columns(
        pl.col("task").alias("benchmark"),
        pl.col("solver").fill_null("(none)").alias("agent"),
        pl.col("score_value").alias("score"),
    ).with_columns(
        pl.concat_str([pl.col("model"), pl.col("agent"), pl.col("setup")],
                      separator=" | ").alias("entry"),
    )


# --------------------------------------------------------------------------- per benchmark


def _matches(ref: Reference, bench: str, model: str, agent: str) -> bool:
    if ref.benchmark is not None and ref.benchmark != bench:
        return False
    if ref.pattern is None:
        return False
    needle = ref.pattern.lower()
    return needle in model.lower() or needle in agent.lower()


def _reference_score(refs: Sequence[Reference], bench: str, table: pl.DataFrame,
                     setup: str) -> tuple[float | None, str | None]:
    """(score, what it came from) of the first reference that applies to ``bench``."""
    for ref in refs:
        if ref.benchmark not in (None, bench):
            continue
        if ref.value is not None:
            return ref.value, f"fixed {ref.value:g}"
        hits = [r for r in table.iter_rows(named=True)
                if _matches(ref, bench, r["model"], r["agent"])]
        hits = [r for r in hits if r["score"] is not None]
        if hits:
            same = [r for r in hits if r["setup"] == setup]
            use = same or hits
            score = sum(r["score"] for r in use) / len(use)
            return score, ", ".join(sorted({r["entry"] for r in use}))
    return None, None


def _per_cost(score: float | None, cost: float | None, lower: bool) -> float | None:
    """``score / cost``: None without a positive cost or a score, and for a
    lower-is-better score (a ratio of a time or an error to money ranks nothing)."""
    if score is None or cost is None or cost <= 0 or lower or math.isnan(score):
        return None
    return score / cost


def _point_cost(score: float | None, cost: float | None, lower: bool) -> float | None:
    """``cost / score``: what one point of the score cost per sample (None at score 0)."""
    if score is None or cost is None or lower or math.isnan(score) or score <= 0:
        return None
    return cost / score


def _bounded(values: NDArray[np.float64]) -> bool:
    return bool(len(values)) and float(values.min()) >= 0.0 and float(values.max()) <= 1.0


def _inspect_versions(rows: pl.DataFrame) -> list[str]:
    """The Inspect AI versions recorded in the logs behind one entry (empty when unknown)."""
    if "packages" not in rows.columns:
        return []
    versions = set()
    for text in rows["packages"].drop_nulls().unique().to_list():
        version = json.loads(text).get("inspect_ai")
        if version:
            versions.add(str(version))
    return sorted(versions)


def _trials(kept: pl.DataFrame) -> list[list[float]]:
    """Each item's counted trial values (its epochs, in order) of one entry."""
    if not kept.height:
        return []
    grouped = (kept.sort("sample_id", "epoch").group_by("sample_id", maintain_order=True)
               .agg(pl.col("score").drop_nulls()))
    return [[float(v) for v in values] for values in grouped["score"].to_list()]


def _consistency(kept: pl.DataFrame, level: float, binary: bool) -> dict[str, Any]:
    """The entry's consistency across trials, next to its mean (issue 51 item 3): the flip
    rate with its interval, pass@k and pass^k (:func:`harness.consistency.entry_consistency`,
    Inspect's reducers), over the trials the mean counted."""
    found = entry_consistency(_trials(kept), binary=binary, level=level)
    return {"trials": found["trials"], "trials_max": found["trials_max"],
            "flip_rate": found["flip_rate"], "flip_lo": found["flip_lo"],
            "flip_hi": found["flip_hi"], "flip_items": found["flip_items"],
            "flip_pairs": found["flip_pairs"], "pass_at_k": found["pass_at_k"],
            "pass_hat_k": found["pass_hat_k"], "consistency_basis": found["basis"]}


def _entry_stats(rows: pl.DataFrame, options: Options, bounded: bool,
                 binary: bool = False, zero_one: bool = False) -> list[dict[str, Any]]:
    """One dict per entry of one benchmark (score, CI, counts, tokens, cost, time, and
    consistency across trials where the score is 0/1: ``zero_one``)."""
    out = []
    for (entry,), group in rows.group_by(["entry"], maintain_order=True):
        kept = group.filter(pl.col("counted"))
        score = se = lo = hi = None
        if kept.height:
            est = score_mean_ci(kept["score"].to_numpy(), cluster=kept["sample_id"],
                                level=options.level, bounds=(0.0, 1.0) if bounded else None,
                                binary=binary, wilson_when_constant=True)
            score, se, lo, hi = est.estimate, est.se, est.lo, est.hi
        first = group.row(0, named=True)
        price = price_for(options.pricing, first["model"])
        tokens_in = int(group["input_tokens"].sum())
        tokens_out = int(group["output_tokens"].sum())
        # per sample, so a provider's token convention is read row by row (harness.cost)
        cost = (None if price is None
                else float(with_dollars(group, options.pricing)["dollars"].sum()))
        n = group.height
        calls = group["tc_calls"].drop_nulls() if "tc_calls" in group.columns else None
        made = float(calls.sum()) if calls is not None and len(calls) else None
        valid = float(group["tc_valid"].drop_nulls().sum()) if made is not None else None
        out.append({
            "benchmark": first["benchmark"], "entry": entry, "model": first["model"],
            "agent": first["agent"], "setup": first["setup"],
            "name": readable_name(first["model"], first["agent"]),
            "score_key": first["score_key"], "score": score, "se": se,
            "ci_lo": lo, "ci_hi": hi, "n": n,
            "n_items": int(group["sample_id"].n_unique()),
            "n_completed": int(group["completed"].sum()),
            "errors": int(group["errored"].sum()),
            # N/A: no value and no error (CausalGame's unsubmitted runs, protocol=published),
            # left out under the benchmark's drop policy; counted here, not in errors
            "n_na": int((~group["errored"] & ~group["counted"]).sum()),
            "input_tokens": tokens_in, "output_tokens": tokens_out,
            "tokens_per_sample": float(group["total_tokens"].sum()) / n,
            "cost": cost, "cost_per_sample": None if cost is None else cost / n,
            "time_per_sample": float(group["total_time"].fill_null(0.0).mean()),  # type: ignore[arg-type]
            "working_time_per_sample": float(group["working_time"].fill_null(0.0).mean()),  # type: ignore[arg-type]
            "tool_calls_per_sample": None if made is None else made / n,
            "tool_call_valid_rate": None if not made or valid is None else valid / made,
            "logs": sorted(set(group["log_file"].to_list())),
            "inspect_version": ", ".join(_inspect_versions(group)) or None,
            **_consistency(kept, options.level, zero_one),
        })
    return out


def _item_matrix(rows: pl.DataFrame, entries: list[str]) -> NDArray[np.float64]:
    """(items x entries) per-item mean score (epochs averaged); NaN where not run."""
    # items in a fixed order: the bootstrap resamples rows by index, so the same logs must
    # give the same matrix (group_by alone returns groups in any order)
    wide = (rows.group_by("sample_id", "entry").agg(pl.col("score").mean())
            .pivot(on="entry", index="sample_id", values="score").sort("sample_id"))
    return np.column_stack([
        wide[e].cast(pl.Float64).fill_null(np.nan).to_numpy() for e in entries
    ]) if wide.height else np.empty((0, len(entries)))


def _pairwise(bench: str, entries: list[str], matrix: NDArray[np.float64],
              level: float) -> list[dict[str, Any]]:
    """Paired difference ``a - b`` over the items both entries ran, for every ordered pair."""
    present = ~np.isnan(matrix)
    out = []
    for i, a in enumerate(entries):
        for j, b in enumerate(entries):
            if i == j:
                continue
            mask = present[:, i] & present[:, j]
            n_pairs = int(mask.sum())
            row: dict[str, Any] = {"benchmark": bench, "a": a, "b": b, "n_pairs": n_pairs,
                                   "diff": None, "se": None, "ci_lo": None, "ci_hi": None}
            if n_pairs:
                est = paired_difference_ci(matrix[mask, i], matrix[mask, j], level=level)
                row.update(diff=est.estimate, se=est.se,
                           ci_lo=None if math.isnan(est.lo) else est.lo,
                           ci_hi=None if math.isnan(est.hi) else est.hi)
            out.append(row)
    return out


def _nan_to_none(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def _ranks(matrix: NDArray[np.float64], options: Options, higher_is_better: bool
           ) -> tuple[list[int], list[int], list[int]]:
    """(rank, lo, hi) per entry; entries with no counted item rank after all the others."""
    present = ~np.isnan(matrix)
    has = present.any(axis=0) if matrix.shape[0] else np.zeros(matrix.shape[1], dtype=bool)
    k = int(has.sum())
    rank = [k + 1] * matrix.shape[1]
    lo, hi = list(rank), list(rank)
    if k:
        # the same memory layout as the full matrix: numpy sums a column in another order
        # (and rounds ties apart differently) when indexing hands it a Fortran-order copy
        kept = matrix if has.all() else np.ascontiguousarray(matrix[:, has])
        ranked = bootstrap_rank_interval(kept, n_boot=options.n_boot,
                                         level=options.level, seed=options.seed,
                                         higher_is_better=higher_is_better)
        for j, col in enumerate(np.flatnonzero(has)):
            rank[col], lo[col], hi[col] = (int(ranked.rank[j]), int(ranked.lo[j]),
                                           int(ranked.hi[j]))
    return rank, lo, hi


def _honest_columns(table: pl.DataFrame, matrix: NDArray[np.float64], columns: list[str],
                    bounded: bool, options: Options) -> pl.DataFrame:
    """What a board can separate (issue 51): per entry (in rank order) its tie group
    from the rank intervals, and the paired difference to the next entry down with the
    minimum detectable difference at the items both ran (alpha = 1 - level, power 0.8).
    The last entry has no neighbour below; entries without a score have no MDE."""
    col = {name: j for j, name in enumerate(columns)}
    order = table["entry"].to_list()
    scored = table["score"].is_not_null().to_list()
    groups = rank_tie_groups(table["rank_lo"].to_numpy(), table["rank_hi"].to_numpy())
    diff: list[float | None] = []
    mdd: list[float | None] = []
    pairs: list[int | None] = []
    basis: list[str | None] = []
    for i, name in enumerate(order):
        if i + 1 == len(order) or not (scored[i] and scored[i + 1]):
            for column in (diff, mdd, pairs, basis):
                column.append(None)
            continue
        a, b = matrix[:, col[name]], matrix[:, col[order[i + 1]]]
        both = ~np.isnan(a) & ~np.isnan(b)
        found, _, why = adjacent_mdd(a[both], b[both], bounded=bounded,
                                     alpha=1.0 - options.level)
        diff.append(float(np.mean(a[both] - b[both])) if both.any() else None)
        mdd.append(found)
        pairs.append(int(both.sum()))
        basis.append(why)
    return table.with_columns(
        pl.Series("tie_group", groups, dtype=pl.Int64()),
        pl.Series("diff_next", diff, dtype=pl.Float64()),
        pl.Series("mdd_next", mdd, dtype=pl.Float64()),
        pl.Series("n_pairs_next", pairs, dtype=pl.Int64()),
        pl.Series("mdd_basis", basis, dtype=pl.String()),
    )


def _references(refs: tuple[Reference, ...], bench: str,
                agents: Sequence[str]) -> tuple[Reference, ...]:
    """The options' references, then the benchmark's eval.yaml agents (tried in that order)."""
    return (*refs, *(Reference(pattern=a, benchmark=bench) for a in agents))


def _direction(bench: str, key: str, options: Options, found: BenchmarkTask | None) -> bool:
    """Whether lower is better for ``key``: the options, else eval.yaml, else no."""
    if bench in options.lower_is_better:
        return bool(options.lower_is_better[bench])
    return found.lower_is_better(key) if found is not None else False


def _benchmark(bench: str, rows: pl.DataFrame, options: Options
               ) -> tuple[pl.DataFrame, list[dict[str, Any]], dict[str, Any]]:
    found = _spec(bench)
    score_key = str(rows["score_key"][0])
    lower = _direction(bench, score_key, options, found)
    floors = _references(options.floor, bench, found.spec.floor_agents if found else [])
    oracles = _references(options.oracle, bench, found.spec.ceiling_agents if found else [])
    counted = rows.filter(pl.col("counted"))["score"].to_numpy()
    bounded = _bounded(counted)
    binary = bool(len(counted)) and is_proportion_score(counted)
    stats = [pl.col(c).cast(pl.Float64) for c in ("score", "se", "ci_lo", "ci_hi", "flip_rate",
                                                   "flip_lo", "flip_hi", "pass_at_k",
                                                   "pass_hat_k")]
    table = pl.DataFrame(_entry_stats(rows, options, bounded, binary,
                                      zero_one=is_binary(counted))).with_columns(stats)
    entries = table["entry"].to_list()
    matrix = _item_matrix(rows, entries)
    rank, rank_lo, rank_hi = _ranks(matrix, options, higher_is_better=not lower)
    table = table.with_columns(
        pl.Series("rank", rank, dtype=pl.Int64()), pl.Series("rank_lo", rank_lo, dtype=pl.Int64()),
        pl.Series("rank_hi", rank_hi, dtype=pl.Int64()),
    )
    norm: dict[str, list[float | None]] = {"normalised": [], "norm_lo": [], "norm_hi": []}
    roles: list[str | None] = []
    refs: dict[str, Any] = {"floor": None, "oracle": None, "floor_from": None,
                            "oracle_from": None}
    for row in table.iter_rows(named=True):
        floor, floor_from = _reference_score(floors, bench, table, row["setup"])
        top, top_from = _reference_score(oracles, bench, table, row["setup"])
        if refs["floor"] is None and floor is not None:
            refs.update(floor=floor, floor_from=floor_from)
        if refs["oracle"] is None and top is not None:
            refs.update(oracle=top, oracle_from=top_from)
        scale = None if floor is None or top is None or top == floor else top - floor
        for key, col in (("normalised", "score"), ("norm_lo", "ci_lo"), ("norm_hi", "ci_hi")):
            value = _nan_to_none(row[col])
            norm[key].append(None if scale is None or value is None or floor is None
                             else (value - floor) / scale)
        role = ("oracle" if any(_matches(r, bench, row["model"], row["agent"])
                                for r in oracles)
                else "floor" if any(_matches(r, bench, row["model"], row["agent"])
                                    for r in floors) else None)
        roles.append(role)
    table = table.with_columns(
        *[pl.Series(k, v, dtype=pl.Float64()) for k, v in norm.items()],
        pl.Series("reference", roles, dtype=pl.String()),
        pl.col("ci_lo").fill_nan(None), pl.col("ci_hi").fill_nan(None),
        pl.col("se").fill_nan(None),
    ).sort(["rank", "entry"])
    table = _honest_columns(table, matrix, entries, bounded or binary, options)
    table = table.with_columns(
        pl.Series("score_per_dollar", [_per_cost(s, c, lower) for s, c in zip(
            table["score"], table["cost_per_sample"], strict=True)], dtype=pl.Float64()),
        pl.Series("cost_per_point", [_point_cost(s, c, lower) for s, c in zip(
            table["score"], table["cost_per_sample"], strict=True)], dtype=pl.Float64()),
        pl.Series("tokens_per_point", [_point_cost(s, t or None, lower) for s, t in zip(
            table["score"], table["tokens_per_sample"], strict=True)], dtype=pl.Float64()),
    )
    policy = ", ".join(sorted(set(rows["errored_policy"].drop_nulls().to_list()))) or None
    metric = found.metric(score_key) if found is not None else None
    info = {"benchmark": bench, "score_key": score_key, "bounded": bounded,
            "lower_is_better": lower, "summary": metric.summary if metric else None,
            "errored_policy": policy, "n_errored": int(rows["errored"].sum()),
            "n_na": int((~rows["errored"] & ~rows["counted"]).sum()),
            "n_dropped": int((~rows["counted"]).sum()),
            "n_entries": table.height, "n_items": matrix.shape[0], **refs}
    return table, _pairwise(bench, entries, matrix, options.level), info


# --------------------------------------------------------------------------- overall


def _overall(entries: pl.DataFrame, lower: Mapping[str, bool] | None = None) -> pl.DataFrame:
    """Per (model, agent): mean over benchmarks of the normalised score and the win rate.

    Within a benchmark a (model, agent) first averages its setups; its win rate is the
    share of the benchmark's other (model, agent)s it beats on that average (ties 1/2;
    "beats" follows the benchmark's direction, and a unit without a score beats nobody).
    """
    lower = lower or {}
    if entries.height == 0:
        return pl.DataFrame()
    units = (entries.group_by("benchmark", "model", "agent", maintain_order=True)
             .agg(pl.col("score").mean(), pl.col("normalised").mean(),
                  pl.col("reference").drop_nulls().first()))
    wins = []
    for (bench,), group in units.group_by(["benchmark"], maintain_order=True):
        raw = group["score"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        # oriented so that higher is better; no score is worst (and ties other such units)
        scores = np.nan_to_num(-raw if lower.get(str(bench)) else raw, nan=-np.inf)
        k = len(scores)
        beats = (scores[:, None] > scores[None, :]).sum(axis=1)
        ties = (scores[:, None] == scores[None, :]).sum(axis=1) - 1
        rate = (beats + 0.5 * ties) / (k - 1) if k > 1 else np.full(k, np.nan)
        wins.append(group.with_columns(pl.Series("win_rate", rate).fill_nan(None)))
    per = pl.concat(wins)
    return (per.group_by("model", "agent", maintain_order=True)
            .agg(pl.col("benchmark").n_unique().alias("n_benchmarks"),
                 pl.col("normalised").mean().alias("mean_normalised"),
                 pl.col("normalised").is_not_null().sum().alias("n_normalised"),
                 pl.col("win_rate").mean().alias("mean_win_rate"),
                 pl.col("score").mean().alias("mean_score"),
                 pl.col("reference").drop_nulls().first())
            .with_columns(pl.struct("model", "agent").map_elements(
                lambda r: readable_name(r["model"], r["agent"]),
                return_dtype=pl.String()).alias("name"))
            .sort(["mean_win_rate", "mean_normalised", "model"],
                  descending=[True, True, False], nulls_last=True))


# --------------------------------------------------------------------------- public


def _logs(frame: pl.DataFrame) -> pl.DataFrame:
    return (frame.group_by("log_file", maintain_order=True)
            .agg(pl.col("task").first(), pl.col("model").first(),
                 pl.col("solver").first(), pl.col("status").first(),
                 pl.col("created").first(),
                 pl.struct("sample_id", "epoch").n_unique().alias("samples")))


def compute(frame: pl.DataFrame, options: Options | None = None,
            empty_logs: Sequence[Mapping[str, Any]] = ()) -> Leaderboard:
    """Every table of the leaderboard from a results frame (see :class:`Leaderboard`).

    Args:
        frame: rows from :func:`harness.results.read_results`.
        options: what to compute.
        empty_logs: logs that held no sample (failed or never started), so they can be
            listed with the rest; rows with ``log_file``, ``task``, ``model``, ``status``.
    """
    options = options or Options()
    rows = entry_frame(frame, options)
    tables, pairs, infos = [], [], []
    for (bench,), group in rows.group_by(["benchmark"], maintain_order=True):
        table, pair, info = _benchmark(str(bench), group, options)
        tables.append(table)
        pairs.extend(pair)
        infos.append(info)
    entries = pl.concat(tables, how="diagonal_relaxed") if tables else pl.DataFrame()
    if entries.height:
        entries = entries.sort(["benchmark", "rank", "entry"])
    lower = {str(i["benchmark"]): bool(i["lower_is_better"]) for i in infos}
    pair_schema = {"benchmark": pl.String(), "a": pl.String(), "b": pl.String(),
                   "n_pairs": pl.Int64(), "diff": pl.Float64(), "se": pl.Float64(),
                   "ci_lo": pl.Float64(), "ci_hi": pl.Float64()}
    logs = _logs(frame)
    if empty_logs:
        extra = pl.DataFrame([{**{c: r.get(c) for c in logs.columns if c != "samples"},
                               "samples": 0} for r in empty_logs],
                             schema=logs.schema)
        logs = pl.concat([logs, extra])
    return Leaderboard(
        entries=entries,
        pairwise=pl.DataFrame(pairs, schema=pair_schema),
        overall=_overall(entries, lower),
        benchmarks=pl.DataFrame(infos),
        logs=logs.sort("log_file"),
        options=options,
    )


def slug(text: str) -> str:
    """A file-name-safe form of a benchmark or entry name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"
