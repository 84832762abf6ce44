"""Check every offline task end to end: build the image, run oracle and noop, print JSON.

    python -m benchmarks.formulacode.validate [--tasks ID,SLUG,...] [--rounds 5] [--json]
                                             [--local]

(``python -m environments.formulacode.validate`` is the same command: it hands over to this
module, which lives in the benchmark layer because its statistics come from
``harness.stats``, which environments may not import.)

``--local`` runs the same in-container runtime as a subprocess on this machine, on each
task materialised in a temporary directory (no docker; the host's Python and numpy).

For each task, one grading run in the task-family container times four trees interleaved:
baseline, expert, ``oracle`` (a second copy of the expert's patch, graded as an agent) and
``noop`` (an empty patch), plus a timed-only ``control`` copy of the base that calibrates
the noise floor. So ``oracle_advantage`` and ``noop_speedup`` are real measurements of
identical code. ``cv`` is the median over the baseline's workloads of the CV of each
workload's measured value (the relative standard error of its per-round medians; what the
calibration rounds bring down); ``workload_cv`` gives that median and the share of
workloads within the CV target; ``dispersion`` / ``workload_dispersion`` are the same for
the round-to-round CV of the medians (the machine's between-process noise, which more
rounds do not lower). ``oracle_significant`` /
``noop_significant``: the task speedup's bootstrap CI excludes 1 and it lies outside the
noise floor; ``oracle_advantage_ci`` should cover 0. ``tests_pass`` is the oracle passing
the gate (tests and snapshots).

Measures (issue 46): each task declares ``measure`` (``cycles`` or ``wall``). A cycles task
is graded on callgrind-simulated cycles (``--cycles-rounds`` rounds, default 1: it is
deterministic; each round at a layout of its own shared by the round's trees), whatever
the load, with no ``control`` tree. Its workload CV is measured across fresh processes of
the same code: the baseline and the ``noop`` copy (and every further round), so a
one-round run has one. A wall task is graded
only when ``host_noise.probe`` finds the host quiet just before it; otherwise its row says
``not graded: host noise X%`` (counted in the acceptance, never averaged in as a number).
``--grade-noisy-wall`` grades it anyway (diagnostics). The ``headline`` block is the
geometric mean oracle speedup over the graded tasks, each in its own measure, and says so.

The JSON ends with an ``acceptance`` block (:mod:`.acceptance`: each criterion of issue 21
with its value, threshold, pass/fail and failing tasks); the exit code is 0 only when every
criterion passes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.formulacode.grading import evaluate
from environments.formulacode import acceptance, host_noise, metrics
from environments.formulacode.grader import (
    REMOTE_RUNTIME,
    GradeSettings,
    grade_config,
    grade_local,
    parse_result,
    runtime_sources,
)
from environments.formulacode.images import REPOS_IN_IMAGE, Container, ensure_family_image
from environments.formulacode.pack import materialize
from environments.formulacode.records import TaskRecord, load_records


def not_graded_row(record: TaskRecord, probe: dict[str, Any]) -> dict[str, Any]:
    """The row of a wall task skipped because the host was not quiet (the probe's figure)."""
    return {"not_graded": f"host noise {probe['max_cv']:.1%}",
            "host_noise_cv": probe["max_cv"], "quiet_cv": probe["quiet_cv"],
            "timer": "wall", "measure": "wall", "kind": record.extra.get("kind"),
            "infra_failure": None}


def wall_gate(record: TaskRecord, settings: GradeSettings,
              grade_noisy: bool = False) -> dict[str, Any] | None:
    """The not-graded row when ``record`` is wall-timed and the host is not quiet now
    (None: grade it). The probe runs on the CPUs the task's wall timer would use."""
    if settings.for_task(record.extra).timer != "wall" or grade_noisy:
        return None
    probe = host_noise.probe()
    return None if probe["quiet"] else not_graded_row(record, probe)


def headline(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The run's headline: geometric mean oracle speedup over the graded tasks, each task
    in its own measure (cycles for cycles tasks, wall for wall tasks), with the count of
    each and of the tasks not graded."""
    graded = {t: r for t, r in rows.items() if not r.get("not_graded")
              and not r.get("infra_failure")}
    by_measure: dict[str, int] = {}
    for r in graded.values():
        key = str(r.get("timer"))
        by_measure[key] = by_measure.get(key, 0) + 1
    speedups = [float(r["oracle_speedup"]) for r in graded.values()
                if isinstance(r.get("oracle_speedup"), int | float)]
    return {"oracle_speedup_geomean": metrics.geomean(speedups) if speedups else math.nan,
            "tasks_by_measure": by_measure,
            "not_graded": sum(1 for r in rows.values() if r.get("not_graded")),
            "note": "each task in its declared measure: simulated cycles for cycles tasks, "
                    "wall clock (quiet host only) for wall tasks"}


def task_settings(record: TaskRecord, settings: GradeSettings) -> GradeSettings:
    """The task's settings; a cycles task times no ``control`` copy: the ``noop``
    candidate is already a fresh-process copy of the base (a cycles tree costs minutes)."""
    settings = settings.for_task(record.extra)
    return replace(settings, controls=[]) if settings.timer == "cycles" else settings


def validate_task(box: Container, record: TaskRecord, settings: GradeSettings,
                  raw_dir: Path | None = None) -> dict[str, Any]:
    """Grade oracle and noop on one pack task inside ``box``; returns the summary row."""
    settings = task_settings(record, settings)
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
    box.exec(["rm", "-rf", repo, work])
    return graded(record, result, settings, raw_dir)


def validate_task_local(record: TaskRecord, settings: GradeSettings,
                        raw_dir: Path | None = None) -> dict[str, Any]:
    """The same grading run as :func:`validate_task`, as a subprocess on this machine."""
    settings = task_settings(record, settings)
    with tempfile.TemporaryDirectory(prefix="fc-validate-") as tmp:
        root = Path(tmp)
        repo = materialize(record.extra["pack_slug"], root / "repo")
        (root / "empty.patch").write_text("")
        (root / "oracle.patch").write_text(record.patch)
        result = grade_local(repo, record.patch,
                             {"oracle": {"patch": str(root / "oracle.patch")},
                              "noop": {"patch": str(root / "empty.patch")}},
                             settings, root / "work")
    return graded(record, result, settings, raw_dir)


def graded(record: TaskRecord, result: dict[str, Any], settings: GradeSettings,
           raw_dir: Path | None = None) -> dict[str, Any]:
    """The summary row of a task's raw grading result; the raw result is also written to
    ``raw_dir`` (when given), so ``--regrade`` can recompute every statistic later without
    timing anything again."""
    if raw_dir is not None:
        raw_dir.mkdir(parents=True, exist_ok=True)
        (raw_dir / f"{record.extra['pack_slug']}.json").write_text(
            json.dumps({"task_id": record.task_id, "kind": record.extra.get("kind"),
                        "result": result}, default=str))
    return {**summarise(result, settings), "kind": record.extra.get("kind")}


def summarise(result: dict[str, Any], settings: GradeSettings) -> dict[str, Any]:
    """The summary row of one task's grading result (oracle and noop candidates)."""
    oracle, noop = evaluate(result, "oracle"), evaluate(result, "noop")
    baseline = (result.get("trees") or {}).get("baseline", {})
    if result.get("timer") == "cycles":
        baseline = fresh_processes(result)
    cvs = {wl: v for wl, v in metrics.workload_cvs(baseline).items() if math.isfinite(v)}
    dispersions = {wl: v for wl, v in metrics.workload_dispersions(baseline).items()
                   if math.isfinite(v)}
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
        "cv": workload_cv_summary(cvs, settings.cv_target)["median"],
        "dispersion": metrics.round_cv(baseline) if baseline else math.nan,
        "workload_cv": workload_cv_summary(cvs, settings.cv_target),
        "workload_dispersion": workload_cv_summary(dispersions, settings.cv_target),
        # every workload's achieved CV: the acceptance pools them over the whole pack
        "baseline_workload_cv": cvs,
        "baseline_workload_dispersion": dispersions,
        "rounds": result.get("rounds"),
        "tests_pass": bool(oracle.get("success")),
        "noop_pass": bool(noop.get("success")),
        "workloads": oracle["num_valid_benchmarks"],
        "infra_failure": oracle["failure"] if oracle["infra_failure"] else None,
        "load": [result.get("load_before"), result.get("load_after")],
        "timer": result.get("timer"),
        "measure": result.get("timer"),
        "expert_workload_speedups": expert_workload_speedups(result),
        "cycles_counts": cycles_counts(result),
    }


def expert_workload_speedups(result: dict[str, Any]) -> dict[str, float]:
    """Per workload: median baseline / median expert (lower-is-better kinds; time or bytes)."""
    trees = result.get("trees") or {}
    base = (trees.get("baseline") or {}).get("samples") or {}
    expert = (trees.get("expert") or {}).get("samples") or {}
    out: dict[str, float] = {}
    for wl, b in base.items():
        e = expert.get(wl)
        if not b or not e:
            continue
        mb, me = sorted(b)[len(b) // 2], sorted(e)[len(e) // 2]
        if mb > 0 and me > 0:
            out[wl] = mb / me
    return out


def fresh_processes(result: dict[str, Any]) -> dict[str, Any]:
    """A cycles run's baseline with its copies (``control`` trees, the ``noop`` candidate)
    as further rounds: every value is the same code measured in a fresh process, so the
    CV over them is the measure's process-to-process CV, which a one-round run has no
    other way to show."""
    trees = result.get("trees") or {}
    base = trees.get("baseline") or {}
    copies = [trees[c] for c in dict.fromkeys([*(result.get("controls") or []), "noop"])
              if c in trees]
    medians: dict[str, list[Any]] = {}
    for wl, vals in (base.get("round_medians") or {}).items():
        medians[wl] = list(vals) + [v for c in copies
                                    for v in (c.get("round_medians") or {}).get(wl, [])]
    return {**base, "round_medians": medians}


def cycles_counts(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per workload of a cycles run, baseline and expert: the first round's simulated
    cycles with the instructions and L1/LL misses beside them (empty for other timers)."""
    out: dict[str, dict[str, Any]] = {}
    for name in ("baseline", "expert"):
        tree = (result.get("trees") or {}).get(name) or {}
        for wl, runs in (tree.get("cycles") or {}).items():
            if runs:
                first = runs[0]
                out.setdefault(wl, {})[name] = {k: first.get(k) for k in
                                                ("cycles", "ir", "l1_misses", "ll_misses")}
    return out


def workload_cv_summary(per_workload: dict[str, float], target: float) -> dict[str, Any]:
    """Median over workloads and the share at or below ``target``."""
    cvs = sorted(v for v in per_workload.values() if isinstance(v, float) and math.isfinite(v))
    if not cvs:
        return {"median": math.nan, "share_within_target": math.nan, "n": 0}
    mid = len(cvs) // 2
    median = cvs[mid] if len(cvs) % 2 else (cvs[mid - 1] + cvs[mid]) / 2
    return {"median": median, "share_within_target": sum(c <= target for c in cvs) / len(cvs),
            "n": len(cvs)}


def select(records: list[TaskRecord], tasks: str | None) -> list[TaskRecord]:
    """The records named in ``tasks`` (comma-separated ids or pack slugs; None = all)."""
    if not tasks:
        return records
    wanted = [t.strip() for t in tasks.split(",") if t.strip()]
    unknown = [t for t in wanted
               if not any(t in (r.task_id, r.extra.get("pack_slug")) for r in records)]
    if unknown:
        raise SystemExit(f"unknown task(s) {', '.join(map(repr, unknown))}")
    return [r for r in records if r.task_id in wanted or r.extra.get("pack_slug") in wanted]


def run(tasks: str | None, settings: GradeSettings, local: bool = False,
        raw_dir: Path | None = None, grade_noisy_wall: bool = False) -> dict[str, Any]:
    """Validate the named tasks (ids or pack slugs, comma-separated) or all of them;
    ``local`` grades on this machine instead of in the task-family container."""
    records = select(load_records("pack"), tasks)
    out: dict[str, Any] = {"tasks": {}}
    t0 = time.time()
    load_start = os.getloadavg()
    noise_start = host_noise.probe()
    if not noise_start["quiet"]:
        print(f"[validate] warning: this machine is not quiet (a fixed loop varies by "
              f"{noise_start['max_cv']:.1%} on some CPU, bound {host_noise.QUIET_CV:.0%}); "
              "clock timings will be noisy (cycles tasks are not affected; wall tasks are "
              "probed again before each and not graded while it stays noisy)",
              file=sys.stderr, flush=True)
    image = "local" if local else ensure_family_image()

    def report(record: TaskRecord, row: dict[str, Any]) -> None:
        out["tasks"][record.task_id] = row
        if row.get("not_graded") and raw_dir is not None:  # kept for --regrade
            raw_dir.mkdir(parents=True, exist_ok=True)
            (raw_dir / f"{record.extra['pack_slug']}.json").write_text(json.dumps(
                {"task_id": record.task_id, "not_graded": True, "row": row}))
        print(f"[validate] {record.task_id}: {row}", file=sys.stderr, flush=True)

    if local:
        for record in records:
            skipped = wall_gate(record, settings, grade_noisy_wall)
            report(record, skipped or validate_task_local(record, settings, raw_dir))
    else:
        with Container(image) as box:
            for name, text in runtime_sources().items():
                box.write(f"{REMOTE_RUNTIME}/{name}", text)
            for record in records:
                skipped = wall_gate(record, settings, grade_noisy_wall)
                report(record, skipped or validate_task(box, record, settings, raw_dir))
    out["settings"] = {"rounds": settings.rounds, "repeat": settings.repeat,
                       "max_rounds": settings.max_rounds, "cv_target": settings.cv_target,
                       "sample_budget": settings.sample_budget,
                       "timer": settings.timer, "cycles_rounds": settings.cycles_rounds,
                       "grade_noisy_wall": grade_noisy_wall, "image": image, "local": local,
                       "python": sys.version.split()[0], "numpy": _numpy_version(),
                       "seconds": round(time.time() - t0, 1), "loadavg_start": load_start,
                       "loadavg_end": os.getloadavg(), "niceness": os.nice(0)}
    noise = [noise_start, host_noise.probe()]
    out["settings"]["host_noise"] = {"start": noise[0], "end": noise[1]}
    out["headline"] = headline(out["tasks"])
    out["acceptance"] = acceptance.check(out["tasks"], cv_target=settings.cv_target,
                                         host_noise=noise)
    return out


def regrade(raw_dir: Path, settings: GradeSettings) -> dict[str, Any]:
    """The validate output recomputed from saved raw results (``--raw-dir``): the same
    summary rows and acceptance block, with no timing. ``settings`` supplies only what the
    statistics read (the CV target); the measurement settings are the saved run's."""
    files = sorted(raw_dir.glob("*.json"))
    if not files:
        raise SystemExit(f"--regrade: no raw results (*.json) in {raw_dir}")
    out: dict[str, Any] = {"tasks": {}}
    for path in files:
        saved = json.loads(path.read_text())
        if saved.get("not_graded"):
            out["tasks"][saved["task_id"]] = saved["row"]
            continue
        out["tasks"][saved["task_id"]] = {**summarise(saved["result"], settings),
                                          "kind": saved.get("kind")}
    out["settings"] = {"regraded_from": str(raw_dir), "cv_target": settings.cv_target}
    out["headline"] = headline(out["tasks"])
    out["acceptance"] = acceptance.check(out["tasks"], cv_target=settings.cv_target)
    return out


def _numpy_version() -> str:
    done = subprocess.run([sys.executable, "-c", "import numpy; print(numpy.__version__)"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.formulacode.validate")
    parser.add_argument("--tasks", "--task", dest="tasks", default=None,
                        help="comma-separated task ids or pack slugs (default: all)")
    parser.add_argument("--local", action="store_true",
                        help="grade on this machine (subprocess), not in the pack's container")
    parser.add_argument("--sample-budget", type=float, default=1.0,
                        help="seconds per workload per round for CV-targeted repeats")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-rounds", type=int, default=10,
                        help="calibration: extra rounds for workloads above --cv-target")
    parser.add_argument("--cv-target", type=float, default=0.02)
    parser.add_argument("--timer", choices=("task", "process_cpu", "process", "wall", "cycles"),
                        default="task", help="task = each task's declared measure")
    parser.add_argument("--cycles-rounds", type=int, default=1,
                        help="rounds of a cycles task (deterministic; each its own layout)")
    parser.add_argument("--grade-noisy-wall", action="store_true",
                        help="grade wall tasks even when the host-noise probe is not quiet")
    parser.add_argument("--raw-dir", type=Path, default=None,
                        help="also write each task's raw grading result (timings) here")
    parser.add_argument("--regrade", type=Path, default=None, metavar="RAW_DIR",
                        help="time nothing: recompute the output from a --raw-dir folder")
    parser.add_argument("--json", action="store_true", help="print JSON (the default output)")
    args = parser.parse_args(argv)
    settings = GradeSettings(rounds=args.rounds, repeat=args.repeat, timer=args.timer,
                             max_rounds=args.max_rounds, cv_target=args.cv_target,
                             sample_budget=args.sample_budget, controls=["control"],
                             cycles_rounds=args.cycles_rounds)
    if args.regrade is not None:
        result = regrade(args.regrade, settings)
    else:
        result = run(args.tasks, settings, local=args.local, raw_dir=args.raw_dir,
                     grade_noisy_wall=args.grade_noisy_wall)
    print(json.dumps(result, indent=2 if not args.json else None, default=str))
    return 0 if result["acceptance"]["passed"] else 1


if __name__ == "__main__":
    from harness.errors import guarded

    raise SystemExit(guarded(main))
