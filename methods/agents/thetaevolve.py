"""ThetaEvolve (inference only): evolve a program against an evaluator with one LLM.

Wang et al., "ThetaEvolve: Test-time Learning on Open Problems" (arXiv 2511.23473), an
open AlphaEvolve. Each step samples ``parents_per_step`` parents from a program database
split into islands, asks the model for ``responses_per_parent`` SEARCH/REPLACE diffs per
parent, all concurrently through Inspect's model (``asyncio.gather`` on ``generate``),
applies each diff and has the task's evaluator run the child (the open-problems benchmark
runs it in the ``bwrap`` sandbox under time/memory limits and verifies its output
exactly). Lazy penalties score responses that do nothing useful: no applicable diff
-0.4, child identical to parent -0.3, child that fails to run -0.2.

    inspect eval harness/circle_packing --model scripted/evolve-improver
    inspect eval harness/circle_packing --model embedded/smollm2-135m -T steps=5

Contract with a task (nothing benchmark-specific is imported):
- an evaluator tool named ``evaluator_tool`` (default ``evaluate_program``) in
  ``state.tools`` that takes ``code: str`` and returns JSON
  ``{"ran": bool, "valid": bool, "combined_score": float, "objective": float | null,
  "reason": str}`` (``combined_score``: higher is better);
- the initial program in ``state.metadata[program_key]`` (or the first python code block
  of the input); the input text is the task description shown to the model.

The final answer is the best program, as a python code block in ``state.output``. Every
candidate (id, parent, step, outcome, score, reward, diff) is in the sample's store under
``thetaevolve/candidates`` and in one transcript ``info`` event per step.

Checkpoints: a journal in ``checkpoint_dir/<run key>/`` (see
:mod:`methods.agents.evolve.journal`) gets each candidate as it is scored and a snapshot
after each step; running the same sample again with the same model and settings resumes
where it stopped, losing no candidate. Test-time RL seam: every response is a
:class:`Rollout` (prompt, response, reward), handed to ``rollout_sink`` and kept in the
journal (:func:`read_rollouts`), ready for a GRPO trainer that owns the weights.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import os
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef
from inspect_ai.util import display_counter
from pydantic import JsonValue

from harness.registry import agent_method
from methods.agents.evolve.database import Database, Program
from methods.agents.evolve.diff import DiffError, apply_diff, parse_diff
from methods.agents.evolve.journal import Journal
from methods.agents.evolve.prompt import SYSTEM, child_prompt
from methods.agents.evolve.rewards import Outcome, RewardConfig, reward_for

DEFAULT_CHECKPOINT_DIR = Path.home() / ".cache" / "evalsuite" / "thetaevolve"
CHECKPOINT_ENV = "THETAEVOLVE_CHECKPOINT_DIR"
STORE_CANDIDATES = "thetaevolve/candidates"
STORE_SUMMARY = "thetaevolve/summary"
_CODE_BLOCK = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Rollout:
    """One response as an RL sample: what the policy saw, what it said, what it earned."""

    run_key: str
    candidate_id: str
    step: int
    parent_id: str
    prompt: list[dict[str, str]]
    response: str
    reward: float
    outcome: str


RolloutSink = Callable[[Rollout], Awaitable[None] | None]
"""Receives every rollout as soon as it is scored (a trainer's queue, a file, a list)."""


@dataclass(frozen=True)
class EvolveConfig:
    """The search settings that define a run (and therefore its checkpoint key)."""

    steps: int = 10
    parents_per_step: int = 4
    responses_per_parent: int = 2
    num_islands: int = 2
    population_size: int = 1000
    elite_size: int = 3
    exploitation: float = 0.7
    migration_interval: int = 5
    inspirations: int = 0
    temperature: float = 0.8
    max_tokens: int = 512
    seed: int = 0
    reward: RewardConfig = RewardConfig()

    def __post_init__(self) -> None:
        for name in ("steps", "parents_per_step", "responses_per_parent", "num_islands"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")

    @property
    def batch(self) -> int:
        """Responses per step."""
        return self.parents_per_step * self.responses_per_parent

    def response_seed(self, step: int, slot: int) -> int:
        """The generation seed of one response: distinct per (step, slot), stable on resume."""
        return self.seed + step * 1000 + slot


@agent_method(
    "thetaevolve",
    summary=(
        "ThetaEvolve program evolution: islands, batched SEARCH/REPLACE diffs, "
        "sandboxed evaluation, lazy penalties, resumable journal"
    ),
)
@solver
def thetaevolve(
    steps: int = 10,
    parents_per_step: int = 4,
    responses_per_parent: int = 2,
    num_islands: int = 2,
    population_size: int = 1000,
    elite_size: int = 3,
    exploitation: float = 0.7,
    migration_interval: int = 5,
    inspirations: int = 0,
    temperature: float = 0.8,
    max_tokens: int = 512,
    seed: int = 0,
    reward_shaping: bool = False,
    reward_lo: float = 0.0,
    reward_hi: float = 1.0,
    time_limit_s: float | None = None,
    eval_concurrency: int = 2,
    evaluator_tool: str = "evaluate_program",
    program_key: str = "initial_program",
    checkpoint_dir: str | None = None,
    resume: bool = True,
    rollout_sink: RolloutSink | None = None,
) -> Solver:
    """Evolve the task's program with SEARCH/REPLACE diffs from the model.

    Args:
        steps: Evolution steps (each: sample parents, generate, evaluate, checkpoint).
        parents_per_step: Parents drawn per step (spread over the islands in turn).
        responses_per_parent: Responses requested per parent (distinct seeds).
        num_islands: Islands of the program database.
        population_size: Total population cap (split evenly over islands).
        elite_size: How many of an island's fittest programs count as elite.
        exploitation: Probability a parent is drawn from the elite.
        migration_interval: Every this many steps, each island's best moves to the next.
        inspirations: Other top programs shown in the prompt (0 keeps prompts short).
        temperature: Sampling temperature of the responses.
        max_tokens: Token budget of one response.
        seed: Base seed (parent sampling and per-response generation seeds).
        reward_shaping: Shape rewards as 5*((clip(s)-lo)/(hi-lo))^3 instead of raw fitness.
        reward_lo: Lower clip of the shaping.
        reward_hi: Upper clip of the shaping.
        time_limit_s: Start no new step after this many seconds (None: run all steps).
        eval_concurrency: Children evaluated at once.
        evaluator_tool: Name of the task's evaluator tool.
        program_key: Metadata key holding the initial program.
        checkpoint_dir: Where run journals live (default ``$THETAEVOLVE_CHECKPOINT_DIR`` or
            ``~/.cache/evalsuite/thetaevolve``).
        resume: Continue a run with the same key from its journal (False starts over).
        rollout_sink: Called with every :class:`Rollout` (the test-time RL seam).
    """
    config = EvolveConfig(
        steps=steps,
        parents_per_step=parents_per_step,
        responses_per_parent=responses_per_parent,
        num_islands=num_islands,
        population_size=population_size,
        elite_size=elite_size,
        exploitation=exploitation,
        migration_interval=migration_interval,
        inspirations=inspirations,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        reward=RewardConfig(shaping=reward_shaping, lo=reward_lo, hi=reward_hi),
    )
    root = Path(checkpoint_dir or os.environ.get(CHECKPOINT_ENV) or DEFAULT_CHECKPOINT_DIR)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run = _Run(state, config, root, resume, time_limit_s, eval_concurrency,
                   _find_tool(state.tools, evaluator_tool), _initial_program(state, program_key),
                   rollout_sink)
        await run.execute()
        return state

    return solve


# ----------------------------------------------------------------------------- the run


class _Run:
    """One sample's evolution: state, journal, and the step loop."""

    def __init__(
        self,
        state: TaskState,
        config: EvolveConfig,
        root: Path,
        resume: bool,
        time_limit_s: float | None,
        eval_concurrency: int,
        evaluator: Tool,
        initial: str,
        sink: RolloutSink | None,
    ) -> None:
        self.state = state
        self.config = config
        self.model: Model = get_model()
        self.task_text = state.input_text
        self.initial = initial
        self.key = run_key(state, str(self.model), config, initial)
        self.journal = Journal(root / self.key)
        if not resume:
            for path in (self.journal.path, self.journal.snapshot_path):
                path.unlink(missing_ok=True)
        self.time_limit_s = time_limit_s
        self.evaluator = evaluator
        self.eval_slots = asyncio.Semaphore(max(1, eval_concurrency))
        self.sink = sink
        self.db = Database(config.num_islands, config.population_size, config.elite_size,
                           config.exploitation, config.migration_interval)
        self.candidates: list[dict[str, Any]] = []
        self.done_step = 0
        self.plans: dict[int, list[dict[str, Any]]] = {}

    # ------------------------------------------------------------------ restore

    async def restore(self) -> None:
        """Rebuild the database from snapshot + journal, or evaluate and seed the initial."""
        records = self.journal.records()
        snapshot = self.journal.read_snapshot()
        snap_step = 0
        if snapshot is not None:
            snap_step, data = snapshot
            self.db = Database.from_json(data)
            self.done_step = snap_step
        seed = next((r for r in records if r["kind"] == "seed"), None)
        if seed is None:
            result = await self.evaluate(self.initial)
            if not result.get("valid"):
                raise RuntimeError(f"the initial program does not verify: {result.get('reason')}")
            seed = {"kind": "seed", "score": float(result["combined_score"]),
                    "objective": result.get("objective"), "reason": result.get("reason", "")}
            self.journal.append(seed)
        if snapshot is None:
            self.db.seed(self.initial, seed["score"], {"objective": seed.get("objective")})
        for record in records:
            kind, step = record["kind"], int(record.get("step", 0))
            if kind == "candidate":
                self.candidates.append(_public(record))
            if kind == "plan":
                self.plans[step] = record["slots"]
            if step <= snap_step:
                continue  # already in the snapshot
            if kind == "candidate" and record["outcome"] == Outcome.VALID:
                self.db.add(_program(record))
            elif kind == "step_done":
                if record.get("migrate"):
                    self.db.migrate()
                self.done_step = step

    # ------------------------------------------------------------------ loop

    async def execute(self) -> None:
        """Restore, run the remaining steps, then publish the best program."""
        await self.restore()
        started = time.monotonic()
        best = self.db.best()
        self._progress(best)
        while self.done_step < self.config.steps:
            if self.time_limit_s is not None and time.monotonic() - started > self.time_limit_s:
                break
            await self.run_step(self.done_step + 1)
            best = self.db.best()
            self._progress(best)
        self.publish(best)

    async def run_step(self, step: int) -> None:
        """Plan (or reuse the plan of) one step, run its missing slots, checkpoint."""
        plan = self.plans.get(step)
        if plan is None:
            plan = self.plan(step)
            self.journal.append({"kind": "plan", "step": step, "slots": plan})
            self.plans[step] = plan
        done = {c["slot"] for c in self.candidates if c["step"] == step}
        todo = [slot for slot in plan if slot["slot"] not in done]
        results = await asyncio.gather(*(self.run_slot(step, slot) for slot in todo))
        migrate = step % self.config.migration_interval == 0 and self.config.num_islands > 1
        if migrate:
            self.db.migrate()
        self.journal.append({"kind": "step_done", "step": step, "migrate": migrate})
        self.journal.write_snapshot(step, self.db.to_json())
        self.done_step = step
        self.state.store.set(STORE_CANDIDATES, list(self.candidates))
        step_records: list[JsonValue] = [c for c in self.candidates if c["step"] == step]
        transcript().info(
            {"step": step, "best_score": self.db.best().score, "new": len(results),
             "candidates": step_records},
            source="thetaevolve",
        )

    def plan(self, step: int) -> list[dict[str, Any]]:
        """Parents and seeds of every slot of ``step`` (deterministic given the database)."""
        rng = random.Random(f"{self.config.seed}:{step}")
        slots = []
        for j in range(self.config.parents_per_step):
            island = ((step - 1) * self.config.parents_per_step + j) % self.config.num_islands
            parent = self.db.sample_parent(island, rng)
            for r in range(self.config.responses_per_parent):
                slot = j * self.config.responses_per_parent + r
                slots.append({"slot": slot, "parent": parent.id, "island": island,
                              "seed": self.config.response_seed(step, slot)})
        return slots

    async def run_slot(self, step: int, slot: dict[str, Any]) -> dict[str, Any]:
        """Generate one response, apply it, evaluate the child, record everything."""
        parent = self.db.programs[slot["parent"]]
        others = self.db.inspirations(slot["island"], parent.id, self.config.inspirations)
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=SYSTEM),
            ChatMessageUser(content=child_prompt(self.task_text, parent, others)),
        ]
        output = await self.model.generate(
            messages,
            config=GenerateConfig(seed=slot["seed"], temperature=self.config.temperature,
                                  max_tokens=self.config.max_tokens),
        )
        response = output.completion
        outcome, child, diff_text, result = await self.judge(parent, response)
        score = float(result["combined_score"]) if outcome is Outcome.VALID else None
        reward = reward_for(outcome, score, self.config.reward)
        candidate_id = f"s{step}-{slot['slot']}"
        record: dict[str, Any] = {
            "kind": "candidate", "id": candidate_id, "step": step, "slot": slot["slot"],
            "parent": parent.id, "island": slot["island"], "seed": slot["seed"],
            "outcome": str(outcome), "score": score, "objective": result.get("objective"),
            "reason": result.get("reason", ""), "reward": reward, "diff": diff_text,
            "code": child if outcome is Outcome.VALID else None,
            "rollout": {"prompt": [{"role": m.role, "content": m.text} for m in messages],
                        "response": response},
        }
        self.journal.append(record)  # durable before anything else can fail
        self.candidates.append(_public(record))
        if outcome is Outcome.VALID:
            self.db.add(_program(record))
        if self.sink is not None:
            delivered = self.sink(_rollout(self.key, record))
            if inspect.isawaitable(delivered):
                await delivered
        return record

    async def judge(self, parent: Program, response: str
                    ) -> tuple[Outcome, str | None, str, dict[str, Any]]:
        """Outcome of a response: penalties first, then the evaluator's verdict."""
        blocks = parse_diff(response)
        diff_text = "\n".join(b.render() for b in blocks)
        if not blocks:
            return Outcome.NO_DIFF, None, diff_text, {"reason": "no SEARCH/REPLACE block"}
        try:
            child = apply_diff(parent.code, blocks)
        except DiffError as err:
            return Outcome.NO_DIFF, None, diff_text, {"reason": f"diff does not apply: {err}"}
        if child == parent.code:
            return Outcome.IDENTICAL, child, diff_text, {"reason": "child identical to parent"}
        result = await self.evaluate(child)
        if not result.get("ran"):
            return Outcome.EXEC_ERROR, child, diff_text, result
        if not result.get("valid"):
            return Outcome.INVALID, child, diff_text, result
        return Outcome.VALID, child, diff_text, result

    async def evaluate(self, code: str) -> dict[str, Any]:
        """The evaluator tool's JSON verdict on ``code`` (at most ``eval_concurrency`` at once)."""
        async with self.eval_slots:
            raw = await self.evaluator(code=code)
        try:
            result = json.loads(str(raw))
        except json.JSONDecodeError:
            return {"ran": False, "valid": False, "reason": f"evaluator said: {str(raw)[:300]}"}
        return result if isinstance(result, dict) else {"ran": False, "reason": str(result)}

    # ------------------------------------------------------------------ reporting

    def _progress(self, best: Program) -> None:
        display_counter("ThetaEvolve step", f"{self.done_step}/{self.config.steps}")
        display_counter("ThetaEvolve best", f"{best.score:.6g}")

    def publish(self, best: Program) -> None:
        """Best program as the output; summary and candidates in the store."""
        counts = Counter(c["outcome"] for c in self.candidates)
        summary = {
            "run_key": self.key, "checkpoint": str(self.journal.directory),
            "steps_done": self.done_step, "candidates": len(self.candidates),
            "outcomes": dict(counts), "best_id": best.id, "best_score": best.score,
            "best_objective": best.metrics.get("objective"),
            "initial_score": self.db.programs["init-0"].score,
        }
        self.state.store.set(STORE_CANDIDATES, list(self.candidates))
        self.state.store.set(STORE_SUMMARY, summary)
        self.state.output = ModelOutput.from_content(
            model=str(self.model), content=f"```python\n{best.code}\n```"
        )
        self.state.messages.append(self.state.output.message)


# ----------------------------------------------------------------------------- helpers


def run_key(state: TaskState, model: str, config: EvolveConfig, initial: str) -> str:
    """Checkpoint key: same sample, epoch, model, settings and program -> same run."""
    identity = json.dumps(
        {"sample": str(state.sample_id), "epoch": state.epoch, "model": model,
         "config": asdict(config), "initial": initial, "input": state.input_text},
        sort_keys=True, default=str,
    )
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def _find_tool(tools: list[Tool], name: str) -> Tool:
    for tool in tools:
        if ToolDef(tool).name == name:
            return tool
    offered = ", ".join(ToolDef(t).name for t in tools) or "none"
    raise ValueError(f"thetaevolve needs an evaluator tool named {name!r}; offered: {offered}")


def _initial_program(state: TaskState, key: str) -> str:
    program = (state.metadata or {}).get(key)
    if isinstance(program, str) and program.strip():
        return program
    match = _CODE_BLOCK.search(state.input_text)
    if match is None:
        raise ValueError(f"thetaevolve needs metadata[{key!r}] or a python code block in the input")
    return match.group(1)


def _program(record: dict[str, Any]) -> Program:
    return Program(record["id"], record["code"], float(record["score"]), record["parent"],
                   int(record["island"]), int(record["step"]),
                   {"objective": record.get("objective")})


def _public(record: dict[str, Any]) -> dict[str, Any]:
    """A candidate as logged (no code, no rollout: those stay in the journal)."""
    return {k: v for k, v in record.items() if k not in ("kind", "code", "rollout")}


def _rollout(key: str, record: dict[str, Any]) -> Rollout:
    return Rollout(key, record["id"], record["step"], record["parent"],
                   record["rollout"]["prompt"], record["rollout"]["response"],
                   record["reward"], record["outcome"])


def read_rollouts(run_dir: str | Path) -> list[Rollout]:
    """Every rollout of a run directory, in the order they were scored (for RL training)."""
    journal = Journal(Path(run_dir))
    key = Path(run_dir).name
    return [_rollout(key, r) for r in journal.records() if r["kind"] == "candidate"]
