"""Committed CausalGame logs rescored under the published protocol, at zero compute.

    harness causalgame rescore LOG_OR_DIR [...] [--json] [--markdown]

Why: under the suite protocol (the default) an episode that ends without a submission is
auto-submitted with its best observed design, or, with an agent that does not auto-submit
(a generic react agent), scored 0 survival; the published leaderboard counts both as
**N/A** (no value, left out of the mean, counted). Every committed real-model agentic
episode of the ladder ended that way, so its suite score is the default design's, not the
model's. Rescoring reads only the logs (``harness.results``): each episode's score
metadata says whether the agent itself submitted; an episode it did not submit becomes
N/A and the rest keep their Stage-2 survival. Reported per run (log file): episodes,
auto-submitted, unsubmitted, N/A under the published protocol with the N/A rate and its
Wilson interval, the suite mean (as logged) and the published mean (submitted episodes
only, the leaderboard's per-cell statistics from :mod:`environments.causalgame.compare`).

The same rule as a scorer, for ``harness rescore`` (new logs instead of a table):
:func:`published_protocol`.

The published protocol also runs the released game (``compat=original``): a suite log run
with ``compat=intended`` is rescored for N/A accounting only, which the ``compat`` column
says.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from benchmarks.causalgame.scorer import ci95, episode_count, episode_mean
from environments.causalgame.compare import run_stats
from harness.results import list_logs, read_results, read_score_metadata
from harness.stats import wilson_ci

SURVIVAL_KEY = "causalgame_scorer/survival"
MODEL_FREE_PROVIDERS = ("none/", "scripted/", "mockllm/")
"""Providers that are no model: reference agents and scripted policies."""


def agent_submitted(meta: Mapping[str, Any], answer_design: Any = None) -> bool:
    """Whether the agent itself submitted a design (not the suite's auto-submission).

    Logs since 1.2.0 record ``submitted`` (a final design exists) and ``auto_submitted``;
    1.0/1.1 logs record only ``auto_submitted``, and there every episode has a final design
    (the suite auto-submitted the rest), so ``submitted`` defaults to True.
    """
    if meta.get("auto_submitted"):
        return False
    submitted = meta.get("submitted")
    return True if submitted is None else bool(submitted)


def episode_rows(path: str | Path) -> list[dict[str, Any]]:
    """One row per (sample, epoch) of one log: scenario, trial, suite and published survival.

    ``suite``: the survival the log holds (None where the log itself is N/A); ``published``:
    the same value where the agent submitted, None (N/A) where it did not.
    """
    frame = read_results(path)
    if frame.height == 0:
        return []
    frame = frame.filter(frame["score_key"] == SURVIVAL_KEY)
    meta = {
        (r["sample_id"], r["epoch"]): json.loads(r["metadata"])
        for r in read_score_metadata(path, "causalgame_scorer").iter_rows(named=True)
    }
    rows = []
    for r in frame.iter_rows(named=True):
        m = meta.get((r["sample_id"], r["epoch"]), {})
        value = None if r["error"] is not None else r["score_value"]
        submitted = agent_submitted(m)
        rows.append({
            "scenario": m.get("scenario", r["sample_id"]), "trial": int(r["epoch"]),
            "suite": value, "published": value if submitted else None,
            "auto_submitted": bool(m.get("auto_submitted")), "agent_submitted": submitted,
            "errored": r["error"] is not None, "protocol": m.get("protocol") or "suite",
            "compat": m.get("compat"),
        })
    return rows


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts, the N/A rate with its Wilson interval, and both protocols' means (percent).

    The published mean is the leaderboard's: per-scenario cell means of the submitted
    trials, then the mean of the cells (``run_stats``); the suite mean is the plain mean of
    the logged values (what the suite's board shows)."""
    n = len(rows)
    n_na = sum(1 for r in rows if r["published"] is None)
    suite_values = [float(r["suite"]) for r in rows if r["suite"] is not None]
    # a log run under the published protocol has no suite value for its N/A episodes (no
    # design was auto-submitted): its suite mean is unknown, not the submitted ones' mean
    suite_known = all(r["suite"] is not None for r in rows if not r["errored"])
    published = run_stats(
        {"scenario": r["scenario"], "trial": r["trial"], "survival": r["published"]}
        for r in rows
    )["avg"]
    na = wilson_ci(n_na, n) if n else None
    return {
        "episodes": n,
        "auto_submitted": sum(1 for r in rows if r["auto_submitted"]),
        "unsubmitted": sum(1 for r in rows if not r["auto_submitted"] and not r["agent_submitted"]),
        "errored": sum(1 for r in rows if r["errored"]),
        "na_published": n_na,
        # unrounded: the table rounds once (a bound rounded to 4 places, then to 2, can land
        # on the other side of the pooled line's, e.g. 0.5650003 -> 0.565 -> "0.56")
        "na_rate": None if na is None else na.estimate,
        "na_ci": None if na is None else [na.lo, na.hi],
        "suite_mean": (round(100 * sum(suite_values) / len(suite_values), 2)
                       if suite_values and suite_known else None),
        "compat": next((r["compat"] for r in rows if r.get("compat")), None),
        "published_mean": published["mean"],
        "published_ci95": published["ci95"],
        "published_cells": published["n_cells"],
    }


def _run_label(frame_row: Mapping[str, Any]) -> dict[str, Any]:
    args = json.loads(frame_row.get("task_args") or "{}")
    tags = [str(t) for t in frame_row.get("tags") or [] if not str(t).startswith("model=")]
    return {"model": frame_row.get("model"), "solver": frame_row.get("solver"),
            "tags": tags,
            "mode": args.get("mode") or "agentic",
            "protocol": args.get("protocol") or "suite", "scenarios": args.get("scenarios"),
            # the reply cap tells apart runs that differ only in budget (the 1.5B's 128 vs 512)
            "max_tokens": args.get("max_tokens")}


def rescore(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """One summary per log file (a run), labelled with its model, solver and task args."""
    out = []
    for path in list_logs(list(paths)):
        frame = read_results(path)
        if frame.height == 0 or SURVIVAL_KEY not in set(frame["score_key"].to_list()):
            continue
        rows = episode_rows(path)
        if not rows:
            continue
        summary = summarise(rows)
        summary["compat"] = summary["compat"] or json.loads(
            frame["task_args"][0] or "{}").get("compat")
        out.append({"log": str(path), **_run_label(frame.row(0, named=True)), **summary})
    return out


@scorer(metrics={"survival": [episode_mean("survival"), ci95("survival")],
                 "na": [episode_count("na")]})
def published_protocol() -> Scorer:
    """The published protocol's value of a stored episode, as a scorer for ``harness
    rescore ... --scorer benchmarks/causalgame/rescore.py@published_protocol --action
    append``: the logged survival where the agent itself submitted, N/A (null, ``na`` 1)
    where it did not (:func:`agent_submitted`, the rule of this module's table). Reads the
    episode's ``causalgame_scorer`` score, so it needs the old scores kept (append)."""

    async def score(state: TaskState, target: Target) -> Score:
        old = (state.scores or {}).get("causalgame_scorer")
        if old is None:
            raise ValueError("published_protocol re-scores a causalgame_scorer score: run "
                             "harness rescore with --action append")
        value = old.value if isinstance(old.value, dict) else {}
        meta = old.metadata or {}
        submitted = agent_submitted(meta)
        survival = value.get("survival")
        kept = survival if submitted and survival is not None else None
        return Score(value={"survival": kept, "na": float(kept is None)},
                     answer=old.answer,
                     explanation=("agent submitted" if submitted else
                                  "auto-submitted" if meta.get("auto_submitted") else
                                  "no submission") + ": "
                     + ("N/A under the published protocol" if kept is None
                        else f"survival {float(kept) * 100:.1f}%"),
                     metadata={"agent_submitted": submitted,
                               "auto_submitted": bool(meta.get("auto_submitted"))})

    return score


def pooled(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per mode, all runs together: episodes, N/A under the published protocol, its rate
    and Wilson interval (the share of episodes the published protocol cannot score)."""
    out = []
    for mode in sorted({str(r["mode"]) for r in runs}):
        group = [r for r in runs if r["mode"] == mode]
        n = sum(int(r["episodes"]) for r in group)
        na = sum(int(r["na_published"]) for r in group)
        ci = wilson_ci(na, n)
        out.append({"mode": mode, "runs": len(group), "episodes": n, "na_published": na,
                    "auto_submitted": sum(int(r["auto_submitted"]) for r in group),
                    "na_rate": ci.estimate, "na_ci": [ci.lo, ci.hi]})
    return out


def _fmt(value: Any, digits: int = 1) -> str:
    return "—" if value is None else f"{float(value):.{digits}f}"


def to_markdown(runs: Sequence[Mapping[str, Any]]) -> str:
    """The runs as one table: both protocols side by side with the N/A counts."""
    lines = [
        "| model | solver | mode | compat | logged protocol | reply cap | episodes | "
        "auto-submitted | unsubmitted | suite survival % | published survival % (± 95% t) | "
        "N/A (published) | N/A rate [95% Wilson] |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        ci = r["na_ci"]
        rate = "—" if r["na_rate"] is None else (
            f"{r['na_rate']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]")
        tags = f" ({', '.join(r['tags'])})" if r.get("tags") else ""
        pub = _fmt(r["published_mean"])
        if r["published_ci95"] is not None:
            pub += f" ± {_fmt(r['published_ci95'])}"
        lines.append(
            f"| {r['model']} | {r['solver']}{tags} | {r['mode']} | {r['compat'] or '—'} | "
            f"{r['protocol']} | {r.get('max_tokens') or 'default'} | {r['episodes']} | "
            f"{r['auto_submitted']} | {r['unsubmitted']} | "
            f"{_fmt(r['suite_mean'])} | {pub} | {r['na_published']} | {rate} |")
    for p in pooled(runs):
        lines.append(
            f"\nAll {p['mode']} runs above: {p['episodes']} episodes in {p['runs']} runs, "
            f"{p['auto_submitted']} auto-submitted, {p['na_published']} N/A under the "
            f"published protocol: {p['na_rate']:.2f} [{p['na_ci'][0]:.2f}, "
            f"{p['na_ci'][1]:.2f}] (95% Wilson).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("logs", nargs="+", help="log files or folders of Inspect logs")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument("--real-models", action="store_true",
                        help="only runs of a model (drop the model-free reference agents)")
    args = parser.parse_args(argv)
    runs = rescore(args.logs)
    if args.real_models:
        runs = [r for r in runs
                if not str(r["model"] or "none/").startswith(MODEL_FREE_PROVIDERS)]
    if not runs:
        print(f"no CausalGame runs under {' '.join(args.logs)}", file=sys.stderr)
        return 1
    print(json.dumps(runs, indent=1) if args.json else to_markdown(runs))
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    sys.exit(guarded(main))
