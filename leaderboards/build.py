"""Inspect logs -> leaderboard: tables, Markdown, JSON exports and a static site.

``build(LOGDIRS, OUT)`` is what ``harness leaderboard build`` runs. The tables are computed in
:mod:`leaderboards.tables`, written as JSON (own schema and Every Eval Ever) by
:mod:`leaderboards.exports` and as HTML by :mod:`leaderboards.site`. :func:`leaderboard` is
the older one-row-per-(task, model) summary, kept as ``leaderboard.csv`` over each
benchmark's headline score (the key the board ranks on), under the same errored policy.

Logs are read only through ``harness.results``; intervals come only from ``harness.stats``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from harness.atomic import staged_folder
from harness.cost import load_pricing as _load_pricing
from harness.provenance import entry_provenance, log_provenance
from harness.results import (
    LogAccount,
    apply_errored_policy,
    load_results,
    read_eval_specs,
    read_sample_texts,
    read_score_metadata,
    with_unreported_keys,
)
from harness.stats import is_proportion_score, score_mean_ci
from leaderboards.exports import project_document, rel_path, write_eee, write_json
from leaderboards.site import write_site
from leaderboards.tables import Leaderboard, Options, Price, compute

__all__ = ["build", "leaderboard", "load_pricing", "markdown", "read_logs",
           "read_logs_counted", "to_markdown"]


def leaderboard(frame: pl.DataFrame, by: tuple[str, ...] = ("task", "model"),
                score_key: str | None = None, errored: Any = None) -> pl.DataFrame:
    """One row per ``by`` group: mean, clustered CI (by sample id), n, errors; best first.

    Errored samples count under each task's errored-sample policy (``errored`` overrides
    it: see :func:`harness.results.apply_errored_policy`) and are counted in ``errors``
    either way; ``errored_policy`` says which applied. A lower-is-better score (eval.yaml)
    sorts ascending; a group whose every sample was dropped has no mean and sorts last.
    """
    from harness.evalspec import spec_for_task

    df = frame
    if score_key is not None:
        df = df.filter(pl.col("score_key") == score_key)
    df = apply_errored_policy(df, errored, keep_dropped=True)
    # a 0/1 outcome (both values occur across the whole score key) gets Wilson intervals
    values_by_key = (df.filter(pl.col("counted") & pl.col("score_value").is_not_null())
                     .group_by("score_key").agg(pl.col("score_value")))
    proportion = {key: is_proportion_score(np.asarray(vals, dtype=float))
                  for key, vals in values_by_key.iter_rows()}
    rows = []
    for keys, group in df.group_by(list(by), maintain_order=True):
        values = group.filter(pl.col("counted"))["score_value"].to_numpy()
        key = group["score_key"][0] if score_key is None else score_key
        found = spec_for_task(str(group["task"][0])) if "task" in group.columns else None
        lower = found.lower_is_better(key) if found is not None else False
        mean = lo = hi = None
        if len(values):
            # scores in [0, 1] (accuracy and the like): clip the interval to what is possible
            bounded = values.min() >= 0.0 and values.max() <= 1.0
            # 0/1 scores: the clustered Wilson interval (harness.stats.SCORE_CI_METHOD)
            est = score_mean_ci(values,
                                cluster=group.filter(pl.col("counted"))["sample_id"].to_numpy(),
                                bounds=(0.0, 1.0) if bounded else None,
                                binary=proportion.get(key, False),
                                wilson_when_constant=True)
            mean, lo, hi = est.estimate, est.lo, est.hi
        rows.append({
            **dict(zip(by, keys, strict=True)),
            "score_key": key, "mean": mean, "ci_lo": lo, "ci_hi": hi, "n": group.height,
            "errors": int(group["errored"].sum()),
            "errored_policy": group["errored_policy"][0],
            "_order": None if mean is None else (mean if lower else -mean),
        })
    out = pl.DataFrame(rows)
    if not len(out):
        return out
    return out.sort(["task", "_order"], nulls_last=True).drop("_order")


def to_markdown(table: pl.DataFrame) -> str:
    """A Markdown table with the CI shown as ``[lo, hi]``."""
    cols = [c for c in table.columns if c not in ("ci_lo", "ci_hi")]
    lines = ["| " + " | ".join(cols + ["95% CI"]) + " |",
             "|" + "---|" * (len(cols) + 1)]
    for row in table.iter_rows(named=True):
        cells = [f"{row[c]:.3f}" if isinstance(row[c], float) else str(row[c]) for c in cols]
        cells.append(f"[{row['ci_lo']:.3f}, {row['ci_hi']:.3f}]")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- build


LogDirs = str | Path | Sequence[str | Path]


def read_logs(log_dirs: LogDirs, *, skip_bad_logs: bool = False
              ) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """Every log under ``log_dirs``, each (run, sample, epoch) once, and the logs that held
    no sample. See :func:`read_logs_counted` for the account of what was set aside."""
    frame, empty, _ = read_logs_counted(log_dirs, skip_bad_logs=skip_bad_logs)
    return frame, empty


def read_logs_counted(log_dirs: LogDirs, *, skip_bad_logs: bool = False
                      ) -> tuple[pl.DataFrame, list[dict[str, Any]], LogAccount]:
    """The board's rows through :func:`harness.results.load_results`, which counts a copied
    log or a superseded attempt once; its account goes into every output of the board.

    A log with no sample (an eval that failed before its first sample, or one still
    starting) contributes no row, so it is returned separately to be listed, not lost.

    Raises:
        LogReadError: A log cannot be read (unless ``skip_bad_logs``).
        ValueError: No scored sample in any log.
    """
    paths = (list(log_dirs) if isinstance(log_dirs, Sequence) and not isinstance(log_dirs, str)
             else [log_dirs])
    results = load_results(paths, skip_bad_logs=skip_bad_logs)
    empty = [{"log_file": path, "status": "no samples"} for path in results.account.empty]
    if not results.frame.height:
        raise ValueError(f"no scored samples in any log under {', '.join(map(str, paths))}")
    return results.frame, empty, results.account


def load_pricing(path: str | Path) -> dict[str, Price]:
    """Prices from Inspect's ``--model-cost-config`` file (:func:`harness.cost.load_pricing`,
    kept here for the callers that import it from the board)."""
    return _load_pricing(path)


def _copy_logs(frame: pl.DataFrame, empty: list[dict[str, Any]], folder: Path
               ) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """Copy every log into ``folder`` so the site's links work wherever it is published."""
    folder.mkdir(parents=True, exist_ok=True)
    mapping: dict[str, str] = {}
    sources = list(dict.fromkeys([*frame["log_file"].unique(maintain_order=True).to_list(),
                                  *(e["log_file"] for e in empty)]))
    for source in sources:
        target = folder / Path(source).name
        if str(target) in mapping.values():
            target = folder / f"{len(mapping)}_{Path(source).name}"
        if Path(source).resolve() != target.resolve():
            shutil.copyfile(source, target)
        mapping[source] = str(target)
    frame = frame.with_columns(pl.col("log_file").replace(mapping))
    return frame, [{**e, "log_file": mapping[e["log_file"]]} for e in empty]


AUTO_SUBMIT_SCORERS = {"causalgame": "causalgame_scorer"}
"""Benchmarks (name prefix) whose scorer marks an episode the suite submitted for the agent
(``auto_submitted`` in the score metadata): such a score is the fallback design's, not the
model's, so the board counts them per entry next to the N/A count."""


def auto_submitted_count(bench: str, logs: Sequence[str | Path]) -> int | None:
    """How many of an entry's episodes were auto-submitted (None: not such a benchmark)."""
    scorer = next((v for k, v in AUTO_SUBMIT_SCORERS.items() if bench.startswith(k)), None)
    if scorer is None or not logs:
        return None
    meta = read_score_metadata([Path(p) for p in logs], scorer)
    return sum(bool(json.loads(m).get("auto_submitted")) for m in meta["metadata"])


def log_provenances(log_files: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each log's provenance (:func:`harness.provenance.log_provenance`): what it recorded
    at launch, Inspect's packages, the task version and revision, the hash of its data, and
    the digest of all of it; a log that cannot be read for its header gets the digest of
    an empty record rather than none, so the board still says it knows nothing."""
    files = list(dict.fromkeys(log_files))
    if not files:
        return {}
    specs = {s["log_file"]: s for s in read_eval_specs(files)}
    texts = read_sample_texts(files)
    return {log: log_provenance(specs.get(log, {}), texts.filter(pl.col("log_file") == log))
            for log in files}


def _with_provenance(document: dict[str, Any], board: Leaderboard,
                     records: Mapping[str, Mapping[str, Any]]) -> None:
    """Carry the provenance into the document: each log's record, each entry's digest."""
    for bench in document["benchmarks"]:
        logs = board.entries.filter(pl.col("benchmark") == bench["name"])["logs"].to_list()
        for entry, files in zip(bench["entries"], logs, strict=True):
            entry["provenance"] = entry_provenance([records[f] for f in files if f in records])
    for row, log in zip(document["logs"], board.logs["log_file"].to_list(), strict=True):
        if log in records:
            row["provenance"] = dict(records[log])


def _cell(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value).replace("|", "/")


def flips_cell(entry: Mapping[str, Any]) -> str:
    """An entry's consistency across trials as one cell: ``0.125 [0.04, 0.33] (k=3, pass^k
    0.50)``, or — where there is nothing to count (one trial, not a 0/1 score)."""
    if entry.get("flip_rate") is None:
        return "—"
    trials = entry.get("trials")
    most = entry.get("trials_max")
    k = f"{trials}" if most in (None, trials) else f"{trials}-{most}"
    return (f"{_cell(entry['flip_rate'])} [{_cell(entry.get('flip_lo'))}, "
            f"{_cell(entry.get('flip_hi'))}] (k={k}, pass^k {_cell(entry.get('pass_hat_k'), 2)})")


_POLICY = {"zero": "errored samples score 0", "drop": "errored samples are left out"}


def headline_line(bench: Mapping[str, Any]) -> str:
    """One benchmark's headline, direction, items and errored-sample policy, as a sentence."""
    direction = "lower is better" if bench.get("lower_is_better") else "higher is better"
    summary = f": {bench['summary']}" if bench.get("summary") else ""
    policy = bench.get("errored_policy")
    how = _POLICY.get(policy or "", f"errored samples: {policy}")
    return (f"Headline score `{bench['score_key']}` ({direction}{summary}), "
            f"{bench['n_items']} items; {how} ({bench.get('n_errored', 0)} errored"
            + (f", {bench['n_na']} N/A: no value, left out" if bench.get("n_na") else "")
            + ").")


def markdown(document: Mapping[str, Any], title: str = "Leaderboard") -> str:
    """The leaderboard as Markdown: the overall table, then one table per benchmark."""
    level = round(document["level"] * 100)
    lines = [f"# {title}", ""]
    if document.get("as_of"):
        lines += [f"Logs as of {document['as_of']}. Scores are means over samples x epochs, "
                  "errored samples counted as each benchmark states below (zero: scored 0; "
                  "drop: left out of the mean and the ranking; counted in errors either way); "
                  f"{level}% CIs are Wilson intervals on the item-clustered effective sample "
                  "size for 0/1 scores (inside [0, 1]; an all-0 or all-1 entry gets the "
                  "Wilson interval for its items), t intervals clustered by item otherwise; "
                  f"rank intervals from {document['n_boot']} paired bootstrap resamples. "
                  "Tool calls/sample and the pooled share of valid calls come from each "
                  "benchmark's `tool_call_validity` score (— where a benchmark has no tools "
                  "or no call was made). A bounded score with no variance to estimate (one "
                  "item, or every item alike) gets the Wilson interval for its items, never "
                  "a standard error of 0. *Group*: entries whose rank intervals cannot be "
                  "separated share a tie group (a group ends only where every rank interval "
                  "above clears every one below), so read the group, not the rank. *Δ next* "
                  "is the paired difference to the next entry down over the items both ran, "
                  "*MDE next* the smallest such difference those items detect (paired t, "
                  f"two-sided {100 - level}%, power 80%; where the two agree on every item, "
                  "the SD of a [0, 1] score at p = 0.5). $/sample and score per $ need a "
                  "pricing file (Inspect's model-cost config); tokens per point is "
                  "tokens/sample over the score. *Flips* (consistency across trials, for 0/1 "
                  "scores run with epochs): the share of pairs of an item's trials whose "
                  "outcomes differ, over items with two or more trials, with its Wilson "
                  "interval clustered by item, then the trials per item and pass^k (every "
                  "one of k trials passes; Inspect's `pass_k` reducer); — with one trial "
                  "per item or a score that is not 0/1 (`consistency_basis` in "
                  "leaderboard.json says which).", ""]
    if document.get("counting"):
        lines += [f"Counting: {document['counting']['line']}.", ""]
    lines += ["## Overall", "",
              "| entry | model | agent | benchmarks | mean win rate | mean normalised |",
              "|---|---|---|---|---|---|"]
    for r in document["overall"]:
        lines.append(f"| {_cell(r.get('name'))} | {_cell(r['model'])} | {_cell(r['agent'])} | "
                     f"{r['n_benchmarks']} | {_cell(r['mean_win_rate'])} | "
                     f"{_cell(r['mean_normalised'])} |")
    for bench in document["benchmarks"]:
        groups = len({e.get("tie_group") for e in bench["entries"]})
        lines += ["", f"## {bench['name']}", "", headline_line(bench), "",
                  f"{groups} tie group{'s' if groups != 1 else ''} among "
                  f"{len(bench['entries'])} entries.", "",
                  f"| rank | group | rank {level}% | entry | agent | setup | score | "
                  f"{level}% CI | Δ next | MDE next | flips [{level}% CI] (trials, pass^k) | "
                  "normalised | n | completed | errors | "
                  "tool calls/sample | valid calls | tokens/sample | tokens/point | "
                  "$/sample | score/$ | work s/sample |",
                  "|" + "---|" * 22]
        for e in bench["entries"]:
            notes = [f"+{e['n_na']} N/A"] if e.get("n_na") else []
            if e.get("n_auto_submitted"):
                notes.append(f"{e['n_auto_submitted']} auto-submitted")
            na = f" ({', '.join(notes)})" if notes else ""
            lines.append(
                f"| {e['rank']} | {_cell(e.get('tie_group'))} | {e['rank_lo']}–{e['rank_hi']} | "
                f"{_cell(e.get('name'))} | {_cell(e['agent'])} | {_cell(e['setup'])} | "
                f"{_cell(e['score'])} | [{_cell(e['ci_lo'])}, {_cell(e['ci_hi'])}] | "
                f"{_cell(e.get('diff_next'))} | {_cell(e.get('mdd_next'))} | "
                f"{flips_cell(e)} | {_cell(e['normalised'])} | "
                f"{e['n']} | {e['n_completed']} | {e['errors']}{na} | "
                f"{_cell(e.get('tool_calls_per_sample'), 1)} | "
                f"{_cell(e.get('tool_call_valid_rate'))} | "
                f"{_cell(e['tokens_per_sample'], 1)} | {_cell(e.get('tokens_per_point'), 0)} | "
                f"{_cell(e['cost_per_sample'], 5)} | {_cell(e.get('score_per_dollar'), 1)} | "
                f"{_cell(e['working_time_per_sample'], 2)} |")
        pairs = [p for p in bench["pairwise"] if p["a"] < p["b"]]
        clear = sum(1 for p in pairs if p["ci_lo"] is not None and p["ci_hi"] is not None
                    and (p["ci_lo"] > 0 or p["ci_hi"] < 0))
        lines += ["", f"{clear} of {len(pairs)} pairs differ at {level}% (paired CI excludes "
                  "0); the full matrix is in the site and leaderboard.json."]
    return "\n".join(lines) + "\n"


def build(log_dir: LogDirs, out_dir: str | Path, options: Options | None = None, *,
          title: str = "Leaderboard", copy_logs: bool = False,
          skip_bad_logs: bool = False) -> dict[str, Path]:
    """Read every log under ``log_dir`` (one or several folders/files); write the outputs.

    Returns the paths written: ``md`` (leaderboard.md), ``json`` (own schema), ``eee``
    (folder of Every Eval Ever records), ``site`` (index.html; one page per benchmark
    beside it), ``entries_csv``, ``pairwise_csv``, ``overall_csv``, ``csv`` (the per
    (task, model) summary) and, with ``copy_logs``, ``logs`` (the copied logs, which the
    site then links to instead of the originals).

    Every output is written into a staging folder first and renamed into ``out_dir`` only
    when all are complete (:func:`harness.atomic.staged_folder`): a full disk or a kill
    leaves the previous board, never a plausible partial one. The Markdown and JSON state
    how the samples were counted (copies and superseded attempts set aside).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    frame, empty, account = read_logs_counted(log_dir, skip_bad_logs=skip_bad_logs)
    paths: dict[str, Path] = {}
    if copy_logs:
        frame, empty = _copy_logs(frame, empty, out / "logs")
        paths["logs"] = out / "logs"
    board: Leaderboard = compute(frame, options, empty_logs=empty)
    document = project_document(board, out)
    provenance = log_provenances(board.logs["log_file"].to_list())
    _with_provenance(document, board, provenance)
    for bench in document["benchmarks"]:
        for entry in bench["entries"]:
            n_auto = auto_submitted_count(bench["name"], [out / p for p in entry["logs"]])
            if n_auto is not None:
                entry["n_auto_submitted"] = n_auto
    document["counting"] = {k: v for k, v in account.as_dict().items() if k != "set_aside"}
    document["counting"]["line"] = account.line()
    document["counting"]["set_aside"] = [
        {**entry, "log_file": rel_path(entry["log_file"], out),
         "kept": None if entry["kept"] is None else rel_path(entry["kept"], out)}
        for entry in account.as_dict()["set_aside"]]
    with staged_folder(out) as stage:
        write_json(document, stage / "leaderboard.json")
        (stage / "leaderboard.md").write_text(markdown(document, title))
        write_eee(board, stage / "eee", log_base=out, provenance=provenance)
        write_site(document, stage, title=title)
        relative = [";".join(rel_path(p, out) for p in logs) for logs in board.entries["logs"]]
        board.entries.with_columns(pl.Series("logs", relative, dtype=pl.String())).write_csv(
            stage / "entries.csv")
        board.pairwise.write_csv(stage / "pairwise.csv")
        board.overall.write_csv(stage / "overall.csv")
        leaderboard(_headline_rows(frame, board), errored=board.options.errored).write_csv(
            stage / "leaderboard.csv")
    paths.update({"json": out / "leaderboard.json", "md": out / "leaderboard.md",
                  "eee": out / "eee", "site": out / "index.html",
                  "entries_csv": out / "entries.csv", "pairwise_csv": out / "pairwise.csv",
                  "overall_csv": out / "overall.csv", "csv": out / "leaderboard.csv"})
    return paths


def _headline_rows(frame: pl.DataFrame, board: Leaderboard) -> pl.DataFrame:
    """The rows of each benchmark's headline score key (what the board ranked on)."""
    if board.benchmarks.height == 0:
        return frame.clear()
    keys = board.benchmarks.select(pl.col("benchmark").alias("task"), "score_key")
    wanted = {t: [k] for t, k in keys.iter_rows()}
    return with_unreported_keys(frame, wanted).join(keys, on=["task", "score_key"])
