"""Induction: continue a repeated random letter string (copy what followed last time).

A directional-attention probe for model-making methods (``methods/recipes``): the prompt is
a random string of ``length`` letters, a newline, and its first ``prefix`` letters again;
the answer is the next ``answer`` letters of the first copy (Olsson et al., 2022, induction
heads). Chance is 1/26 per letter. Scored on the greedy completion, so any model runs it::

    inspect eval harness/induction --model whitebox/tiny -M recipe=qkv-sharing \
        -M recipe.sharing=qk-v
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

from environments.probes.induction import copy_accuracy, make_items
from harness.plugins.benchmark import benchmark

DEFAULT_N = 32
DEFAULT_SEED = 0
DEFAULT_LENGTH = 24
DEFAULT_PREFIX = 8
DEFAULT_ANSWER = 8


def record_to_sample(record: dict[str, Any]) -> Sample:
    """One :class:`~environments.probes.induction.InductionItem` record as a sample."""
    return Sample(id=record["id"], input=record["prompt"], target=record["target"],
                  metadata={"length": record["length"], "prefix": record["prefix"]})


@scorer(metrics={"accuracy": [mean(), stderr()], "exact": [mean(), stderr()]})
def induction_copy() -> Scorer:
    """Per-letter copy accuracy of the completion, and whether all letters are right."""

    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        accuracy = copy_accuracy(text, target.text)
        return Score(value={"accuracy": accuracy, "exact": float(accuracy == 1.0)},
                     answer=text)

    return score


@benchmark("induction")
@task
def induction(
    n: int = DEFAULT_N,
    seed: int = DEFAULT_SEED,
    length: int = DEFAULT_LENGTH,
    prefix: int = DEFAULT_PREFIX,
    answer: int = DEFAULT_ANSWER,
) -> Task:
    """Seeded induction (copy) items.

    Args:
        n: Number of items.
        seed: Seed of the item stream.
        length: Letters in the random string.
        prefix: Letters repeated after the newline (the cue).
        answer: Letters to continue with (the target).
    """
    items = make_items(n, seed=seed, length=length, prefix=prefix, answer=answer)
    dataset = MemoryDataset([record_to_sample(i.record()) for i in items], name="induction")
    return Task(
        dataset=dataset,
        solver=generate(),
        scorer=induction_copy(),
        # a letter is one token or more: twice the letters leaves room for any tokenizer
        config=GenerateConfig(max_tokens=2 * answer, temperature=0.0),
        version="1.0.0",
    )
