"""Household: ALFWorld-like long-horizon text tasks (go/open/take/clean/heat/cool/put) as tools.

Built for LightWM ("training-free hierarchical working memory for small-model agents";
repo BloomChant/LightWM), whose claim is on ALFWorld: a procedure-centric family where a
small model must carry state (where things are, what it holds, what is done) over many
steps. Each sample is one seeded instance of ``environments/household`` (solvable by
construction, optimal plan 8-20 actions by BFS). The model sees the house and the goal and
acts through one tool per verb; each action, valid or not, is a step, and the tools refuse
actions past ``step_limit``. Invalid actions come back as tool errors with the reason. The
scorer replays the recorded actions with the exact verifier and reads each model call's
prompt length from the sample's transcript.

The task's own solver is Inspect's ``react()`` over the tools; the tools are set up before
the solver (``use_tools``), so any agent method (``lightwm``, ``react-memory``) can drive
them. Splits: ``train`` seeds ``seed + i`` (traces for schema induction), ``test`` seeds
``1_000_000 + seed + i``; sample ids are ``household-<split>-s<seed>``.

    inspect eval harness/household --model scripted/household-oracle -T n=40
    inspect eval harness/household --model whitebox/smollm2-135m -T n=4 -T step_limit=10 \\
        --solver methods/lightwm/agent.py@lightwm -S schema=household
    harness study run methods/studies/lightwm_household/study.yaml
"""

from __future__ import annotations

from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.agent import AgentState, as_solver, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver, use_tools

from benchmarks.paper_tasks.household.scorer import household_score
from benchmarks.paper_tasks.household.tools import (
    ACTIONS_KEY,
    LIMIT_KEY,
    SPEC_KEY,
    household_tools,
)
from environments.household import generate, intro
from environments.household.generate import (
    DEFAULT_MAX_STEPS,
    DEFAULT_MIN_STEPS,
    goal_kind_of,
)
from environments.household.world import GOAL_KINDS
from harness.plugins.benchmark import benchmark

DEFAULT_N = 20
DEFAULT_SEED = 0
DEFAULT_STEP_LIMIT = 40
DEFAULT_MAX_TURNS = 50
TEST_OFFSET = 1_000_000
VERSION = "1.0.0"
EPISODE_LINE = "Episode: household seed={seed} steps={lo}-{hi}"
"""Names the generator call in the system turn, so a scripted oracle can rebuild the house
(it tells a model nothing about where things are)."""
SYSTEM = (
    "You are an agent in a house. Reach the goal with the action tools: go (to a room, or to "
    "a place in the room you are in), open, close, take, put, clean (at a sinkbasin), heat "
    "(at a microwave), cool (at a fridge), look. You hold one object at a time. Closed "
    "places show their contents once opened. Call one tool per turn; call submit when the "
    "task is complete.\n" + EPISODE_LINE
)
CALL_HINT = (
    'Write each call as <tool_call>{"name": "go", "arguments": {"target": "kitchen"}}'
    "</tool_call>, with single braces."
)
"""Optional line before the episode line (``call_hint=True``). Why: Qwen2.5's chat template
shows its example call with doubled braces, which the 1.5B copies; a doubled object is not
JSON, so the turn yields no action (methods/studies/lightwm_household_1p5b)."""

Split = Literal["train", "test"]


def instance_seed(split: str, seed: int, i: int) -> int:
    """The generator seed of instance ``i`` of ``split``."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    return (TEST_OFFSET if split == "test" else 0) + seed + i


def record_to_sample(record: dict[str, Any], split: str = "test",
                     min_steps: int = DEFAULT_MIN_STEPS,
                     max_steps: int = DEFAULT_MAX_STEPS, call_hint: bool = False) -> Sample:
    """An instance record (:meth:`Instance.to_dict`) as a sample: rules and episode line as
    the system turn, the house and goal as the user turn, the record in metadata."""
    from environments.household import Instance

    inst = Instance.from_dict(record)
    system = SYSTEM.format(seed=inst.seed, lo=min_steps, hi=max_steps)
    if call_hint:
        rules, _, episode = system.rpartition("\n")
        system = f"{rules} {CALL_HINT}\n{episode}"
    return Sample(
        id=f"household-{split}-s{inst.seed}",
        input=[ChatMessageSystem(content=system),
               ChatMessageUser(content=intro(inst))],
        target=inst.goal_text,
        metadata={"instance": record, "optimal": inst.optimal, "goal_kind": inst.goal.kind,
                  "split": split, "seed": inst.seed},
    )


def instance_records(n: int, split: str, seed: int, min_steps: int, max_steps: int,
                     goal_kinds: str | None = None) -> list[dict[str, Any]]:
    """The first ``n`` instances of ``split`` from ``seed`` on (of ``goal_kinds`` if given)."""
    kinds = {k.strip() for k in goal_kinds.split(",") if k.strip()} if goal_kinds else None
    if kinds is not None and not kinds <= set(GOAL_KINDS):
        raise ValueError(f"unknown goal kinds {sorted(kinds - set(GOAL_KINDS))}; "
                         f"choose from {', '.join(GOAL_KINDS)}")
    out: list[dict[str, Any]] = []
    i = 0
    while len(out) < n:
        s = instance_seed(split, seed, i)
        i += 1
        if kinds is not None and goal_kind_of(s) not in kinds:
            continue  # skipped before generating: a short bound may not fit its kind at all
        out.append(generate(s, min_steps, max_steps).to_dict())
    return out


@solver
def start_episode(step_limit: int = DEFAULT_STEP_LIMIT) -> Solver:
    """Put the sample's instance and an empty action list in the store (the tools' truth)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.store.set(SPEC_KEY, state.metadata["instance"])
        state.store.set(ACTIONS_KEY, [])
        state.store.set(LIMIT_KEY, step_limit)
        return state

    return solve


@solver
def household_react(max_turns: int = DEFAULT_MAX_TURNS) -> Solver:
    """Inspect's ``react()`` with submit over the task's tools, ``max_turns`` model turns."""

    async def on_continue(agent_state: AgentState) -> bool:
        turns = sum(isinstance(m, ChatMessageAssistant) for m in agent_state.messages)
        return turns < max_turns

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        agent = react(tools=list(state.tools), on_continue=on_continue, submit=True)
        return await as_solver(agent)(state, generate)

    return solve


@benchmark("household")
@task
def household(
    n: int = DEFAULT_N,
    split: Split = "test",
    seed: int = DEFAULT_SEED,
    step_limit: int = DEFAULT_STEP_LIMIT,
    min_steps: int = DEFAULT_MIN_STEPS,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_turns: int = DEFAULT_MAX_TURNS,
    goal_kinds: str | None = None,
    call_hint: bool = False,
) -> Task:
    """Seeded household episodes played through action tools, scored by the verifier.

    Args:
        n: Instances (one sample each).
        split: ``test`` (seeds 1e6+, what studies score) or ``train`` (traces for induction).
        seed: First instance seed within the split.
        step_limit: Actions per episode (valid or invalid) before the tools refuse.
        min_steps: Shortest optimal plan an instance may have.
        max_steps: Longest optimal plan an instance may have.
        max_turns: Model turns of the task's own react solver (agent methods bring theirs).
        goal_kinds: Comma-separated goal kinds to keep (place, clean, heat, cool, two):
            seeds are walked upward from ``seed`` until ``n`` instances of those kinds are
            found (None: every kind, the first ``n`` seeds). One family per kind is how
            LightWM's schemas are induced (ALFWorld's task types). A seed of another kind
            is skipped before any house is searched, so a bound only some kinds can meet
            works: ``min_steps=2, max_steps=5, goal_kinds="place,clean"`` gives 4-5 action
            episodes (no heat, cool or two-object goal has a plan under 6).
        call_hint: Add :data:`CALL_HINT` (the call format with single braces) to the rules,
            for every agent alike.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if step_limit < 1:
        raise ValueError(f"step_limit must be at least 1, got {step_limit}")
    records = instance_records(n, split, seed, min_steps, max_steps, goal_kinds)
    return Task(
        dataset=MemoryDataset([record_to_sample(r, split, min_steps, max_steps, call_hint)
                               for r in records], name=f"household-{split}-s{seed}"),
        setup=[start_episode(step_limit), use_tools(household_tools())],
        solver=household_react(max_turns),
        scorer=household_score(),
        version=VERSION,
        metadata={"benchmark": "household", "split": split, "step_limit": step_limit},
    )
