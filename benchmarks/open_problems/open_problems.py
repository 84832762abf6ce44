"""Open problems: program-evolution tasks with exact verifiers (AlphaEvolve / ThetaEvolve).

Each task is one sample: a problem statement and an initial program that writes a valid
but poor ``solution.json``. A solver improves the program; the score is the verified
objective of the final program, re-run in the ``bwrap`` sandbox (limits in
``sandbox.yaml``) and checked by :mod:`environments.open_problems`. The evaluator tool
``evaluate_program`` is installed by the task's setup, so any solver (ThetaEvolve by
default, or one bound by a study) can score candidates the same way.

    inspect eval harness/circle_packing --model scripted/evolve-improver
    inspect eval harness/circle_packing --model embedded/smollm2-135m -T steps=5
    inspect eval harness/first_autocorrelation --model scripted/evolve-improver -T steps=3
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import Solver, use_tools

from benchmarks.open_problems.scorer import verified_objective
from benchmarks.open_problems.tools import DEFAULT_TIMEOUT_S, evaluate_program
from environments.open_problems import get_problem
from environments.open_problems.problems import SOLUTION_FILE
from harness.plugins.benchmark import benchmark
from harness.registry import get

DEFAULT_STEPS = 10
DEFAULT_PARENTS_PER_STEP = 4
DEFAULT_RESPONSES_PER_PARENT = 2
DEFAULT_SOLVER = "thetaevolve"
"""The registered agent (``harness list``) that evolves the program by default."""
SANDBOX_CONFIG = Path(__file__).parent / "sandbox.yaml"

INSTRUCTIONS = (
    "{statement}\n\nThe program runs as `python3 program.py` (numpy and scipy are "
    "available, no network, {timeout} s limit) and must write the solution to "
    f"{SOLUTION_FILE} in its working directory."
)


def problem_sample(problem: str, timeout: int = DEFAULT_TIMEOUT_S) -> Sample:
    """The single sample of a problem: statement as input, initial program in metadata."""
    spec = get_problem(problem)
    return Sample(
        id=problem,
        input=INSTRUCTIONS.format(statement=spec.statement, timeout=timeout),
        metadata={
            "problem": problem,
            "initial_program": spec.initial_program(),
            "direction": spec.direction,
            "best_known": spec.best_known,
            "alphaevolve": spec.alphaevolve,
        },
    )


def _default_solver(steps: int, parents_per_step: int, responses_per_parent: int,
                    time_limit_s: float | None) -> Solver:
    # the method this benchmark came with, through the registry (benchmarks import no method)
    thetaevolve = get("agent", DEFAULT_SOLVER).load()
    return thetaevolve(steps=steps, parents_per_step=parents_per_step,
                       responses_per_parent=responses_per_parent, time_limit_s=time_limit_s)


def open_problem(
    problem: str,
    steps: int = DEFAULT_STEPS,
    parents_per_step: int = DEFAULT_PARENTS_PER_STEP,
    responses_per_parent: int = DEFAULT_RESPONSES_PER_PARENT,
    time_limit_s: float | None = None,
    timeout: int = DEFAULT_TIMEOUT_S,
) -> Task:
    """The Task of one problem (shared by the ``@task`` functions below)."""
    return Task(
        dataset=MemoryDataset([problem_sample(problem, timeout)], name=problem),
        setup=use_tools(evaluate_program(problem, timeout)),
        solver=_default_solver(steps, parents_per_step, responses_per_parent, time_limit_s),
        scorer=verified_objective(problem, timeout),
        sandbox=("bwrap", str(SANDBOX_CONFIG)),
        version="1.0.0",
        metadata={"benchmark": "open_problems", "problem": problem},
    )


@benchmark("circle_packing")
@task
def circle_packing(
    steps: int = DEFAULT_STEPS,
    parents_per_step: int = DEFAULT_PARENTS_PER_STEP,
    responses_per_parent: int = DEFAULT_RESPONSES_PER_PARENT,
    time_limit_s: float | None = None,
    timeout: int = DEFAULT_TIMEOUT_S,
) -> Task:
    """26 circles in the unit square, maximise the sum of radii (best known 2.63598308).

    Args:
        steps: Evolution steps of the default solver (ThetaEvolve).
        parents_per_step: Parents per step of the default solver.
        responses_per_parent: Responses per parent of the default solver.
        time_limit_s: Wall-clock budget of the default solver (None: all steps).
        timeout: Limit of one program run in the sandbox, in seconds.
    """
    return open_problem("circle_packing", steps, parents_per_step, responses_per_parent,
                        time_limit_s, timeout)


@benchmark("first_autocorrelation")
@task
def first_autocorrelation(
    steps: int = DEFAULT_STEPS,
    parents_per_step: int = DEFAULT_PARENTS_PER_STEP,
    responses_per_parent: int = DEFAULT_RESPONSES_PER_PARENT,
    time_limit_s: float | None = None,
    timeout: int = DEFAULT_TIMEOUT_S,
) -> Task:
    """Upper bound on the first autocorrelation constant, minimise (best known 1.503133).

    Args:
        steps: Evolution steps of the default solver (ThetaEvolve).
        parents_per_step: Parents per step of the default solver.
        responses_per_parent: Responses per parent of the default solver.
        time_limit_s: Wall-clock budget of the default solver (None: all steps).
        timeout: Limit of one program run in the sandbox, in seconds.
    """
    return open_problem("first_autocorrelation", steps, parents_per_step,
                        responses_per_parent, time_limit_s, timeout)
