"""Data assembly: one study's report as the JSON-ready dict (``report.json``'s content).

Why separate from rendering: this dict is the contract; every view is made from it.
"""

from __future__ import annotations

import datetime as _dt
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Unpack

import polars as pl

from harness.factorial.causal import identification
from harness.factorial.report.attribution import attribution_section
from harness.factorial.report.cost import cost_section
from harness.factorial.report.frame import Source, display_levels, study_factors, study_frame
from harness.factorial.report.options import (
    DEFAULT_ITEM,
    DEFAULT_ORDER,
    DEFAULT_RESPONSE,
    SCHEMA_VERSION,
    ReportOptions,
    Spec,
    check_options,
)
from harness.factorial.report.provenance import provenance
from harness.factorial.report.sections import (
    cell_results,
    clean,
    design_section,
    effects_section,
    report_notes,
    run_analysis,
)
from harness.factorial.report.verdict import verdict_section
from harness.factorial.study import STUDY_COPY, Study, load_study
from harness.results import apply_errored_policy, load_results


def resolve_score_key(frame: pl.DataFrame, score_key: str | None,
                      preferred: Sequence[str] = ()) -> str | None:
    """The score key to analyse: the one given, else the study's first listed score, else
    the only key in the logs. ``preferred`` names may be bare (``gap_closed``) or
    scorer-qualified (``verified_objective/gap_closed``)."""
    from harness.tool_validity import is_auxiliary

    keys = frame.get_column("score_key").drop_nulls().unique(maintain_order=True).to_list()
    if score_key is not None:
        if score_key not in keys:
            raise ValueError(f"score key {score_key!r} not in the logs; found {keys}")
        return score_key
    keys = [k for k in keys if not is_auxiliary(str(k))] or keys
    for name in preferred:
        for key in keys:
            if key == name or key.endswith("/" + name) or key.startswith(name + "/"):
                return str(key)
    if len(keys) > 1:
        raise ValueError(f"the logs hold several score keys {keys}; pass score_key= "
                         "(--score-key), or list the one to analyse first in the "
                         "study's response.scores")
    return keys[0] if keys else None


def default_command(source: Source, out_dir: Path, spec: Spec, title: str | None,
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


def _cost_words(options: ReportOptions) -> list[str]:
    """The cost options as the ``harness study report`` line records them."""
    if options.get("pricing"):
        return ["--pricing", str(options["pricing"])]
    return ["--cost"] if options.get("cost") else []


def report_data(
    source: Source, *, out_dir: Path | None = None, **options: Unpack[ReportOptions]
) -> dict[str, Any]:
    """The report as a JSON-ready dict (the content of ``report.json``), without writing.

    Options are :class:`ReportOptions`, as for :func:`build_report`; ``command`` overrides
    the recorded harness command line (the CLI passes its own argv), ``out_dir`` only
    enters that line.

    Raises:
        TypeError: An option that :class:`ReportOptions` does not name.
    """
    check_options(options)
    study_file = _study_file(source)
    options = {**_study_defaults(study_file), **options}  # type: ignore[typeddict-item]
    response = options.get("response", DEFAULT_RESPONSE)
    score_key = options.get("score_key")
    factors = options.get("factors")
    item = options.get("item", DEFAULT_ITEM)
    order = options.get("order", DEFAULT_ORDER)
    title, study, command = options.get("title"), options.get("study"), options.get("command")
    family = options.get("family", "gaussian")
    item_mode = options.get("item_mode")
    anova_type = options.get("anova_type", 2)
    headline = options.get("headline_factor")
    counting: dict[str, Any] | None = None
    if isinstance(source, pl.DataFrame) and "cell_id" in source.columns:
        frame = source if study is None else source.filter(pl.col("study") == study)
    elif isinstance(source, pl.DataFrame):
        frame = study_frame(source, study=study)
    else:  # read here, so the report can say how the logs were counted
        results = load_results(source, skip_bad_logs=bool(options.get("skip_bad_logs")))
        frame = study_frame(results.frame, study=study)
        counting = {"line": results.account.line(),
                    **{k: v for k, v in results.account.as_dict().items()
                       if k not in ("set_aside",)},
                    "set_aside": [{"log_file": _relative(a.log_file, source), "why": a.why,
                                   "kept": a.kept and _relative(a.kept, source),
                                   "samples": a.samples}
                                  for a in results.account.set_aside]}
    names = list(factors) if factors is not None else study_factors(frame)
    if not names:
        raise ValueError("no factors: the logs carry no eval metadata 'factors' "
                         "and none were given")
    missing = [f for f in [*names, response, item] if f not in frame.columns]
    if missing:
        raise ValueError(f"columns not in the study frame: {missing}")
    if headline is not None and headline not in names:
        raise ValueError(f"headline_factor {headline!r} is not among the factors {names}")
    preferred = study_file.response.scores if study_file is not None else []
    key = resolve_score_key(frame, score_key, preferred)
    if family == "auto":  # from a study file: binomial when every score is 0 or 1
        values = frame.filter(pl.col("score_key") == key) if key else frame
        binary = values.get_column(response).drop_nulls().is_in([0.0, 1.0]).all()
        family = "binomial" if binary else "gaussian"
    seeded = ("replicate_seed" in frame.columns
              and frame.get_column("replicate_seed").drop_nulls().n_unique() > 1)
    spec = Spec(response=response, score_key=key, factors=names, item=item, order=order,
                 family=family, item_mode=item_mode, anova_type=anova_type,
                 seed="replicate_seed" if seeded and family == "binomial"
                 and item_mode == "random" else None, headline_factor=headline,
                 lower_is_better=_lower_is_better(frame, key))
    in_study = pl.all_horizontal([pl.col(f).is_not_null() for f in names])
    scored = frame.filter(in_study & (pl.col("score_key") == key if key else pl.lit(True)))
    if scored.is_empty():
        raise ValueError("no scored rows with all factor levels recorded")
    # the suite's one errored-sample policy (eval.yaml): `zero` scores an errored sample 0,
    # `drop` keeps it as a counted row with no value, so every section means what the
    # leaderboard means
    scored = apply_errored_policy(scored, response=response, keep_dropped=True)
    policies = sorted(scored.get_column("errored_policy").drop_nulls().unique().to_list())
    level_order = {f: display_levels(scored, f) for f in names}
    design = design_section(scored, spec, level_order)
    cells = cell_results(scored, design, spec)
    analysis, analysis_error = run_analysis(scored, spec)
    studies = sorted(scored.get_column("study").drop_nulls().unique().to_list())
    out = Path(out_dir) if out_dir is not None else Path("report")
    line = command or (default_command(source, out, spec, title, (score_key, factors))
                       + "".join(f" {shlex.quote(w)}" for w in _cost_words(options)))
    wants_cost = bool(options.get("cost") or options.get("pricing"))
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
            "errored_policy": ", ".join(policies) or None,
            "n_items": scored.get_column(item).n_unique(),
            # samples (log, id, epoch), not score rows: a log with several scorers has a row
            # per score key and would otherwise count several times
            "n_rows_without_factors": frame.filter(~in_study)
            .select("log_file", "sample_id", "epoch").unique().height,
            **({"counting": counting} if counting is not None else {}),
        },
        "provenance": provenance(scored, line),
        "design": design,
        "cell_results": cells,
        **({"cost": clean(cost_section(scored, spec, design, options.get("pricing")))}
           if wants_cost else {}),
        "effects": clean(effects_section(scored, spec, level_order)),
        "notes": report_notes(scored, spec, analysis),
        "analysis": analysis,
        "analysis_error": analysis_error,
        "attribution": clean(attribution_section(analysis, cells, spec)),
        "identification": _identification(study_file, names),
        "verdict": clean(verdict_section(
            scored, spec, study_file.claim if study_file is not None else None,
            preferred[0] if preferred else None)),
    }


def _relative(path: str, source: Source) -> str:
    """A log path relative to the log folder it was found in (stable across machines)."""
    if isinstance(source, pl.DataFrame):
        return Path(path).name
    roots: list[str | Path] = [source] if isinstance(source, str | Path) else list(source)
    for root in roots:
        base = Path(root)
        if base.is_dir():
            try:
                return Path(path).resolve().relative_to(base.resolve()).as_posix()
            except ValueError:
                continue
    return Path(path).name


def _lower_is_better(frame: pl.DataFrame, key: str | None) -> bool:
    """Whether the analysed score is lower-is-better for every task it comes from (each
    task's ``eval.yaml``); a score without an ``eval.yaml`` entry is higher-is-better."""
    from harness.evalspec import lower_is_better

    if key is None or "task" not in frame.columns:
        return False
    tasks = frame.filter(pl.col("score_key") == key).get_column("task").drop_nulls().unique()
    return bool(len(tasks)) and all(lower_is_better(str(t), key) for t in tasks)


def _study_file(source: Source) -> Study | None:
    """The study that ``run_study`` copied next to its logs, when the source is that dir.

    The copy records what ran (factors, analysis options). The paper's claim is a statement
    about the study, not about one run, and is kept in the study folder's ``study.yaml``:
    when the logs are a run of a study folder (``<study>/logs/<run>/``) with the same name,
    its claim is the one the verdict tests."""
    if not (isinstance(source, str | Path) and (Path(source) / STUDY_COPY).is_file()):
        return None
    copy = load_study(Path(source) / STUDY_COPY)
    canonical = copy.folder / STUDY_COPY if copy.folder is not None else None
    if canonical is not None and canonical.is_file() and canonical != Path(source) / STUDY_COPY:
        study = load_study(canonical)
        if study.name == copy.name and study.claim is not None:
            return copy.model_copy(update={"claim": study.claim})
    return copy


def _study_defaults(study: Study | None) -> dict[str, Any]:
    """The study's own analysis options; explicit report options override them."""
    if study is None:
        return {}
    mode = study.analysis.item_mode
    defaults: dict[str, Any] = {"order": study.analysis.order,
                                "family": study.analysis.family,
                                "item_mode": None if mode == "none" else mode}
    if study.headline_factor is not None:
        defaults["headline_factor"] = study.headline_factor
    return defaults


def _identification(study: Study | None, factors: list[str]) -> list[dict[str, Any]] | None:
    """What the design identifies, from the study's causal graph (None without a study)."""
    if study is None:
        return None
    edges = list(study.causal.edges) if study.causal is not None else []
    return identification(factors, edges, study.design())

