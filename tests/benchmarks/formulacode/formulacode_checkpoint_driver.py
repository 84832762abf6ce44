"""Subprocess driver of the FormulaCode checkpoint test (not a test): one episode per call.

    python formulacode_checkpoint_driver.py run LOG_DIR CHECKPOINT KILL_AT CONTAINER_FILE
    python formulacode_checkpoint_driver.py retry LOG_DIR

``run`` plays the pack task ``primes`` in its docker sandbox under the benchmark's default
``react()`` agent, driven by ``scripted/sequence``: one bash call per turn, each changing
the repository a different way (:data:`STEPS`), then a listing of the workspace, then
submit. With ``KILL_AT`` = k > 0 the process SIGKILLs itself when the k-th checkpoint is
about to be taken (in the task's ``on_checkpoint``, after the benchmark's own hook, which
has already taken the delta): the first k-1 checkpoints are committed, the turn in between
is lost with the container, and nothing is cleaned up. Before dying it writes the
container's name to CONTAINER_FILE so the test can remove what the kill left running.
``retry`` resumes the one log in LOG_DIR with ``eval_retry`` in a fresh process.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sys
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai import eval_retry, task_with
from inspect_ai.log import list_eval_logs
from inspect_ai.solver import TaskState
from inspect_ai.util import sandbox

from benchmarks.formulacode.checkpoint import save_workspace
from benchmarks.formulacode.formulacode import formulacode
from environments.formulacode.records import load_records

TASK = "primes"
GRADING = {"rounds": 1, "max_rounds": 1, "repeat": 1, "sample_budget": 0.05,
           "timer": "process_cpu"}
"""Smoke-run timing on the CPU clock (the task declares callgrind cycles, which take 10x
longer here): speedups vary between runs, so the test compares the workspace, not timings."""

LISTING = ("git status --porcelain --untracked-files=all; git diff fc-base --stat; "
           "cat NOTES.md; ls -a tests")
"""The last tool call prints the workspace: the test compares it across runs."""


def steps() -> list[dict[str, object]]:
    """The scripted turns: apply the expert's patch (tracked edits), add a file, delete a
    tracked file, append to the added file, list the workspace, submit."""
    record = next(r for r in load_records("pack") if r.extra.get("pack_slug") == TASK)
    patch = base64.b64encode(record.patch.encode()).decode()
    shell = [
        f"echo {patch} | base64 -d > /tmp/expert.patch && git apply /tmp/expert.patch",
        "printf 'turn 2: chose a bit sieve\\n' > NOTES.md",
        "git rm -q tests/test_core.py",
        "printf 'turn 4: checked the counts\\n' >> NOTES.md",
        LISTING,
    ]
    calls: list[dict[str, object]] = [
        {"tool": "bash", "arguments": {"command": f"cd /workspace/repo && {cmd}"}} for cmd in shell
    ]
    return [*calls, {"tool": "submit", "arguments": {"answer": "done"}}]


def run(log_dir: str, checkpoint: str, kill_at: int, container_file: str) -> None:
    fires = 0

    async def save_then_maybe_die(state: TaskState) -> None:
        nonlocal fires
        await save_workspace(state)
        fires += 1
        if fires == kill_at:
            connection = await sandbox().connection()
            Path(container_file).write_text(connection.container or "")
            os.kill(os.getpid(), signal.SIGKILL)

    task = task_with(formulacode(tasks=TASK, checkpoint=checkpoint, **GRADING),  # type: ignore[arg-type]
                     on_checkpoint=save_then_maybe_die)
    log = inspect_eval(task, model="scripted/sequence",
                       model_args={"steps": json.dumps(steps())}, log_dir=log_dir,
                       display="none")[0]
    print(log.status, log.error)


def retry(log_dir: str) -> None:
    logs = list_eval_logs(log_dir)
    if len(logs) != 1:
        raise SystemExit(f"expected one log in {log_dir}, found {len(logs)}")
    log = eval_retry(logs[0], log_dir=log_dir, display="none")[0]
    print(log.status, log.error)
    if log.status != "success":
        raise SystemExit(1)


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        retry(sys.argv[2])
