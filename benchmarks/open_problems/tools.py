"""Running a candidate program in the sandbox and verifying what it writes.

The program is untrusted, so it runs in the task's sandbox (``bwrap``: no network,
rlimits from ``sandbox.yaml``) in a fresh directory, with a wall-clock timeout; only its
``solution.json`` comes back, and the exact verifier of
:mod:`environments.open_problems` checks it on the host, where the program cannot reach.
One exec per candidate: the program arrives on stdin and the solution leaves on stdout.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from inspect_ai.tool import Tool, tool
from inspect_ai.util import OutputLimitExceededError, sandbox

from environments.open_problems import get_problem
from environments.open_problems.problems import SOLUTION_FILE

DEFAULT_TIMEOUT_S = 60
MAX_ERROR_CHARS = 1500


@dataclass(frozen=True)
class RunResult:
    """What running a program produced: its solution text, or why there is none."""

    ran: bool
    solution: str
    error: str


def _script(directory: str) -> str:
    return (
        f"mkdir -p {directory} && cd {directory} && trap 'cd /sandbox && rm -rf {directory}' EXIT"
        " && cat > program.py && python3 program.py > stdout.txt 2> stderr.txt; rc=$?;"
        f" if [ $rc -ne 0 ]; then tail -c {MAX_ERROR_CHARS} stderr.txt >&2; exit $rc; fi;"
        f" if [ ! -f {SOLUTION_FILE} ]; then echo 'the program wrote no {SOLUTION_FILE}' >&2;"
        f" exit 3; fi; cat {SOLUTION_FILE}"
    )


async def run_program(code: str, timeout: int = DEFAULT_TIMEOUT_S) -> RunResult:
    """Run ``code`` as ``python3 program.py`` in the sandbox; return its solution.json."""
    directory = f"runs/{uuid.uuid4().hex}"
    try:
        result = await sandbox().exec(["sh", "-c", _script(directory)], input=code,
                                      timeout=timeout)
    except TimeoutError:
        return RunResult(False, "", f"timed out after {timeout} s")
    except OutputLimitExceededError:
        return RunResult(False, "", "the solution is larger than the sandbox's output limit")
    if not result.success:
        error = result.stderr.strip()[-MAX_ERROR_CHARS:] or f"exit status {result.returncode}"
        return RunResult(False, "", error)
    return RunResult(True, result.stdout, "")


async def evaluate(problem: str, code: str, timeout: int = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """The evaluator contract of program-evolution agents, as a dict (see the tool)."""
    spec = get_problem(problem)
    run = await run_program(code, timeout)
    if not run.ran:
        return {"ran": False, "valid": False, "combined_score": 0.0, "objective": None,
                "reason": f"execution failed: {run.error}"}
    try:
        data = json.loads(run.solution)
    except json.JSONDecodeError as err:
        return {"ran": True, "valid": False, "combined_score": 0.0, "objective": None,
                "reason": f"{SOLUTION_FILE} is not JSON: {err}"}
    verdict = spec.verify(data)
    return {"ran": True, "valid": verdict.valid, "combined_score": spec.combined_score(verdict),
            "objective": verdict.score, "reason": verdict.reason}


@tool
def evaluate_program(problem: str, timeout: int = DEFAULT_TIMEOUT_S) -> Tool:
    """The evaluator tool of an open problem (name ``evaluate_program``).

    Args:
        problem: Problem name (``circle_packing`` or ``first_autocorrelation``).
        timeout: Wall-clock limit of one program run, in seconds.
    """
    get_problem(problem)  # fail at task creation on an unknown name

    async def execute(code: str) -> str:
        """Run a complete Python program that writes solution.json, and verify the solution.

        Args:
            code: The full source of the program.

        Returns:
            JSON: {"ran", "valid", "combined_score" (higher is better), "objective", "reason"}.
        """
        return json.dumps(await evaluate(problem, code, timeout))

    return execute
