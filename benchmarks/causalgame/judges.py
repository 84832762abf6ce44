"""Re-judge logged CausalGame episodes with three judges and report their agreement (ICC).

    python -m benchmarks.causalgame.judges LOG [LOG ...] \\
        --judges "embedded/smollm2-135m;n_ctx=8192,embedded/qwen2.5-coder-0.5b,..." \\
        [--limit 4] [--budget 6000] --out judgements.json

Each episode's trajectory (every message, tool call and result, as the scorer summarises
it), its final report and the scenario's ground-truth report go to every judge (the same
prompt the scorer uses); the judges' per-criterion verdicts (with reasoning and evidence)
are averaged as the published rubric averages its three judges, each episode gets its
failure pattern, and the intraclass correlation across the judges is computed on the
criterion scores (items = episode x criterion) and on the weighted 16-point scores (items
= episodes). Logs are read through ``harness.results``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai.model import ChatMessage, GenerateConfig, get_model
from pydantic import TypeAdapter

from benchmarks.causalgame.scorer import (
    JUDGE_RETRIES,
    judge_episode,
    parse_judgement,
    trajectory_summary,
)
from environments.causalgame.rubric import (
    CRITERIA_IDS,
    failure_mode,
    mean_verdicts,
    mode_distribution,
    weighted_score,
)
from harness.results import list_logs, read_results, read_sample_messages, read_score_metadata
from harness.stats import icc_bootstrap, wilson_ci

LADDER_JUDGES = ("embedded/smollm2-135m;n_ctx=8192", "embedded/qwen2.5-coder-0.5b",
                 "embedded/qwen2.5-coder-1.5b")
"""The offline default panel (the ladder's rungs); any Inspect model works in its place:
an API model (``openai/...``), a served one (``openai-api/local/<name>`` against
``harness serve``)."""

_MESSAGES = TypeAdapter(list[ChatMessage])


def parse_judge(spec: str) -> tuple[str, dict[str, Any]]:
    """``"provider/model;key=value;..."`` -> (model name, model args; ints parsed)."""
    name, *pairs = [p.strip() for p in spec.split(";") if p.strip()]
    args: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        args[key.strip()] = int(value) if value.strip().isdigit() else value.strip()
    return name, args


def episodes(paths: list[str], limit: int | None = None) -> list[dict[str, Any]]:
    """The logged episodes (log file, sample id, epoch, scenario, compat, final, report)."""
    out = []
    for path in list_logs(paths):
        frame = read_results(path)
        if frame.height == 0 or not frame["task"][0].startswith("causalgame"):
            continue
        values = {
            (r["sample_id"], r["epoch"], r["score_key"]): r["score_value"]
            for r in frame.iter_rows(named=True)
        }
        meta = read_score_metadata(path, "causalgame_scorer")
        for r in meta.iter_rows(named=True):
            m = json.loads(r["metadata"])
            survival = values.get((r["sample_id"], r["epoch"], "causalgame_scorer/survival"))
            victory = values.get((r["sample_id"], r["epoch"], "causalgame_scorer/victory"))
            final = None if survival is None else {
                "survival_rate": f"{100 * survival:.1f}%", "victory": bool(victory)}
            out.append({"log_file": r["log_file"], "sample_id": r["sample_id"],
                        "epoch": r["epoch"], "scenario": m.get("scenario", r["sample_id"]),
                        "compat": m.get("compat", "intended"), "final": final})
    return out[:limit] if limit else out


def _trajectory(ep: dict[str, Any], budget: int) -> tuple[str, str]:
    messages = _MESSAGES.validate_python(
        read_sample_messages(ep["log_file"], ep["sample_id"], ep["epoch"])
    )
    report = messages[-1].text if messages and messages[-1].role == "assistant" else ""
    return trajectory_summary(messages[:-1], budget), report


async def judge_all(eps: list[dict[str, Any]], judge_names: list[str], budget: int,
                    max_tokens: int, retries: int = JUDGE_RETRIES,
                    constrained: bool = True) -> list[dict[str, Any]]:
    """Every episode judged by every judge (one model at a time, in order); each judge
    answers through the forced verdict tool (``constrained``) and is retried for what it
    left unreadable."""
    config = GenerateConfig(max_tokens=max_tokens, temperature=0.0)
    judges = [get_model(name, config=config, **args)
              for name, args in map(parse_judge, judge_names)]
    results = []
    for ep in eps:
        trajectory, report = _trajectory(ep, budget)
        start = time.perf_counter()
        judgements = await judge_episode(judges, ep["scenario"], ep["compat"], report,
                                         trajectory, ep["final"], retries, constrained)
        per_judge = [{k: v["score"] for k, v in j["criteria"].items()} for j in judgements]
        mean = mean_verdicts(per_judge)
        results.append({**ep, "seconds": round(time.perf_counter() - start, 1),
                        "judgements": judgements, "verdicts": mean,
                        "rubric": weighted_score(mean), "failure_mode": failure_mode(mean),
                        "per_judge_rubric": [weighted_score(v) for v in per_judge]})
    return results


def reparse(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Recompute verdicts, means and patterns from the stored raw replies (no model calls)."""
    out = []
    for r in results:
        judgements = [{**j, "criteria": parse_judgement(j["raw"])} for j in r["judgements"]]
        per_judge = [{k: v["score"] for k, v in j["criteria"].items()} for j in judgements]
        mean = mean_verdicts(per_judge)
        out.append({**r, "judgements": judgements, "verdicts": mean,
                    "rubric": weighted_score(mean), "failure_mode": failure_mode(mean),
                    "per_judge_rubric": [weighted_score(v) for v in per_judge]})
    return out


def summarise(names: list[str], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Agreement, failure patterns and the mean rubric of judged episodes."""
    return {"judges": names, "episodes": len(results), "agreement": agreement(results),
            "failure_modes": mode_distribution([r["failure_mode"] for r in results]),
            "mean_rubric": float(np.mean([r["rubric"] for r in results]))}


def agreement(results: list[dict[str, Any]]) -> dict[str, Any]:
    """ICC across judges: criterion level (episode x criterion) and episode level."""
    crit = np.array([
        [j["criteria"][c]["score"] for j in r["judgements"]]
        for r in results for c in CRITERIA_IDS
    ], dtype=float)
    episode = np.array([r["per_judge_rubric"] for r in results], dtype=float)
    missing = sum(
        j["criteria"][c]["verdict"] == "MISSING"
        for r in results for j in r["judgements"] for c in CRITERIA_IDS
    )
    by_judge: dict[str, int] = {}
    for r in results:
        for j in r["judgements"]:
            by_judge[j["judge"]] = by_judge.get(j["judge"], 0) + sum(
                j["criteria"][c]["verdict"] == "MISSING" for c in CRITERIA_IDS)
    returned = wilson_ci(int(crit.size - missing), int(crit.size)) if crit.size else None
    return {"criterion_level": icc_bootstrap(crit), "episode_level": icc_bootstrap(episode),
            "missing_verdicts": int(missing), "ratings": int(crit.size),
            "returned_share": None if returned is None else returned.estimate,
            "returned_ci": None if returned is None else [returned.lo, returned.hi],
            "missing_by_judge": by_judge,
            "attempts": sum(int(j.get("attempts", 1)) for r in results
                            for j in r["judgements"])}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("logs", nargs="*")
    parser.add_argument("--judges", default=",".join(LADDER_JUDGES),
                        help="three (or more) models, comma list; 'name;key=value' passes "
                             "model args (default: the ladder's three rungs)")
    parser.add_argument("--retries", type=int, default=JUDGE_RETRIES,
                        help="extra attempts for the criteria a reply left unreadable")
    parser.add_argument("--free", action="store_true",
                        help="free-text JSON replies instead of the forced verdict tool")
    parser.add_argument("--reparse", help="a judgements file: re-read its stored replies")
    parser.add_argument("--limit", type=int, default=None, help="first N episodes only")
    parser.add_argument("--budget", type=int, default=6000, help="trajectory characters")
    parser.add_argument("--max-tokens", type=int, default=700)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.reparse:
        done = json.loads(Path(args.reparse).read_text(encoding="utf-8"))
        results = reparse(done["results"])
        summary = summarise(done["summary"]["judges"], results)
        Path(args.out).write_text(json.dumps({"summary": summary, "results": results},
                                             indent=1), encoding="utf-8")
        print(json.dumps(summary, indent=1))
        return 0
    if not args.logs:
        parser.error("give LOG... (or --reparse FILE)")
    eps = episodes(args.logs, args.limit)
    if not eps:
        print("no CausalGame episodes found", file=sys.stderr)
        return 1
    names = [n.strip() for n in args.judges.split(",") if n.strip()]
    results = asyncio.run(judge_all(eps, names, args.budget, args.max_tokens, args.retries,
                                    not args.free))
    summary = summarise(names, results)
    Path(args.out).write_text(json.dumps({"summary": summary, "results": results}, indent=1),
                              encoding="utf-8")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    sys.exit(guarded(main))
