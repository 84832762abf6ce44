"""Factorial study reports: one analysis, written as JSON, Markdown and self-contained HTML.

``harness study report LOGDIR --out DIR`` calls :func:`build_report`, which

1. reads the study's logs through :mod:`harness.results` (reports never parse logs) and
   turns the ``factors`` recorded in each eval's metadata into one column per factor
   (:func:`study_frame`);
2. tabulates the design (cells, items, epochs, errors) and the per-cell means with
   item-clustered CIs (:mod:`harness.stats`);
3. runs :func:`harness.factorial.analysis.analyze` (ANOVA, effect sizes, variance shares,
   marginal means, pairwise, robustness, attribution, power);
4. writes ``report.json`` (the schema is documented in ``REPORT_SCHEMA.md`` next to this
   file and versioned by ``schema_version``), ``report.md`` and ``report.html``.

Why all three from one dict: the JSON is the contract other tools read; the Markdown and
the HTML are views of exactly that dict (via the same table list), so the three can never
disagree. The HTML embeds its plots as base64 PNGs and uses no scripts, fonts or URLs.
"""

from __future__ import annotations

import datetime as _dt
import functools
import importlib.metadata
import json
import math
import platform
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from harness.factorial import plots
from harness.results import read_results, with_metadata_columns

__all__ = [
    "SCHEMA_VERSION",
    "Table",
    "analyze_command",
    "build_report",
    "render_html",
    "render_markdown",
    "report_data",
    "report_plots",
    "report_tables",
    "study_factors",
    "study_frame",
]

SCHEMA_VERSION = "1.0"
"""Version of ``report.json``'s layout; bumped (major) when a field changes meaning."""

DEFAULT_RESPONSE = "score_value"
DEFAULT_ITEM = "sample_id"
DEFAULT_ORDER = 2
TEMPLATE = Path(__file__).parent / "templates" / "report.html.j2"

#: Results columns a factor may not replace (they carry the response and its structure).
_PROTECTED = frozenset({"sample_id", "epoch", "score_key", "score_value", "error",
                        "eval_metadata", "log_file", "status"})
#: Prefix for an original results column that a same-named factor displaces.
LOG_PREFIX = "log_"
_VERSIONED = ("inspect_ai", "evalsuite", "polars", "statsmodels", "numpy", "matplotlib")

Source = str | Path | Sequence[str | Path] | pl.DataFrame


# --------------------------------------------------------------------------- the frame


def _decoded_metadata(frame: pl.DataFrame) -> list[dict[str, Any]]:
    values = frame.get_column("eval_metadata").drop_nulls().unique(maintain_order=True)
    decoded = [json.loads(v) for v in values.to_list()]
    return [d for d in decoded if isinstance(d, dict)]


def study_factors(frame: pl.DataFrame) -> list[str]:
    """Factor names recorded in the frame's eval metadata (``factors`` keys), first-seen order.

    Works on a raw results frame or on a :func:`study_frame`, so callers (the CLI, the
    report) never have to guess which columns are factors.
    """
    names: dict[str, None] = {}
    for meta in _decoded_metadata(frame):
        factors = meta.get("factors")
        if isinstance(factors, dict):
            names.update(dict.fromkeys(str(k) for k in factors))
    return list(names)


def _level_key(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def _levels(frame: pl.DataFrame, factor: str) -> list[str]:
    """A factor's levels in display order: numerically when all are numbers, else by name."""
    values = frame.get_column(factor).drop_nulls().unique().to_list()
    return sorted((str(v) for v in values), key=_level_key)


def study_frame(source: Source, *, study: str | None = None) -> pl.DataFrame:
    """The results frame of a study with one String column per factor (named as the factor).

    Adds ``study``, ``cell_id`` and ``replicate_seed`` from the eval metadata too. Rows of
    logs that carry no ``factors`` metadata keep null factor levels (callers filter them).
    A factor named like a results column (e.g. ``model``) takes that name; the original
    column is kept as ``log_<name>`` (e.g. ``log_model`` holds the Inspect model name).

    Args:
        source: A log file, a log directory, a sequence of them, or a results frame.
        study: Keep only rows whose eval metadata names this study.

    Raises:
        ValueError: A factor is named like a column the analysis depends on
            (``sample_id``, ``score_value``, ...).
    """
    frame = source if isinstance(source, pl.DataFrame) else read_results(source)
    factors = study_factors(frame)
    bad = sorted(_PROTECTED.intersection(factors))
    if bad:
        raise ValueError(f"factor names collide with results columns: {bad}; rename them")
    meta = with_metadata_columns(frame, ["study", "cell_id", "replicate_seed", "factors"],
                                 prefix="__meta_")
    levels = with_metadata_columns(meta, factors, source="__meta_factors", prefix="__level_")
    displaced = {f: LOG_PREFIX + f for f in [*factors, "study", "cell_id", "replicate_seed"]
                 if f in frame.columns}
    out = levels.rename(displaced).with_columns(
        pl.col("__meta_study").cast(pl.String).alias("study"),
        pl.col("__meta_cell_id").cast(pl.String).alias("cell_id"),
        pl.col("__meta_replicate_seed").alias("replicate_seed"),
        *[pl.col(f"__level_{f}").cast(pl.String).alias(f) for f in factors],
    )
    out = out.drop([c for c in out.columns if c.startswith("__")])
    if study is not None:
        out = out.filter(pl.col("study") == study)
    return out


# --------------------------------------------------------------------------- estimates


def _clean(value: Any) -> Any:
    """JSON-safe: numpy scalars -> Python, NaN/inf -> None, tuples -> lists, dataclasses."""
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return _clean(value.to_dict())
    if hasattr(value, "__dataclass_fields__"):
        return _clean({k: getattr(value, k) for k in value.__dataclass_fields__})
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, str):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, Path):
        return str(value)
    return str(value)


def _estimate(values: Sequence[float], clusters: Sequence[str]) -> dict[str, Any]:
    """Mean and item-clustered CI of one group's scores (via :func:`harness.stats.mean_ci`)."""
    from harness.stats import mean_ci

    if not values:
        return {"mean": None, "se": None, "ci_lower": None, "ci_upper": None}
    est = mean_ci(list(values), cluster=list(clusters))
    return {
        "mean": _clean(float(est.estimate)),
        "se": _clean(float(est.se)),
        "ci_lower": _clean(float(est.lo)),
        "ci_upper": _clean(float(est.hi)),
    }


@dataclass(frozen=True)
class _Spec:
    """What one report analyses (resolved from the arguments and the data)."""

    response: str
    score_key: str | None
    factors: list[str]
    item: str
    order: int
    family: str = "gaussian"
    item_mode: str | None = None
    anova_type: int = 2


def _group_estimates(
    scored: pl.DataFrame, keys: list[str], spec: _Spec
) -> list[tuple[dict[str, str], dict[str, Any]]]:
    """(levels, estimate) per combination of ``keys``, clustered by item."""
    grouped = (
        scored.filter(pl.col(spec.response).is_not_null())
        .group_by(keys)
        .agg(pl.col(spec.response).cast(pl.Float64), pl.col(spec.item).cast(pl.String))
    )
    out = []
    for row in grouped.iter_rows(named=True):
        levels = {k: row[k] for k in keys}
        out.append((levels, _estimate(row[spec.response], row[spec.item])))
    return out


# --------------------------------------------------------------------------- sections


def _design(scored: pl.DataFrame, spec: _Spec, order: dict[str, list[str]]) -> dict[str, Any]:
    """Factors with levels, and one row per design cell (distinct factor levels)."""
    null = pl.col(spec.response).is_null()
    cells = scored.group_by(spec.factors).agg(
        pl.col("cell_id").drop_nulls().unique().sort().alias("cell_ids"),
        pl.col("log_file").n_unique().alias("n_logs"),
        pl.col(spec.item).n_unique().alias("n_items"),
        pl.col("epoch").n_unique().alias("n_epochs"),
        pl.len().alias("n_samples"),
        (~null).sum().alias("n_scored"),
        pl.col("error").is_not_null().sum().alias("errors"),
        (null & pl.col("error").is_null()).sum().alias("unscored"),
        pl.col("status").drop_nulls().unique().sort().alias("status"),
    )
    rows = []
    for row in cells.iter_rows(named=True):
        rows.append({
            "cell": _cell_label(row, spec.factors),
            "levels": {f: row[f] for f in spec.factors},
            "cell_ids": row["cell_ids"],
            "n_logs": row["n_logs"],
            "n_items": row["n_items"],
            "n_epochs": row["n_epochs"],
            "n_samples": row["n_samples"],
            "n_scored": row["n_scored"],
            "errors": row["errors"],
            "unscored": row["unscored"],
            "status": row["status"],
        })
    rows.sort(key=lambda r: [order[f].index(r["levels"][f]) for f in spec.factors])
    return {
        "factors": [{"name": f, "levels": order[f]} for f in spec.factors],
        "n_cells": len(rows),
        "n_possible_cells": math.prod(len(order[f]) for f in spec.factors),
        "cells": rows,
    }


def _cell_label(levels: Mapping[str, Any], factors: list[str]) -> str:
    return ", ".join(f"{f}={levels[f]}" for f in factors)


def _cell_results(scored: pl.DataFrame, design: dict[str, Any], spec: _Spec) -> list[dict]:
    """Mean with an item-clustered CI per design cell, in design-table order."""
    estimates = {
        tuple(levels[f] for f in spec.factors): est
        for levels, est in _group_estimates(scored, spec.factors, spec)
    }
    empty = {"mean": None, "se": None, "ci_lower": None, "ci_upper": None}
    results = []
    for cell in design["cells"]:
        key = tuple(cell["levels"][f] for f in spec.factors)
        results.append({
            "cell": cell["cell"],
            "levels": cell["levels"],
            **estimates.get(key, empty),
            "n": cell["n_scored"],
            "n_items": cell["n_items"],
            "errors": cell["errors"],
        })
    return results


def _effects(scored: pl.DataFrame, spec: _Spec, order: dict[str, list[str]]) -> dict[str, Any]:
    """Raw level means per factor (main effects) and per factor pair (interactions)."""
    main: dict[str, list[dict[str, Any]]] = {}
    for factor in spec.factors:
        found = {lv[factor]: est for lv, est in _group_estimates(scored, [factor], spec)}
        main[factor] = [{"level": lv, **found[lv]} for lv in order[factor] if lv in found]
    pairs: list[dict[str, Any]] = []
    if spec.order >= 2:
        for i, a in enumerate(spec.factors):
            for b in spec.factors[i + 1:]:
                found_ab = {(lv[a], lv[b]): est["mean"]
                            for lv, est in _group_estimates(scored, [a, b], spec)}
                pairs.append({
                    "factors": [a, b],
                    "x_levels": order[a],
                    "traces": {lb: [found_ab.get((la, lb)) for la in order[a]]
                               for lb in order[b]},
                })
    return {"main_effects": main, "interactions": pairs}


def _run_analysis(scored: pl.DataFrame, spec: _Spec) -> tuple[dict | None, str | None]:
    """The analysis dict, or the reason it could not be computed (the report still ships)."""
    from harness.factorial.analysis import analyze

    data = scored.filter(pl.col(spec.response).is_not_null())
    varying = [f for f in spec.factors if data.get_column(f).n_unique() > 1]
    if not varying:
        return None, "no factor varies in the scored data"
    try:
        result = analyze(data, response=spec.response, factors=varying, item=spec.item,
                         family=spec.family,  # type: ignore[arg-type]
                         order=spec.order, item_mode=spec.item_mode,  # type: ignore[arg-type]
                         anova_type=spec.anova_type)
    except Exception as exc:  # a failed fit must not lose the design and cell tables
        return None, f"{type(exc).__name__}: {exc}"
    return _clean(result.to_dict()), None


# --------------------------------------------------------------------------- attribution


def _anova_rows(analysis: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    rows = (analysis or {}).get("anova") or []
    return [r for r in rows if isinstance(r, Mapping) and "term" in r]


def _terms(term: str) -> set[str]:
    return set(str(term).split(":"))


def _headline_factor(factors: list[str]) -> str:
    return "model" if "model" in factors else factors[0]


def _attribution(
    analysis: Mapping[str, Any] | None, cells: list[dict[str, Any]], spec: _Spec
) -> dict[str, Any]:
    """A one-sentence attribution plus the numbers behind it.

    The headline factor is ``model`` when it is a factor (else the first factor); the
    headline pair is the analysis' attributed pair (its top two models) or, without one,
    the best and worst levels by raw means. The sentence gives the gap, how it behaves
    across every setup condition (combination of the other factors' levels), and how much
    of the explained variance is the factor's main effect vs its interactions.
    """
    factor = _headline_factor(spec.factors)
    setup = [f for f in spec.factors if f != factor]
    provided = (analysis or {}).get("attribution") or None

    ss = {str(r["term"]): r.get("sum_sq") for r in _anova_rows(analysis)}
    explained = {t: float(v) for t, v in ss.items()
                 if isinstance(v, int | float) and t not in ("Residual", "item")}
    total = sum(explained.values())
    main_share = explained.get(factor, 0.0) / total if total > 0 else None
    inter = sum(v for t, v in explained.items() if factor in _terms(t) and ":" in t)
    inter_share = inter / total if total > 0 else None

    by_level: dict[str, list[float]] = {}
    setups: dict[tuple[str, ...], dict[str, float]] = {}
    for cell in cells:
        if cell["mean"] is not None:
            level = cell["levels"][factor]
            by_level.setdefault(level, []).append(cell["mean"])
            key = tuple(cell["levels"][f] for f in setup)
            setups.setdefault(key, {})[level] = cell["mean"]
    averages = {lv: sum(v) / len(v) for lv, v in by_level.items()}
    pair = provided.get("models") if isinstance(provided, Mapping) else None
    if not (isinstance(pair, list) and len(pair) == 2 and all(p in averages for p in pair)):
        ranked = sorted(averages, key=lambda lv: -averages[lv])
        pair = [ranked[0], ranked[-1]] if len(ranked) >= 2 else None

    headline: dict[str, Any] | None = None
    parts: list[str] = []
    if pair is not None:
        first, second = (str(p) for p in pair)
        diffs = [m[first] - m[second] for m in setups.values() if first in m and second in m]
        gap = averages[first] - averages[second]
        same = sum(1 for d in diffs if (d > 0) == (gap > 0) and d != 0)
        headline = {
            "best": first, "worst": second, "difference": gap,
            "setup_conditions": len(diffs),
            "min_difference": min(diffs) if diffs else None,
            "max_difference": max(diffs) if diffs else None,
            "conditions_same_sign": same,
        }
        text = (f"The gap in {spec.score_key or spec.response} between {factor} {first} and "
                f"{second} is {gap:+.3f}")
        if diffs and setup:
            text += (f"; over the {len(diffs)} setup conditions ({' x '.join(setup)}) it "
                     f"ranges from {min(diffs):+.3f} to {max(diffs):+.3f} and keeps its sign "
                     f"in {same} of {len(diffs)}")
        parts.append(text)
    if main_share is not None and inter_share is not None:
        parts.append(
            f"{factor}'s main effect accounts for {100 * main_share:.1f}% of the explained "
            f"variance and its interactions with the setup factors for "
            f"{100 * inter_share:.1f}%"
        )
    statement = ". ".join(parts) + "." if parts else "No attribution: fewer than two levels."
    return {
        "factor": factor,
        "setup_factors": setup,
        "statement": statement,
        "main_effect_share": main_share,
        "interaction_share": inter_share,
        "headline": headline,
        "analysis_attribution": provided,
    }


# --------------------------------------------------------------------------- provenance


@functools.cache
def _suite_distribution() -> str:
    """The installed distribution that ships the ``harness`` package (the suite itself)."""
    names = importlib.metadata.packages_distributions().get("harness") or ["evalsuite"]
    return names[0]


def _version(dist: str) -> str | None:
    if dist == "evalsuite":
        dist = _suite_distribution()
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cli_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _eval_command(row: Mapping[str, Any], epochs: int) -> str:
    """An ``inspect eval`` command line equivalent to the recorded eval spec."""
    words = ["inspect", "eval", str(row["task"])]
    if row.get("model"):
        words += ["--model", str(row["model"])]
    for flag, column in (("-T", "task_args"), ("-M", "model_args")):
        for key, value in json.loads(row.get(column) or "{}").items():
            if value is not None:
                words += [flag, f"{key}={_cli_value(value)}"]
    for key, value in json.loads(row.get("generate_config") or "{}").items():
        words += [f"--{key.replace('_', '-')}", _cli_value(value)]
    if epochs > 1:
        words += ["--epochs", str(epochs)]
    return shlex.join(words)


def _provenance(scored: pl.DataFrame, command: str) -> dict[str, Any]:
    """Commands (recorded or reconstructed) and versions behind the logs and the report."""
    mode = "log_model" if "log_model" in scored.columns else "model"
    keys = ["task", "task_args", mode, "model_args", "generate_config", "eval_metadata"]
    evals = (
        scored.group_by(keys)
        .agg(pl.col("epoch").max().alias("epochs"),
             pl.col("cell_id").drop_nulls().unique().sort().alias("cell_ids"),
             pl.col("log_file").unique().sort().alias("log_files"),
             pl.col("task_version").drop_nulls().first().alias("task_version"))
        .rename({mode: "model"})
        .sort(["task", "model", "task_args", "model_args", "generate_config"])
    )
    commands = []
    for row in evals.iter_rows(named=True):
        meta = json.loads(row["eval_metadata"] or "{}")
        recorded = meta.get("command") if isinstance(meta.get("command"), str) else None
        line = recorded or _eval_command(row, int(row["epochs"] or 1))
        commands.append({
            "command": line,
            "recorded": recorded is not None,
            "task": row["task"],
            "task_version": row["task_version"],
            "task_args": json.loads(row["task_args"] or "{}"),
            "model": row["model"],
            "model_args": json.loads(row["model_args"] or "{}"),
            "generate_config": json.loads(row["generate_config"] or "{}"),
            "epochs": int(row["epochs"] or 1),
            "cell_ids": row["cell_ids"],
            "log_files": [Path(p).name for p in row["log_files"]],
        })
    created = scored.get_column("created").drop_nulls()
    log_packages: dict[str, list[str]] = {}
    if "packages" in scored.columns:  # recorded by harness.results when available
        for text in scored.get_column("packages").drop_nulls().unique().to_list():
            for name, ver in json.loads(text).items():
                log_packages.setdefault(name, [])
                if ver not in log_packages[name]:
                    log_packages[name].append(ver)
    return {
        "report_command": command,
        "eval_commands": commands,
        "versions": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            **{dist: _version(dist) for dist in _VERSIONED},
        },
        "logs": {
            "n_logs": scored.get_column("log_file").n_unique(),
            "first_created": created.min() if len(created) else None,
            "last_created": created.max() if len(created) else None,
            "packages": log_packages or None,
        },
    }


# --------------------------------------------------------------------------- assembly


def _resolve_score_key(frame: pl.DataFrame, score_key: str | None) -> str | None:
    keys = frame.get_column("score_key").drop_nulls().unique(maintain_order=True).to_list()
    if score_key is not None:
        if score_key not in keys:
            raise ValueError(f"score key {score_key!r} not in the logs; found {keys}")
        return score_key
    if len(keys) > 1:
        raise ValueError(f"the logs hold several score keys {keys}; pass score_key=")
    return keys[0] if keys else None


def _default_command(source: Source, out_dir: Path, spec: _Spec, title: str | None,
                     given: tuple[str | None, Sequence[str] | None]) -> str:
    """The ``harness study report`` line for these arguments (non-default options only)."""
    where = "<frame>" if isinstance(source, pl.DataFrame) else (
        str(source) if isinstance(source, str | Path) else " ".join(map(str, source)))
    words = ["harness", "study", "report", where, "--out", str(out_dir)]
    score_key, factors = given
    if spec.response != DEFAULT_RESPONSE:
        words += ["--response", spec.response]
    if score_key:
        words += ["--score-key", score_key]
    if factors is not None:
        words += ["--factors", ",".join(factors)]
    if spec.item != DEFAULT_ITEM:
        words += ["--item", spec.item]
    if spec.order != DEFAULT_ORDER:
        words += ["--order", str(spec.order)]
    if spec.family != "gaussian":
        words += ["--family", spec.family]
    if spec.item_mode:
        words += ["--item-mode", spec.item_mode]
    if spec.anova_type != 2:
        words += ["--anova-type", str(spec.anova_type)]
    if title:
        words += ["--title", title]
    return shlex.join(words)


def report_data(
    source: Source,
    *,
    response: str = DEFAULT_RESPONSE,
    score_key: str | None = None,
    factors: Sequence[str] | None = None,
    item: str = DEFAULT_ITEM,
    order: int = DEFAULT_ORDER,
    title: str | None = None,
    study: str | None = None,
    command: str | None = None,
    out_dir: Path | None = None,
    family: str = "gaussian",
    item_mode: str | None = None,
    anova_type: int = 2,
) -> dict[str, Any]:
    """The report as a JSON-ready dict (the content of ``report.json``), without writing.

    Arguments are those of :func:`build_report`; ``command`` overrides the recorded
    harness command line (the CLI passes its own argv).
    """
    if isinstance(source, pl.DataFrame) and "cell_id" in source.columns:
        frame = source if study is None else source.filter(pl.col("study") == study)
    else:
        frame = study_frame(source, study=study)
    names = list(factors) if factors is not None else study_factors(frame)
    if not names:
        raise ValueError("no factors: the logs carry no eval metadata 'factors' "
                         "and none were given")
    missing = [f for f in [*names, response, item] if f not in frame.columns]
    if missing:
        raise ValueError(f"columns not in the study frame: {missing}")
    key = _resolve_score_key(frame, score_key)
    spec = _Spec(response=response, score_key=key, factors=names, item=item, order=order,
                 family=family, item_mode=item_mode, anova_type=anova_type)
    in_study = pl.all_horizontal([pl.col(f).is_not_null() for f in names])
    scored = frame.filter(in_study & (pl.col("score_key") == key if key else pl.lit(True)))
    if scored.is_empty():
        raise ValueError("no scored rows with all factor levels recorded")
    level_order = {f: _levels(scored, f) for f in names}
    design = _design(scored, spec, level_order)
    cells = _cell_results(scored, design, spec)
    analysis, analysis_error = _run_analysis(scored, spec)
    studies = sorted(scored.get_column("study").drop_nulls().unique().to_list())
    out = Path(out_dir) if out_dir is not None else Path("report")
    line = command or _default_command(source, out, spec, title, (score_key, factors))
    return {
        "schema_version": SCHEMA_VERSION,
        "title": title or f"Factorial report: {', '.join(studies) or 'study'}",
        "generated_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "studies": studies,
        "response": {"column": response, "score_key": key, "item": item,
                     "factors": names, "order": order, "family": family,
                     "item_mode": item_mode, "anova_type": anova_type},
        "data": {
            "n_rows": scored.height,
            "n_scored": int(scored.get_column(response).is_not_null().sum()),
            "n_errors": int(scored.get_column("error").is_not_null().sum()),
            "n_items": scored.get_column(item).n_unique(),
            "n_rows_without_factors": frame.height - frame.filter(in_study).height,
        },
        "provenance": _provenance(scored, line),
        "design": design,
        "cell_results": cells,
        "effects": _clean(_effects(scored, spec, level_order)),
        "analysis": analysis,
        "analysis_error": analysis_error,
        "attribution": _clean(_attribution(analysis, cells, spec)),
    }


def build_report(
    source: Source,
    out_dir: str | Path,
    response: str = DEFAULT_RESPONSE,
    score_key: str | None = None,
    factors: Sequence[str] | None = None,
    item: str = DEFAULT_ITEM,
    order: int = DEFAULT_ORDER,
    title: str | None = None,
    *,
    study: str | None = None,
    command: str | None = None,
    family: str = "gaussian",
    item_mode: str | None = None,
    anova_type: int = 2,
) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and ``report.html`` for a study into ``out_dir``.

    Args:
        source: The study's log directory (or log files), or a frame from
            :func:`study_frame` / :func:`harness.results.read_results`.
        out_dir: Folder to write to (created).
        response: Column analysed (default the score value).
        score_key: Which score key to analyse; required when the logs hold several.
        factors: Factor columns; default every factor recorded in the eval metadata.
        item: The item column (clusters CIs, blocks the analysis).
        order: Highest interaction order in the model and the plots.
        title: Report title (default names the study).
        study: Keep only this study's logs when a folder holds several.
        command: The command line to record as the report's origin.
        family: ``gaussian`` (linear model) or ``binomial`` (logit GLM, 0/1 scores).
        item_mode: How the item enters the model: ``fixed``, ``cluster``, ``random`` or
            None (not modelled; still pairs comparisons and power).
        anova_type: 2 or 3.

    Returns:
        ``{"json": path, "markdown": path, "html": path}``.
    """
    out = Path(out_dir)
    data = report_data(source, response=response, score_key=score_key, factors=factors,
                       item=item, order=order, title=title, study=study, command=command,
                       out_dir=out, family=family, item_mode=item_mode, anova_type=anova_type)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "report.json", "markdown": out / "report.md",
             "html": out / "report.html"}
    paths["json"].write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    tables = report_tables(data)
    paths["markdown"].write_text(render_markdown(data, tables))
    paths["html"].write_text(render_html(data, tables, report_plots(data)))
    return paths


def analyze_command(
    source: Source,
    response: str = DEFAULT_RESPONSE,
    score_key: str | None = None,
    factors: Sequence[str] | None = None,
    item: str = DEFAULT_ITEM,
    order: int = DEFAULT_ORDER,
    as_json: bool = False,
    *,
    family: str = "gaussian",
    item_mode: str | None = None,
    anova_type: int = 2,
) -> str:
    """Text for ``harness study analyze``: the cell table and ANOVA as Markdown, or JSON."""
    data = report_data(source, response=response, score_key=score_key, factors=factors,
                       item=item, order=order, family=family, item_mode=item_mode,
                       anova_type=anova_type)
    if as_json:
        return json.dumps(data, indent=2, ensure_ascii=False)
    tables = [t for t in report_tables(data) if t.key in ("cell_results", "anova")]
    return "\n\n".join([data["attribution"]["statement"], *(t.markdown() for t in tables)])


# --------------------------------------------------------------------------- views


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != 0 and abs(value) < 1e-3:
            return f"{value:.2e}"
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return ", ".join(_fmt(v) for v in value)
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


@dataclass
class Table:
    """One table of the report, shared by the Markdown and HTML views."""

    key: str
    title: str
    headers: list[str]
    rows: list[list[Any]]
    note: str = ""

    def cells(self) -> list[list[str]]:
        """The rows formatted for display."""
        return [[_fmt(v) for v in row] for row in self.rows]

    def display(self) -> list[list[tuple[str, bool]]]:
        """Formatted rows with a "numeric" flag per cell (right-aligned in HTML)."""
        return [[(_fmt(v), isinstance(v, int | float) and not isinstance(v, bool)) for v in row]
                for row in self.rows]

    def markdown(self) -> str:
        """A GitHub-flavoured Markdown table under a level-3 heading."""
        def esc(text: str) -> str:
            return text.replace("|", "\\|").replace("\n", " ")

        lines = [f"### {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        lines.append("| " + " | ".join(esc(h) for h in self.headers) + " |")
        lines.append("|" + "|".join("---" for _ in self.headers) + "|")
        lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in self.cells()]
        return "\n".join(lines)


def _records_table(key: str, title: str, records: list[Mapping[str, Any]]) -> Table:
    headers: dict[str, None] = {}
    for record in records:
        headers.update(dict.fromkeys(record))
    cols = list(headers)
    return Table(key, title, cols, [[r.get(c) for c in cols] for r in records])


def _generic_tables(key: str, title: str, value: Any) -> list[Table]:
    """Tables for an analysis section of unknown shape (records, mappings, scalars)."""
    if value is None or value == {} or value == []:
        return []
    if isinstance(value, list):
        if all(isinstance(v, Mapping) for v in value):
            return [_records_table(key, title, value)]
        return [Table(key, title, ["value"], [[v] for v in value])]
    if isinstance(value, Mapping):
        scalars = {k: v for k, v in value.items()
                   if not isinstance(v, Mapping | list) or
                   (isinstance(v, list) and not any(isinstance(x, Mapping | list) for x in v))}
        tables = []
        if scalars:
            tables.append(Table(key, title, ["field", "value"],
                                [[k, v] for k, v in scalars.items()]))
        for k, v in value.items():
            if k not in scalars:
                tables += _generic_tables(f"{key}.{k}", f"{title}: {k}", v)
        return tables
    return [Table(key, title, ["value"], [[value]])]


def _shares(analysis: Mapping[str, Any] | None) -> list[tuple[str, float]]:
    """Variance shares as (component, share) pairs from the analysis records."""
    raw = (analysis or {}).get("variance_shares") or []
    pairs: list[tuple[str, float]] = []
    for rec in raw if isinstance(raw, list) else []:
        if isinstance(rec, Mapping) and isinstance(rec.get("share"), int | float):
            pairs.append((str(rec.get("component", rec.get("term"))), float(rec["share"])))
    return pairs


def _marginal_points(analysis: Mapping[str, Any] | None) -> dict[str, list[plots.LevelPoint]]:
    """Estimated marginal means of the main-effect terms, per factor, for the plot."""
    out: dict[str, list[plots.LevelPoint]] = {}
    raw = (analysis or {}).get("marginal_means") or []
    for rec in raw if isinstance(raw, list) else []:
        if not isinstance(rec, Mapping) or ":" in str(rec.get("term", ":")):
            continue
        if isinstance(rec.get("estimate"), int | float):
            out.setdefault(str(rec["term"]), []).append(plots.LevelPoint(
                str(rec.get("level")), float(rec["estimate"]), rec.get("lo"), rec.get("hi")))
    return out


def _robustness_tables(robustness: Any) -> list[Table]:
    """Spread/CPS per model and setup factor, plus rank agreement and rank flips."""
    setups = robustness.get("setup_factors") if isinstance(robustness, Mapping) else None
    if not isinstance(setups, Mapping) or not setups:
        return _generic_tables("robustness", "Robustness", robustness)
    model = robustness.get("model_factor", "model")
    per_model, agreement = [], []
    for setup, entry in setups.items():
        for level, stats in (entry.get("per_model") or {}).items():
            per_model.append([setup, level, stats.get("spread"), stats.get("max"),
                              stats.get("avg"), stats.get("cps")])
        flips = ["{} vs {}: {} ahead at {}; {} ahead at {}".format(
            *f["models"][:2], f["models"][0], ", ".join(f["first_ahead_at"]),
            f["models"][1], ", ".join(f["second_ahead_at"]))
            for f in entry.get("rank_flips") or []]
        taus = ["{}~{}: {}".format(t["a"], t["b"], _fmt(t["tau"]))
                for t in entry.get("kendall_tau") or []]
        agreement.append([setup, entry.get("kendall_w"), "; ".join(taus) or None,
                          entry.get("n_rank_flips"), "; ".join(flips) or None])
    return [
        Table("robustness.per_model", f"Robustness of {model} across setup factors",
              ["setup factor", model, "spread", "max", "avg", "CPS"], per_model,
              note="spread = max - min over the setup factor's levels; "
                   "CPS = (1 - (max - avg)) * max."),
        Table("robustness.rank_agreement", "Rank agreement",
              ["setup factor", "Kendall W", "Kendall tau", "rank flips", "flipped pairs"],
              agreement),
    ]


def _attribution_table(attribution: Mapping[str, Any]) -> list[Table]:
    provided = attribution.get("analysis_attribution")
    setups = provided.get("setup_factors") if isinstance(provided, Mapping) else None
    rows = []
    for setup, entry in (setups or {}).items():
        if isinstance(entry, Mapping):
            rows.append([setup, entry.get("mean"), entry.get("min"), entry.get("max"),
                         f"{entry.get('levels_same_sign')} of {entry.get('n_levels')}",
                         entry.get("interaction_share"), entry.get("interaction_ss_share")])
    if rows and isinstance(provided, Mapping):
        a, b = (provided.get("models") or ["?", "?"])[:2]
        return [Table("attribution", f"Attribution of the gap {a} - {b}",
                      ["setup factor", "mean gap", "min", "max", "same sign",
                       "interaction share", "interaction SS share"], rows,
                      note="interaction share: part of the gap's squared variation over "
                           "setup levels that is model x setup interaction.")]
    headline = attribution.get("headline")
    if headline:
        return [Table("attribution", "Headline difference", ["field", "value"],
                      [[k, v] for k, v in headline.items()])]
    return []


def report_tables(data: Mapping[str, Any]) -> list[Table]:
    """Every table of the report, in reading order (the Markdown and HTML share them)."""
    factors: list[str] = data["response"]["factors"]
    design = data["design"]
    tables = [
        Table("design", "Design", ["cell", *factors, "n items", "epochs", "samples", "scored",
                                   "errors", "logs", "status"],
              [[c["cell"], *[c["levels"][f] for f in factors], c["n_items"], c["n_epochs"],
                c["n_samples"], c["n_scored"], c["errors"], c["n_logs"], c["status"]]
               for c in design["cells"]],
              note=f"{design['n_cells']} of {design['n_possible_cells']} possible cells run."),
        Table("cell_results", "Cell results",
              [*factors, "mean", "CI lower", "CI upper", "n", "items", "errors"],
              [[*[c["levels"][f] for f in factors], c["mean"], c["ci_lower"], c["ci_upper"],
                c["n"], c["n_items"], c["errors"]] for c in data["cell_results"]],
              note="95% CIs clustered by item."),
    ]
    analysis = data.get("analysis") or {}
    anova = _anova_rows(analysis)
    if anova:
        cols = ["term", "sum_sq", "df", "F", "p", "partial_eta2", "omega2"]
        tables.append(Table("anova", "ANOVA", cols, [[r.get(c) for c in cols] for r in anova]))
    tables += _generic_tables("variance_shares", "Variance shares",
                              analysis.get("variance_shares"))
    tables += _generic_tables("marginal_means", "Estimated marginal means",
                              analysis.get("marginal_means"))
    tables += _generic_tables("pairwise", "Pairwise comparisons (Holm-adjusted)",
                              analysis.get("pairwise"))
    tables += _robustness_tables(analysis.get("robustness"))
    tables += _attribution_table(data["attribution"])
    tables += _generic_tables("power", "Power", analysis.get("power"))
    tables += _generic_tables("effects", "Model coefficients", analysis.get("effects"))
    tables += _generic_tables("model", "Model", analysis.get("model"))
    versions = data["provenance"]["versions"]
    tables.append(Table("versions", "Versions", ["component", "version"],
                        [[k, v] for k, v in versions.items()]))
    return tables


def _main_points(data: Mapping[str, Any]) -> dict[str, list[plots.LevelPoint]]:
    return {
        factor: [plots.LevelPoint(r["level"], r["mean"], r["ci_lower"], r["ci_upper"])
                 for r in rows if r["mean"] is not None]
        for factor, rows in data["effects"]["main_effects"].items()
    }


def report_plots(data: Mapping[str, Any]) -> list[dict[str, str]]:
    """The report's figures as ``{"key", "title", "src"}`` with ``src`` a data URI."""
    response = data["response"]["score_key"] or data["response"]["column"]
    figures = [{
        "key": "main_effects", "title": "Main effects (raw level means, 95% CI)",
        "src": plots.level_means_plot(_main_points(data), ylabel=response,
                                      title="Main effects"),
    }]
    for pair in data["effects"]["interactions"]:
        a, b = pair["factors"]
        figures.append({
            "key": f"interaction:{a}:{b}", "title": f"Interaction {a} \u00d7 {b}",
            "src": plots.interaction_plot(a, b, pair["x_levels"], pair["traces"],
                                          ylabel=response),
        })
    shares = _shares(data.get("analysis"))
    if shares:
        figures.append({"key": "variance_shares", "title": "Variance shares",
                        "src": plots.variance_shares_plot(shares, title="Variance shares")})
    marginal = _marginal_points(data.get("analysis"))
    if marginal:
        figures.append({"key": "marginal_means", "title": "Estimated marginal means (95% CI)",
                        "src": plots.level_means_plot(marginal, ylabel=response,
                                                      title="Estimated marginal means")})
    return figures


def render_markdown(data: Mapping[str, Any], tables: list[Table]) -> str:
    """``report.md``: the same content as the JSON, as headings, sentences and tables."""
    prov = data["provenance"]
    resp = data["response"]
    lines = [
        f"# {data['title']}", "",
        f"Generated {data['generated_at']} (report schema {data['schema_version']}). "
        f"Response: `{resp['column']}`"
        + (f" of score `{resp['score_key']}`" if resp["score_key"] else "")
        + f"; factors: {', '.join(resp['factors'])}; item: `{resp['item']}`; "
        f"interactions up to order {resp['order']}.", "",
        "## Attribution", "", data["attribution"]["statement"], "",
    ]
    if data.get("analysis_error"):
        lines += [f"**Analysis not available:** {data['analysis_error']}", ""]
    lines += ["## Tables", ""]
    for table in tables:
        lines += [table.markdown(), ""]
    lines += ["## Commands", "", "Report:", "", "```sh", prov["report_command"], "```", "",
              "Evaluations (" + ("recorded" if all(c["recorded"] for c in prov["eval_commands"])
                                 else "reconstructed from the logs' eval specs") + "):", "",
              "```sh", *[c["command"] for c in prov["eval_commands"]], "```", ""]
    return "\n".join(lines)


def render_html(data: Mapping[str, Any], tables: list[Table],
                figures: list[dict[str, str]]) -> str:
    """``report.html``: self-contained (inline CSS, base64 plots, no scripts or URLs)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE.parent),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template(TEMPLATE.name).render(data=data, tables=tables, figures=figures)


if __name__ == "__main__":  # pragma: no cover - convenience: python -m harness.factorial.report
    for kind, path in build_report(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "report",
                                   command=shlex.join(sys.argv)).items():
        print(f"{kind}: {path}")
