"""Run-vs-run comparison of two Inspect runs on the same items: ``harness compare A B``.

    harness compare A B [--json] [--html OUT] [--metric KEY ...] [--level 0.95]

Why: comparing two runs by their two means and two intervals throws away the pairing (the
same items under both runs), so real differences look insignificant and a z-test on paired
data is wrong (lm-eval's comparator, Inspect issue 2176). Here every sample x epoch of A is
paired with the same id and epoch of B, and for each score key both runs hold:

* ``difference``: the mean of ``B - A`` over the pairs (so positive means B scored higher);
* ``p`` and ``ci``, a test and the interval that agrees with it: for a 0/1 score with one
  epoch per item, exact McNemar on the discordant pairs and its exact (Clopper-Pearson)
  interval; otherwise a bootstrap that resamples whole items (the epochs of an item move
  together), its percentile interval and the p-value from the same resamples (with fewer
  than 20 items, where a bootstrap is too narrow, the paired t over items instead).
  ``p_holm``: Holm-adjusted across the metrics (the verdict uses it);
* ``se``/``ci_t``: the paired t interval over per-item means, which is exactly the
  leaderboard's pairwise cell (:mod:`leaderboards.tables`); ``ci_bootstrap`` always;
* ``mdd``: the minimum difference a paired t test on this many items detects with 80%
  power at the observed spread of per-item differences, by the boards' rule
  (:func:`harness.stats.adjacent_mdd`: where the runs agree on every item of a [0, 1]
  score, the planning SD, never 0); ``mdd_basis`` says which;
* ``flipped_up``/``flipped_down``: pairs where B scored higher / lower than A, listed with
  input, target and both answers (``--html`` writes them as a page).

Refused, with one line naming the reason: runs that share no sample id x epoch, and runs
whose shared score keys come from scorers with different options or that share no score
key at all ("differ in scorer"). Differences in what each run recorded about itself
(packages, task version, revision, the provenance of :mod:`harness.provenance`, the inputs
under the same ids) are warnings: the comparison is still paired, but may not be fair.

Logs are read through :mod:`harness.results` only and every statistic comes from
:mod:`harness.stats`; any Inspect log works, not only the suite's.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from harness.errors import UserInputError
from harness.results import (
    apply_errored_policy,
    load_results,
    read_eval_specs,
    read_sample_output,
    read_sample_texts,
    with_unreported_keys,
)
from harness.stats import (
    adjacent_mdd,
    bootstrap_mean_p,
    holm_adjust,
    is_binary,
    mcnemar_exact_ci,
    mcnemar_exact_p,
    paired_difference_ci,
    paired_t_p_value,
)

__all__ = ["Comparison", "Run", "compare", "compare_paths", "load_run", "to_html"]

DEFAULT_N_BOOT = 2000
"""Item resamples of the bootstrap interval (seeded, so the output is reproducible)."""
MIN_BOOTSTRAP_ITEMS = 20
"""Below this many items the percentile bootstrap cannot see past the few values it
resamples (3 items all lower give p = 0.001), so the paired t over items is used."""
MAX_LISTED = 200
"""Flipped items listed with their texts per metric (the counts are always complete)."""


class CompareRefused(UserInputError):
    """Two runs that cannot be compared item by item; the message names the reason."""


@dataclass
class Run:
    """One side of a comparison: the rows of its logs and what its logs say about it."""

    label: str
    frame: pl.DataFrame
    specs: list[dict[str, Any]]
    log_files: list[str]

    @property
    def tasks(self) -> list[str]:
        return sorted({str(t) for t in self.frame["task"].drop_nulls().unique().to_list()})

    def scorer_options(self) -> dict[str, Any]:
        """scorer name -> its recorded options (what decides whether two scores agree)."""
        out: dict[str, Any] = {}
        for spec in self.specs:
            for scorer in spec.get("scorers") or []:
                if "name" in scorer:
                    out[str(scorer["name"])] = scorer.get("options") or {}
        return out


def load_run(path: str | Path) -> Run:
    """Read one run (a log file or a folder of one run's logs).

    Raises:
        CompareRefused: No sample, or the folder holds several runs of the same items
            (a sample id x epoch x score key twice: several models or tasks in one folder).
    """
    results = load_results(path)
    frame = results.frame
    if frame.height == 0:
        raise CompareRefused(f"{path}: no scored sample in its logs")
    twice = (frame.group_by("sample_id", "epoch", "score_key").len()
             .filter(pl.col("len") > 1))
    if twice.height:
        first = twice.row(0, named=True)
        raise CompareRefused(
            f"{path}: holds more than one run of sample {first['sample_id']} epoch "
            f"{first['epoch']} ({len(results.account.counted)} logs: several models or "
            "tasks); name one run's log file or folder")
    specs = [s for s in read_eval_specs(results.account.counted)]
    return Run(str(path), frame, specs, list(results.account.counted))


@dataclass
class Comparison:
    """The result of :func:`compare`; :meth:`as_dict` is the ``--json`` contract."""

    a: Run
    b: Run
    n_paired: int
    metrics: list[dict[str, Any]]
    verdict: str
    warnings: list[str] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    unpaired: dict[str, int] = field(default_factory=dict)
    level: float = 0.95
    consistency: dict[str, Any] | None = None

    def as_dict(self, *, items: bool = True) -> dict[str, Any]:
        metrics = [dict(m) for m in self.metrics]
        if not items:
            for m in metrics:
                m.pop("items", None)
        return {"a": self.a.label, "b": self.b.label, "n_paired": self.n_paired,
                "metrics": metrics, "verdict": self.verdict,
                "level": self.level, "unpaired": self.unpaired, "warnings": self.warnings,
                "tasks": {"a": self.a.tasks, "b": self.b.tasks},
                "models": {"a": _models(self.a), "b": _models(self.b)},
                "logs": {"a": self.a.log_files, "b": self.b.log_files},
                "provenance": self.provenance, "consistency": self.consistency}


def _models(run: Run) -> list[str]:
    return sorted({str(m) for m in run.frame["model"].drop_nulls().unique().to_list()})


# --------------------------------------------------------------------------- checks


def _common_keys(a: Run, b: Run, wanted: Sequence[str] | None) -> list[str]:
    """Score keys both runs hold (with any value), headline first; refuses when a shared key
    comes from scorers with different options, or when nothing is shared."""
    def keys(run: Run) -> dict[str, str]:
        valued = run.frame.filter(pl.col("score_key").is_not_null())
        return dict(valued.select("score_key", "scorer").unique("score_key").iter_rows())

    ka, kb = keys(a), keys(b)
    shared = [k for k in ka if k in kb]
    if not shared:
        raise CompareRefused(
            f"A and B differ in scorer: no score key in common (A: {', '.join(sorted(ka)) or '-'}"
            f"; B: {', '.join(sorted(kb)) or '-'})")
    opts_a, opts_b = a.scorer_options(), b.scorer_options()
    for key in shared:
        scorer = ka[key]
        if kb[key] != scorer:
            raise CompareRefused(f"A and B differ in scorer: {key} comes from {scorer} in A "
                                 f"and {kb[key]} in B")
        if scorer in opts_a and scorer in opts_b and opts_a[scorer] != opts_b[scorer]:
            raise CompareRefused(
                f"A and B differ in scorer: {scorer} has options "
                f"{json.dumps(opts_a[scorer], sort_keys=True)} in A and "
                f"{json.dumps(opts_b[scorer], sort_keys=True)} in B")
    if wanted:
        missing = [k for k in wanted if k not in shared]
        if missing:
            raise CompareRefused(f"--metric {', '.join(missing)}: not a score key both runs "
                                 f"hold (shared: {', '.join(shared)})")
        shared = list(wanted)
    headline = _headline(a)
    if headline in shared:
        shared.remove(headline)
        shared.insert(0, headline)
    return shared


def _headline(run: Run) -> str | None:
    """The benchmark's headline score key (eval.yaml), when the run's task has one."""
    from harness.evalspec import spec_for_task

    for task in run.tasks:
        found = spec_for_task(task)
        if found is not None:
            return str(found.headline)
    return None


def _lower_is_better(run: Run, key: str) -> bool:
    from harness.evalspec import spec_for_task

    for task in run.tasks:
        found = spec_for_task(task)
        if found is not None:
            return bool(found.lower_is_better(key))
    return False


def _counted(run: Run, key: str) -> pl.DataFrame:
    """(sample_id, epoch, value, answer) of one key under the task's errored policy."""
    rows = with_unreported_keys(run.frame, [key]).filter(pl.col("score_key") == key)
    rows = apply_errored_policy(rows)
    return rows.select("sample_id", "epoch", pl.col("score_value").alias("value"),
                       pl.col("score_answer").alias("answer"))


# --------------------------------------------------------------------------- statistics


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _metric(key: str, pairs: pl.DataFrame, level: float, n_boot: int, seed: int,
            lower: bool) -> dict[str, Any]:
    """Every number of one metric from its paired rows (value_a, value_b per id x epoch)."""
    pairs = pairs.sort("sample_id", "epoch")
    va = pairs["value_a"].to_numpy().astype(np.float64)
    vb = pairs["value_b"].to_numpy().astype(np.float64)
    diff = vb - va
    ids = pairs["sample_id"]
    up = int((diff > 0).sum())
    down = int((diff < 0).sum())
    binary = is_binary(np.concatenate([va, vb]))
    # the leaderboard's cell: per-item means (epochs averaged), paired t over items
    items = (pairs.group_by("sample_id").agg(pl.col("value_a").mean(), pl.col("value_b").mean(),
                                             pl.len().alias("epochs")).sort("sample_id"))
    t_est = paired_difference_ci(items["value_b"], items["value_a"], level=level)
    boot, p_boot = bootstrap_mean_p(diff, cluster=ids, n_boot=n_boot, level=level, seed=seed)
    one_epoch = bool((items["epochs"] == 1).all())
    if binary and one_epoch:
        # independent 0/1 pairs: the exact test and the interval that agrees with it
        exact = mcnemar_exact_ci(up, down, len(diff), level=level)
        p, test, ci = mcnemar_exact_p(up, down), "exact McNemar", (exact.lo, exact.hi)
        ci_method = ("exact: Clopper-Pearson on the discordant pairs (excludes 0 exactly "
                     "when exact McNemar rejects)")
    elif items.height >= MIN_BOOTSTRAP_ITEMS:
        p, test, ci = p_boot, "cluster bootstrap over items", (boot.lo, boot.hi)
        ci_method = f"percentile bootstrap over items ({n_boot} resamples, seed {seed})"
    else:
        p = paired_t_p_value(t_est) if diff.any() else 1.0
        test, ci = "paired t over items", (t_est.lo, t_est.hi)
        ci_method = (f"paired t over per-item means (fewer than {MIN_BOOTSTRAP_ITEMS} items: "
                     "a bootstrap of so few items is too narrow)")
    p_t = paired_t_p_value(t_est)
    # the boards' rule: observed SD of the per-item differences, or the [0, 1] planning SD
    # where the runs agree on every item (never an MDE of 0)
    bounded = bool(np.all((va >= 0) & (va <= 1)) and np.all((vb >= 0) & (vb <= 1)))
    mdd, _, mdd_basis = adjacent_mdd(items["value_b"], items["value_a"], bounded=bounded,
                                     alpha=1 - level)
    return {
        "name": key,
        "difference": float(diff.mean()),
        "ci": [_finite(ci[0]), _finite(ci[1])],
        "p": _finite(p),
        "p_holm": None,
        "mdd": _finite(mdd) if mdd is not None else None,
        "mdd_basis": mdd_basis,
        "flipped_up": up,
        "flipped_down": down,
        "mean_a": float(va.mean()),
        "mean_b": float(vb.mean()),
        "n_pairs": int(len(diff)),
        "n_items": int(items.height),
        "se": _finite(t_est.se),
        "ci_t": [_finite(t_est.lo), _finite(t_est.hi)],
        "ci_method": ci_method,
        "test": test,
        "ci_bootstrap": [_finite(boot.lo), _finite(boot.hi)],
        "p_t": _finite(p_t) if diff.any() else 1.0,
        "binary": binary,
        "lower_is_better": lower,
    }


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _verdict(metric: dict[str, Any], level: float) -> str:
    d, (lo, hi) = metric["difference"], metric["ci"]
    alpha = 1 - level
    p = metric["p_holm"] if metric["p_holm"] is not None else metric["p"]
    counts = f"{metric['flipped_up']} items up, {metric['flipped_down']} down"
    mde = ("MDE " + _num(metric["mdd"]) if metric["mdd"] is not None
           else "MDE not estimable (no spread in the per-item differences)")
    raw = metric["p"]
    if p is not None and p < alpha and d != 0:
        better = (d < 0) if metric["lower_is_better"] else (d > 0)
        # the interval of the size of the change, in the same orientation as "by"
        low, high = (lo, hi) if d > 0 else (None if hi is None else -hi,
                                            None if lo is None else -lo)
        head = (f"{metric['name']}: B {'better' if better else 'worse'} by "
                f"{_num(abs(d))} [{_num(low)}, {_num(high)}]")
    elif d == 0 and metric["flipped_up"] == metric["flipped_down"] == 0:
        head = f"{metric['name']}: no difference (every pair scored the same)"
    else:
        after = (" after Holm across the metrics" if raw is not None and raw < alpha
                 else "")
        head = (f"{metric['name']}: no detectable difference{after}, B - A = {_num(d)} "
                f"[{_num(lo)}, {_num(hi)}] (p {_num(p)})")
    return f"{head}; {counts}; {mde}; n = {metric['n_pairs']} pairs"


# --------------------------------------------------------------------------- items


def _texts(run: Run) -> pl.DataFrame:
    return read_sample_texts(run.log_files).drop("log_file").unique(
        ["sample_id", "epoch"], keep="first")


def _answer(run: Run, sample_id: str, epoch: int, answer: str | None) -> str | None:
    if answer:
        return answer
    for log in run.log_files:
        found = read_sample_output(log, sample_id, epoch)
        if found:
            return found
    return None


def _log_of(run: Run, sample_id: str, epoch: int) -> str | None:
    hit = run.frame.filter((pl.col("sample_id") == sample_id) & (pl.col("epoch") == epoch))
    return str(hit["log_file"][0]) if hit.height else None


def _flipped_items(a: Run, b: Run, pairs: pl.DataFrame, texts: pl.DataFrame
                   ) -> list[dict[str, Any]]:
    moved = (pairs.filter(pl.col("value_a") != pl.col("value_b"))
             .sort("sample_id", "epoch").head(MAX_LISTED)
             .join(texts, on=["sample_id", "epoch"], how="left"))
    out = []
    for row in moved.iter_rows(named=True):
        sid, epoch = str(row["sample_id"]), int(row["epoch"])
        out.append({
            "sample_id": sid, "epoch": epoch,
            "direction": "up" if row["value_b"] > row["value_a"] else "down",
            "a": row["value_a"], "b": row["value_b"],
            "input": row.get("input"), "target": row.get("target"),
            "answer_a": _answer(a, sid, epoch, row["answer_a"]),
            "answer_b": _answer(b, sid, epoch, row["answer_b"]),
            "log_a": _log_of(a, sid, epoch), "log_b": _log_of(b, sid, epoch),
        })
    return out


# --------------------------------------------------------------------------- public


def compare(a: Run, b: Run, *, metrics: Sequence[str] | None = None, level: float = 0.95,
            n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> Comparison:
    """Pair A and B by sample id and epoch and compare every shared score key.

    Raises:
        CompareRefused: No shared item, or the runs differ in scorer (see the module).
    """
    from harness.provenance import compare_provenance

    keys_a = a.frame.select("sample_id", "epoch").unique()
    keys_b = b.frame.select("sample_id", "epoch").unique()
    shared = keys_a.join(keys_b, on=["sample_id", "epoch"], how="inner")
    if shared.height == 0:
        raise CompareRefused(
            f"A and B share no items: no sample id x epoch of {a.label} "
            f"({keys_a.height}) is in {b.label} ({keys_b.height})")
    keys = _common_keys(a, b, metrics)
    texts_a, texts_b = _texts(a), _texts(b)
    warnings, provenance = compare_provenance(a, b, shared, texts_a, texts_b)
    texts = texts_a.join(texts_b.rename({"input": "input_b", "target": "target_b"}),
                         on=["sample_id", "epoch"], how="full", coalesce=True)
    texts = texts.with_columns(pl.col("input").fill_null(pl.col("input_b")),
                               pl.col("target").fill_null(pl.col("target_b"))
                               ).select("sample_id", "epoch", "input", "target")
    out = []
    for key in keys:
        pairs = (_counted(a, key).rename({"value": "value_a", "answer": "answer_a"})
                 .join(_counted(b, key).rename({"value": "value_b", "answer": "answer_b"}),
                       on=["sample_id", "epoch"], how="inner"))
        if pairs.height == 0:
            warnings.append(f"{key}: no pair with a counted value on both sides; left out")
            continue
        metric = _metric(key, pairs, level, n_boot, seed, _lower_is_better(a, key))
        metric["items"] = _flipped_items(a, b, pairs, texts)
        out.append(metric)
    if not out:
        raise CompareRefused("A and B have no score key with a counted value on both sides")
    ps = [m["p"] for m in out]
    known = [i for i, p in enumerate(ps) if p is not None]
    if known:
        adjusted = holm_adjust([ps[i] for i in known])
        for i, value in zip(known, adjusted, strict=True):
            out[i]["p_holm"] = float(value)
    if a.tasks != b.tasks:
        warnings.append(f"task differs: A {', '.join(a.tasks)}, B {', '.join(b.tasks)}")
    unpaired = {"a": keys_a.height - shared.height, "b": keys_b.height - shared.height}
    return Comparison(a, b, shared.height, out, _verdict(out[0], level), warnings,
                      provenance, unpaired, level, _consistency(a, b, out[0], level))


def _consistency(a: Run, b: Run, headline: dict[str, Any], level: float
                 ) -> dict[str, Any] | None:
    """Where both runs have several epochs of a 0/1 headline: each side's pass@k, pass^k
    and flip rate (k: the fewer epochs of the two), from :mod:`harness.consistency`."""
    from harness.consistency import item_consistency, run_consistency

    epochs = [int(r.frame["epoch"].max() or 1) for r in (a, b)]  # type: ignore[arg-type]
    if min(epochs) < 2 or not headline["binary"]:
        return None
    k = min(epochs)
    sides = {}
    for name, run in (("a", a), ("b", b)):
        items = item_consistency(run.frame, headline["name"], k)
        sides[name] = run_consistency(items.with_columns(pl.lit(run.label).alias("log_file")),
                                      level=level)[0]
    return {"metric": headline["name"], "k": k, **sides}


def compare_paths(a: str | Path, b: str | Path, **kwargs: Any) -> Comparison:
    """:func:`compare` of two log files or folders."""
    return compare(load_run(a), load_run(b), **kwargs)


# --------------------------------------------------------------------------- output


def to_text(result: Comparison) -> str:
    """The terminal summary: one line per metric, the verdict, the warnings."""
    lines = [f"A: {result.a.label} ({', '.join(_models(result.a))})",
             f"B: {result.b.label} ({', '.join(_models(result.b))})",
             f"paired: {result.n_paired} sample x epoch (unpaired: A {result.unpaired['a']}, "
             f"B {result.unpaired['b']})", ""]
    header = f"{'metric':<40} {'B-A':>9} {'CI':>21} {'p':>8} {'p_holm':>8} {'MDE':>8} up/down"
    lines.append(header)
    for m in result.metrics:
        ci = f"[{_num(m['ci'][0])}, {_num(m['ci'][1])}]"
        lines.append(f"{m['name'][:40]:<40} {m['difference']:>+9.4f} {ci:>21} "
                     f"{_num(m['p']):>8} {_num(m['p_holm']):>8} {_num(m['mdd']):>8} "
                     f"{m['flipped_up']}/{m['flipped_down']}")
    if result.consistency:
        c = result.consistency
        for side in ("a", "b"):
            flips = c[side]["flip_rate"]
            lines.append(f"{side.upper()} consistency ({c['metric']}, k={c['k']}): pass@k "
                         f"{_num(c[side]['pass_at_k']['mean'])}, pass^k "
                         f"{_num(c[side]['pass_hat_k']['mean'])}, flip rate "
                         f"{_num(flips['mean'])} [{_num(flips['ci'][0])}, "
                         f"{_num(flips['ci'][1])}]")
    lines += ["", f"verdict: {result.verdict}"]
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def _cell(value: Any, limit: int = 600) -> str:
    if value is None:
        return "<span class=muted>-</span>"
    text = str(value)
    if len(text) <= limit:
        return f"<pre>{html.escape(text)}</pre>"
    return (f"<details><summary><pre>{html.escape(text[:limit])}…</pre></summary>"
            f"<pre>{html.escape(text)}</pre></details>")


def _view(log: str | None) -> str:
    if not log:
        return "-"
    path = Path(log).resolve()
    command = f"inspect view --log-dir {path.parent}"
    return (f'<a href="{html.escape(path.as_uri())}">{html.escape(path.name)}</a>'
            f"<br><code>{html.escape(command)}</code>")


def to_html(result: Comparison) -> str:
    """A self-contained page: the metrics table, the verdict, and each metric's flipped
    items with input, target, both answers and the ``inspect view`` command of each log."""
    esc = html.escape
    rows = []
    for m in result.metrics:
        rows.append(
            f"<tr><td>{esc(m['name'])}</td><td>{m['mean_a']:.4g}</td><td>{m['mean_b']:.4g}</td>"
            f"<td>{m['difference']:+.4g}</td><td>[{_num(m['ci'][0])}, {_num(m['ci'][1])}]</td>"
            f"<td>{_num(m['p'])} ({esc(m['test'])})</td><td>{_num(m['p_holm'])}</td>"
            f"<td>{_num(m['mdd'])}</td><td>{m['flipped_up']}</td><td>{m['flipped_down']}</td>"
            f"<td>{m['n_pairs']}</td></tr>")
    sections = []
    for m in result.metrics:
        items = m.get("items") or []
        if not items:
            continue
        body = "".join(
            f"<tr class={it['direction']}><td>{esc(it['sample_id'])}</td><td>{it['epoch']}</td>"
            f"<td>{it['direction']}</td><td>{it['a']:.4g} → {it['b']:.4g}</td>"
            f"<td>{_cell(it['input'])}</td><td>{_cell(it['target'])}</td>"
            f"<td>{_cell(it['answer_a'])}</td><td>{_cell(it['answer_b'])}</td>"
            f"<td>{_view(it['log_a'])}</td><td>{_view(it['log_b'])}</td></tr>"
            for it in items)
        shown = len(items)
        total = m["flipped_up"] + m["flipped_down"]
        note = "" if shown == total else f" (first {shown} of {total})"
        sections.append(
            f"<h2>{esc(m['name'])}: items that changed{note}</h2><table><tr><th>id</th>"
            "<th>epoch</th><th>way</th><th>A → B</th><th>input</th><th>target</th>"
            "<th>answer A</th><th>answer B</th><th>log A</th><th>log B</th></tr>"
            f"{body}</table>")
    warnings = "".join(f"<li>{esc(w)}</li>" for w in result.warnings)
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>harness compare</title>
<style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}}
pre{{white-space:pre-wrap;margin:0;max-width:40em}}tr.up{{background:#eefbea}}
tr.down{{background:#fdeceb}}.muted{{color:#888}}.warn{{color:#a40}}</style></head><body>
<h1>harness compare</h1>
<p>A: <code>{esc(result.a.label)}</code> ({esc(', '.join(_models(result.a)))})<br>
B: <code>{esc(result.b.label)}</code> ({esc(', '.join(_models(result.b)))})<br>
{result.n_paired} sample x epoch pairs (unpaired: A {result.unpaired['a']},
B {result.unpaired['b']}); differences are B - A; {int(result.level * 100)}% intervals.</p>
<p><strong>{esc(result.verdict)}</strong></p>
{f'<ul class=warn>{warnings}</ul>' if warnings else ''}
<table><tr><th>metric</th><th>mean A</th><th>mean B</th><th>B - A</th><th>CI</th><th>p</th>
<th>p (Holm)</th><th>MDE</th><th>up</th><th>down</th><th>pairs</th></tr>{''.join(rows)}</table>
{''.join(sections)}
</body></html>
"""
