"""Host side of the grader: ship the runtime into a task's environment, run it, parse it.

The runtime (``runtime/fc_grade.py`` + ``runtime/fc_bench.py``) runs where the code runs —
inside the task container — so baseline, expert and candidate trees are timed interleaved in
the same container on the same pinned CPU. This module writes its config, starts it through
an executor (a docker container here, Inspect's sandbox in the scorer, a local subprocess in
tests) and returns the parsed result for :mod:`.metrics`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RUNTIME_DIR = Path(__file__).parent / "runtime"
RUNTIME_FILES = ("fc_grade.py", "fc_bench.py")
REMOTE_RUNTIME = "/opt/fc_runtime"
START, END = "FORMULACODE_RESULT_START", "FORMULACODE_RESULT_END"


@dataclass
class GradeSettings:
    """How a task is measured (spec §5.3 resolution: >= 5 interleaved rounds)."""

    rounds: int = 5
    repeat: int = 3
    timer: str = "process"  # 'process' (CPU time, robust to co-tenants) or 'wall' (asv's)
    cpu: int | None = None  # CPU to pin timing runs to; None = the highest allowed
    test_timeout: int = 900
    bench_timeout: int = 900
    python: str = "python3"
    extra: dict[str, Any] = field(default_factory=dict)


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
            "timer": settings.timer, "cpu": settings.cpu, "python": settings.python,
            "test_timeout": settings.test_timeout, "bench_timeout": settings.bench_timeout,
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
