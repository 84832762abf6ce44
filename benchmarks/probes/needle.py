"""Needle: recall a number hidden in repetitive filler by completing its sentence again.

A byte-scale needle-in-a-haystack probe for model-making methods (``methods/recipes``): the
prompt is ``n_filler`` filler sentences with ``The pass key is NNNN.`` among them, a newline
and ``The pass key is ``; the answer is the ``digits``-digit key. Sized for a byte LM trained
on 256-byte windows (the default item is about 175 bytes) and scored on the greedy
completion, so any model runs it; unlike ``harness/passkey`` it asks no question, so no
instruction following is needed (items: :mod:`environments.probes.needle`)::

    inspect eval harness/needle --model whitebox/tinylm -M recipe=procedural-pretraining \
        -M recipe.fraction=0.01
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

from environments.probes.needle import digit_accuracy, make_items
from harness.plugins.benchmark import benchmark

DEFAULT_N = 32
DEFAULT_SEED = 0
DEFAULT_N_FILLER = 8
DEFAULT_DIGITS = 4


def record_to_sample(record: dict[str, Any]) -> Sample:
    """One :class:`~environments.probes.needle.NeedleItem` record as a sample."""
    return Sample(id=record["id"], input=record["prompt"], target=record["target"],
                  metadata={"depth": record["depth"], "n_filler": record["n_filler"]})


@scorer(metrics={"accuracy": [mean(), stderr()], "digits": [mean(), stderr()]})
def needle_recall() -> Scorer:
    """Whether the completion starts with the whole key (``accuracy``, the paper's
    needle-in-a-haystack accuracy), and the share of its digits in place (``digits``,
    chance 1/10)."""

    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        digits = digit_accuracy(text, target.text)
        return Score(value={"accuracy": float(digits == 1.0), "digits": digits}, answer=text)

    return score


@benchmark("needle")
@task
def needle(
    n: int = DEFAULT_N,
    seed: int = DEFAULT_SEED,
    n_filler: int = DEFAULT_N_FILLER,
    digits: int = DEFAULT_DIGITS,
) -> Task:
    """Seeded needle-in-filler recall by completion.

    Args:
        n: Number of items.
        seed: Seed of the item stream (same seed, same items).
        n_filler: Filler sentences per context (about 17 bytes each).
        digits: Digits in the key.
    """
    items = make_items(n, seed=seed, n_filler=n_filler, digits=digits)
    dataset = MemoryDataset([record_to_sample(i.record()) for i in items], name="needle")
    return Task(
        dataset=dataset,
        solver=generate(),
        scorer=needle_recall(),
        # a digit is one token or more: twice the digits leaves room for any tokenizer
        config=GenerateConfig(max_tokens=2 * digits, temperature=0.0),
        version="1.0.0",
    )
