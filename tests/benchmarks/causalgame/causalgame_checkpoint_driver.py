"""Subprocess driver of the checkpoint test (not a test): one CausalGame episode per call.

    python causalgame_checkpoint_driver.py run LOG_DIR CHECKPOINT KILL_AT
    python causalgame_checkpoint_driver.py retry LOG_DIR

``run`` plays antenna_trap with ``scripted/causalgame-stepwise`` (3 deploys, then submit) under
the benchmark's turn agent at one model call per turn, so every turn boundary is a possible
checkpoint. With ``KILL_AT`` = k > 0 the process SIGKILLs itself when the k-th checkpoint is
about to be taken (in the task's ``on_checkpoint``, after the benchmark's own hook): the
first k-1 checkpoints are committed, the episode is mid-way, and nothing is cleaned up.
``retry`` resumes the one log in LOG_DIR with ``eval_retry`` (a fresh process, as a user
would after a crash).
"""

from __future__ import annotations

import os
import signal
import sys

from inspect_ai import eval as inspect_eval
from inspect_ai import eval_retry, task_with
from inspect_ai.log import list_eval_logs
from inspect_ai.solver import TaskState

from benchmarks.causalgame.agent import causalgame_agent
from benchmarks.causalgame.causalgame import causalgame
from benchmarks.causalgame.session import checkpoint_game

MODEL = "scripted/causalgame-stepwise"
MODEL_ARGS = {"policy_module": "benchmarks.causalgame.policies", "deploys": 3, "count": 10}


def run(log_dir: str, checkpoint: str, kill_at: int) -> None:
    fires = 0

    async def flush_then_maybe_die(state: TaskState) -> None:
        nonlocal fires
        await checkpoint_game(state)
        fires += 1
        if fires == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    task = task_with(
        causalgame(scenarios="antenna_trap", epochs=1, sandbox="none", checkpoint=checkpoint),
        on_checkpoint=flush_then_maybe_die,
    )
    log = inspect_eval(task, solver=causalgame_agent(iterations=1), model=MODEL,
                       model_args=MODEL_ARGS, log_dir=log_dir, display="none")[0]
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
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        retry(sys.argv[2])
