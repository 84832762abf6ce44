"""Check every offline task end to end: build the image, run oracle and noop, print JSON.

    python -m environments.formulacode.validate [--task ID] [--rounds 5] [--json]

For each task, one grading run in the task-family container times four trees interleaved:
baseline, expert, ``oracle`` (a second copy of the expert's patch, graded as an agent) and
``noop`` (an empty patch), plus a timed-only ``control`` copy of the base that calibrates
the noise floor. So ``oracle_advantage`` and ``noop_speedup`` are real measurements of
identical code, and ``cv`` is the timing noise of the baseline (median over workloads of
the coefficient of variation of its per-round medians; ``workload_cv`` gives the median
and the share of workloads within the CV target). ``oracle_significant`` /
``noop_significant``: the task speedup's bootstrap CI excludes 1 and it lies outside the
noise floor; ``oracle_advantage_ci`` should cover 0. ``tests_pass`` is the oracle passing
the gate (tests and snapshots).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from typing import Any

from environments.formulacode import metrics
from environments.formulacode.grader import (
    REMOTE_RUNTIME,
    GradeSettings,
    grade_config,
    parse_result,
    runtime_sources,
)
from environments.formulacode.images import REPOS_IN_IMAGE, Container, ensure_family_image
from environments.formulacode.records import TaskRecord, load_records


def validate_task(box: Container, record: TaskRecord, settings: GradeSettings) -> dict[str, Any]:
    """Grade oracle and noop on one pack task inside ``box``; returns the summary row."""
    settings = settings.for_task(record.extra)
    slug = record.extra["pack_slug"]
    repo, work = f"/workspace/{slug}", f"/tmp/fc_validate/{slug}"
    box.exec(["rm", "-rf", repo, work])
    box.exec(["cp", "-a", f"{REPOS_IN_IMAGE}/{slug}", repo])
    box.write(f"{work}/expert.patch", record.patch)
    box.write(f"{work}/empty.patch", "")
    cfg = grade_config(repo, f"{work}/expert.patch",
                       {"oracle": {"patch": f"{work}/expert.patch"},
                        "noop": {"patch": f"{work}/empty.patch"}},
                       settings, work=f"{work}/trees")
    box.write(f"{work}/config.json", json.dumps(cfg))
    done = box.exec(["python3", f"{REMOTE_RUNTIME}/fc_grade.py", f"{work}/config.json"],
                    timeout=3600)
    result = parse_result(done.stdout)
    oracle, noop = metrics.evaluate(result, "oracle"), metrics.evaluate(result, "noop")
    box.exec(["rm", "-rf", repo, work])
    baseline = (result.get("trees") or {}).get("baseline", {})
    return {
        "oracle_speedup": oracle["speedup"],
        "oracle_advantage": oracle["advantage_overall"],
        # G(a)/G(o) - 1: the same comparison without the expert's scale (a 100x expert
        # turns 1% timing noise into an absolute advantage of 1)
        "oracle_relative_advantage": oracle["speedup"] / oracle["expert_speedup"] - 1
        if oracle.get("expert_speedup") else math.nan,
        "noop_cv": metrics.round_cv((result.get("trees") or {}).get("noop", {})),
        "grading_seconds": result.get("timing_seconds"),
        "noop_speedup": noop["speedup"],
        "oracle_advantage_ci": oracle.get("advantage_ci"),
        "oracle_advantage_ratio": oracle.get("advantage_ratio_overall"),
        "oracle_advantage_raw": oracle.get("advantage_raw_overall"),
        "oracle_significant": bool(oracle.get("speedup_significant")),
        "noop_significant": bool(noop.get("speedup_significant")),
        "noop_significant_workloads": noop.get("significant_workloads"),
        "noise_floor": oracle.get("noise_floor"),
        "cv": metrics.round_cv(baseline) if baseline else math.nan,
        "workload_cv": workload_cv_summary(baseline, settings.cv_target),
        "rounds": result.get("rounds"),
        "tests_pass": bool(oracle.get("success")),
        "noop_pass": bool(noop.get("success")),
        "workloads": oracle["num_valid_benchmarks"],
        "infra_failure": oracle["failure"] if oracle["infra_failure"] else None,
        "load": [result.get("load_before"), result.get("load_after")],
    }


def workload_cv_summary(tree: dict[str, Any], target: float) -> dict[str, Any]:
    """Median achieved CV over the tree's workloads and the share at or below ``target``."""
    cvs = sorted(v for v in (tree.get("cv") or {}).values()
                 if isinstance(v, float) and math.isfinite(v))
    if not cvs:
        return {"median": math.nan, "share_within_target": math.nan, "n": 0}
    mid = len(cvs) // 2
    median = cvs[mid] if len(cvs) % 2 else (cvs[mid - 1] + cvs[mid]) / 2
    return {"median": median, "share_within_target": sum(c <= target for c in cvs) / len(cvs),
            "n": len(cvs)}


def run(task: str | None, settings: GradeSettings) -> dict[str, Any]:
    """Validate one task (id or pack slug) or all of them."""
    records = load_records("pack")
    if task:
        records = [r for r in records if task in (r.task_id, r.extra.get("pack_slug"))]
        if not records:
            raise SystemExit(f"unknown task {task!r}")
    image = ensure_family_image()
    out: dict[str, Any] = {"tasks": {}}
    t0 = time.time()
    with Container(image) as box:
        for name, text in runtime_sources().items():
            box.write(f"{REMOTE_RUNTIME}/{name}", text)
        for record in records:
            out["tasks"][record.task_id] = validate_task(box, record, settings)
            print(f"[validate] {record.task_id}: {out['tasks'][record.task_id]}",
                  file=sys.stderr)
    out["settings"] = {"rounds": settings.rounds, "repeat": settings.repeat,
                       "max_rounds": settings.max_rounds, "cv_target": settings.cv_target,
                       "timer": settings.timer, "image": image,
                       "seconds": round(time.time() - t0, 1), "loadavg_end": os.getloadavg()}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m environments.formulacode.validate")
    parser.add_argument("--task", default=None, help="task id or pack slug (default: all)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-rounds", type=int, default=10,
                        help="calibration: extra rounds for workloads above --cv-target")
    parser.add_argument("--cv-target", type=float, default=0.02)
    parser.add_argument("--timer", choices=("task", "process_cpu", "process", "wall"),
                        default="task", help="task = each task's declared timer")
    parser.add_argument("--json", action="store_true", help="print JSON (the default output)")
    args = parser.parse_args(argv)
    result = run(args.task, GradeSettings(rounds=args.rounds, repeat=args.repeat,
                                          timer=args.timer, max_rounds=args.max_rounds,
                                          cv_target=args.cv_target, controls=["control"]))
    print(json.dumps(result, indent=2 if not args.json else None, default=str))
    ok = all(t["tests_pass"] and t["oracle_speedup"] > 1.05 for t in result["tasks"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
