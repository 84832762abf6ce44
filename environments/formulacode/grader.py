"""Host side of the grader: ship the runtime into a task's environment, run it, parse it.

The runtime (``runtime/fc_grade.py`` + ``runtime/fc_bench.py``) runs where the code runs —
inside the task container — so baseline, expert and candidate trees are timed interleaved in
the same container on the same CPUs (one pinned CPU for CPU time, the task's CPU set
for wall-clock time). This module writes its config, starts it through
an executor (a docker container here, Inspect's sandbox in the scorer, a local subprocess in
tests) and returns the parsed result for :mod:`.metrics`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

RUNTIME_DIR = Path(__file__).parent / "runtime"
RUNTIME_FILES = ("fc_grade.py", "fc_bench.py", "fc_callgrind.py")
REMOTE_RUNTIME = "/opt/fc_runtime"
START, END = "FORMULACODE_RESULT_START", "FORMULACODE_RESULT_END"


TIMERS = ("process_cpu", "wall", "cycles")
DEFAULT_TIMER = "process_cpu"
#: what a task may declare as its ``measure`` (task.json): ``cycles`` for single-threaded
#: CPU-bound work (callgrind-simulated, load-proof), ``wall`` where the optimisation is
#: parallelism or I/O hiding (graded only on a quiet host)
MEASURES = ("cycles", "wall")


def task_timer(meta: dict[str, Any]) -> str:
    """The timer a task's metadata asks for: its ``measure`` when declared, else its
    ``timer`` (older records), else the default."""
    measure = meta.get("measure")
    if measure is not None:
        if measure not in MEASURES:
            raise ValueError(f"unknown measure {measure!r}: one of {MEASURES}")
        return str(measure)
    return str(meta.get("timer") or DEFAULT_TIMER)


@dataclass
class GradeSettings:
    """How a task is measured (spec §5.3 resolution: >= 5 interleaved rounds).

    ``timer``: ``process_cpu`` (CPU time on one pinned CPU, BLAS at one thread: blind to
    parallelism, and moved by co-tenants through the shared caches), ``cycles``
    (callgrind-simulated cycles of the measured calls: deterministic whatever the load,
    one thread only), ``wall`` (wall clock on the ``cpus`` CPU set with that many threads:
    sees parallelism and I/O hiding) or ``task`` (what the task's metadata declares: its
    ``measure``, else its ``timer``, else ``process_cpu``). ``max_rounds`` > ``rounds``
    turns on round calibration: extra rounds for workloads whose CV is above
    ``cv_target``, within ``calibration_budget`` seconds. ``controls`` are extra base-tree
    copies timed only, from which the host calibrates the noise floor. ``layout_seed``
    seeds the memory-layout shift each timing run gets (one per round and tree), so a
    rerun with the same seed repeats the same layouts.
    """

    rounds: int = 5
    repeat: int = 3
    timer: str = DEFAULT_TIMER
    cpus: int | list[int] | str | None = None  # the wall timer's CPU set (count or CPUs)
    cpu: int | None = None  # CPU of the process_cpu timer; None = the highest allowed
    max_rounds: int | None = None  # None = rounds (no calibration rounds)
    cv_target: float = 0.02
    calibration_budget: float = 300.0
    sample_budget: float = 1.0  # seconds per workload per round for CV-targeted repeats
    max_repeat: int = 50
    controls: list[str] = field(default_factory=list)
    snapshot_timeout: float = 30.0
    test_timeout: int = 900
    bench_timeout: int = 900
    python: str = "python3"
    layout_seed: int = 0
    # rounds of a cycles task (deterministic: one; each round a layout of its own)
    cycles_rounds: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def for_task(self, meta: dict[str, Any]) -> GradeSettings:
        """These settings with the task's declared timer and CPUs applied (``timer='task'``
        takes the task's ``timer``; undeclared ``cpus`` take the task's)."""
        timer = self.timer
        if timer == "task":
            timer = task_timer(meta)
        timer = "process_cpu" if timer == "process" else timer
        if timer not in TIMERS:
            raise ValueError(f"unknown timer {timer!r}: one of {TIMERS} or 'task'")
        cpus = self.cpus if self.cpus is not None else meta.get("cpus")
        if timer == "cycles":  # deterministic: no calibration rounds
            return replace(self, timer=timer, cpus=cpus, rounds=self.cycles_rounds,
                           max_rounds=self.cycles_rounds)
        return replace(self, timer=timer, cpus=cpus)


def runtime_sources() -> dict[str, str]:
    """File name -> text of the in-container runtime."""
    return {name: (RUNTIME_DIR / name).read_text() for name in RUNTIME_FILES}


def grade_config(repo: str, expert_patch_path: str, candidates: dict[str, dict[str, Any]],
                 settings: GradeSettings, work: str = "/tmp/fc_grade",
                 base_ref: str = "fc-base") -> dict[str, Any]:
    """The JSON config ``fc_grade.py`` reads. ``candidates`` maps a name to
    ``{"from_repo": True}`` (the agent's working tree) or ``{"patch": PATH}``."""
    return {"repo": repo, "base_ref": base_ref, "expert_patch": expert_patch_path,
            "candidates": candidates, "rounds": settings.rounds, "repeat": settings.repeat,
            "timer": settings.for_task({}).timer if settings.timer != "task" else DEFAULT_TIMER,
            "cpus": settings.cpus, "cpu": settings.cpu,
            "max_rounds": settings.max_rounds or settings.rounds,
            "cv_target": settings.cv_target, "calibration_budget": settings.calibration_budget,
            "sample_budget": settings.sample_budget, "max_repeat": settings.max_repeat,
            "controls": list(settings.controls), "snapshot_timeout": settings.snapshot_timeout,
            "python": settings.python, "test_timeout": settings.test_timeout,
            "bench_timeout": settings.bench_timeout, "layout_seed": settings.layout_seed,
            "work": work, **settings.extra}


def parse_result(stdout: str) -> dict[str, Any]:
    """The JSON between the result markers; an ``infra_error`` dict when absent."""
    if START not in stdout or END not in stdout:
        return {"infra_error": f"grader printed no result: {stdout[-1500:]}"}
    body = stdout.split(START, 1)[1].split(END, 1)[0]
    try:
        return dict(json.loads(body))
    except ValueError as exc:
        return {"infra_error": f"unparsable grader output: {exc}"}


def grade_local(repo: Path, expert_patch: str, candidates: dict[str, dict[str, Any]],
                settings: GradeSettings, work: Path) -> dict[str, Any]:
    """Run the runtime as a local subprocess (docker-free tests; same code as in images)."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "expert.patch").write_text(expert_patch)
    settings.python = sys.executable if settings.python == "python3" else settings.python
    cfg = grade_config(str(repo), str(work / "expert.patch"), candidates, settings,
                       work=str(work / "trees"))
    (work / "config.json").write_text(json.dumps(cfg))
    done = subprocess.run([sys.executable, str(RUNTIME_DIR / "fc_grade.py"),
                           str(work / "config.json")], capture_output=True, text=True,
                          check=False)
    return parse_result(done.stdout + ("" if done.returncode == 0 else done.stderr))
