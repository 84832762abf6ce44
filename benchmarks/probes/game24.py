"""Game of 24 as a tree-of-thought probe: reach 24 from seeded numbers, one step per line.

The branching, revisiting search task behind the ArborKV study (Tree of Thoughts, Yao et
al., 2023, used Game of 24 for the same reason): a step-per-line reply gives a tree decoder
thoughts to branch on, dead ends to abandon and siblings to return to. Items and the
verifier are pure domain code (:mod:`environments.probes.game24`: exact fractions, answers
parsed with ``ast``); the score is the verifier's verdict on the reply's ``Answer:`` line.
Like passkey, the task reports the KV statistics a KV method attaches to its output::

    inspect eval benchmarks/probes/game24.py --model whitebox/smollm2-135m -T size=3 \\
        -M method=arborkv -M thought=line -M budget=16 -M max_tokens=48
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

from benchmarks.probes.passkey import kv_stats
from environments.probes.game24 import (
    extract_answer,
    make_items,
    render_prompt,
    render_turns,
    verify,
)

DEFAULT_N = 20
DEFAULT_SEED = 0
DEFAULT_SIZE = 3
DEFAULT_MAX_TOKENS = 48
DEFAULT_PROMPT = "chat"
PROMPTS = ("chat", "text")

ROLES: dict[str, type[ChatMessageSystem | ChatMessageUser | ChatMessageAssistant]] = {
    "system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def record_to_sample(record: dict[str, Any], prompt: str = DEFAULT_PROMPT) -> Sample:
    """One :class:`~environments.probes.game24.Game24Item` record as a sample: chat turns
    (``prompt="chat"``) or the 1.0.0 single text (``prompt="text"``)."""
    if prompt not in PROMPTS:
        raise ValueError(f"prompt must be one of {PROMPTS}, not {prompt!r}")
    numbers = record["numbers"]
    return Sample(
        id=record["id"],
        input=(render_prompt(numbers) if prompt == "text"
               else [ROLES[role](content=text) for role, text in render_turns(numbers)]),
        target=record["solution"],
        metadata={"numbers": list(record["numbers"]), "n_solutions": record["n_solutions"]},
    )


@scorer(metrics=[accuracy(), stderr()])
def game24_solved() -> Scorer:
    """Correct when the reply's answer uses each number once and equals 24 exactly."""

    async def score(state: TaskState, target: Target) -> Score:
        answer = extract_answer(state.output.completion)
        verdict = verify(answer, state.metadata["numbers"])
        return Score(value=CORRECT if verdict.ok else INCORRECT, answer=answer,
                     explanation=verdict.reason or "solved")

    return score


@task
def game24(
    n: int = DEFAULT_N,
    seed: int = DEFAULT_SEED,
    size: int = DEFAULT_SIZE,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    prompt: str = DEFAULT_PROMPT,
) -> Task:
    """Seeded, solvable Game-of-24 puzzles with worked examples of the same size.

    Args:
        n: Number of items.
        seed: Seed of the item stream (same seed, same items).
        size: Numbers per puzzle (3 is within reach of the small ladder models, 4 is the
            classic game).
        max_tokens: Completion budget (steps and the answer line).
        prompt: ``chat`` (1.1.0: the worked examples as earlier user/assistant turns) or
            ``text`` (1.0.0: rules, examples and puzzle in one user turn, which chat models
            read as text to copy).
    """
    items = make_items(n, seed=seed, size=size)
    dataset = MemoryDataset([record_to_sample(item.record(), prompt) for item in items],
                            name="game24")
    return Task(
        dataset=dataset,
        solver=generate(),
        scorer=[game24_solved(), kv_stats()],
        config=GenerateConfig(max_tokens=max_tokens, temperature=0.0),
        version="1.1.0",
    )
