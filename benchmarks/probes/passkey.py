"""Passkey retrieval: a seeded number hidden in repetitive filler, asked back at the end.

A probe for long-context methods (after the passkey test of Mohtashami & Jaggi, 2023,
"Landmark Attention"): nothing in the filler is informative, so an answer is right only if
the model can still attend to the needle — exactly what KV-cache compression, eviction or
transfer may break. The context length is ``n_filler`` sentences (~5 tokens each); the
needle's depth is seeded per item. Besides accuracy, the task reports the KV statistics a
KV method attaches to its output (``ModelOutput.metadata["kv"]``, see ``methods.kv``), so a
factorial study gets memory and quality from the same log::

    inspect eval harness/passkey --model whitebox/smollm2-135m -T n=20 -T n_filler=60
    inspect eval harness/passkey --model whitebox/smollm2-135m -M method=xkv -M rank=32
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Scorer,
    Target,
    accuracy,
    mean,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState, generate

from environments.probes.passkey import make_items
from harness.plugins.benchmark import benchmark

DEFAULT_N = 20
DEFAULT_SEED = 0
DEFAULT_N_FILLER = 40
DEFAULT_DIGITS = 5
DEFAULT_MAX_TOKENS = 12
KV_KEYS = ("kv_bytes", "kv_bytes_full", "kv_ratio", "agreement", "exact")
"""Numbers a KV method may report; missing ones are reported as NaN-free absences."""
KV_COST_KEYS = ("compute_ratio", "pass_ratio", "time_ratio", "search_flops", "reprefill_flops",
                "search_cpu_seconds", "reprefill_cpu_seconds", "search_seconds",
                "reprefill_seconds", "reprefill_tokens")
"""What a method's memory saving costs in work and time (ArborKV's re-prefills): scored
only when the method reports them, so a study can analyse them like any score."""


def record_to_sample(record: dict[str, Any]) -> Sample:
    """One :class:`~environments.probes.passkey.PasskeyItem` record as a sample."""
    return Sample(
        id=record["id"],
        input=f"{record['context']}\n\n{record['question']}",
        target=record["key"],
        metadata={"depth": record["depth"], "n_filler": record["n_filler"]},
    )


@scorer(metrics=[accuracy(), stderr()])
def passkey_match() -> Scorer:
    """Correct when the key's digits appear in the completion (as a whole number)."""

    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        digits = "".join(ch if ch.isdigit() else " " for ch in text).split()
        hit = target.text in digits
        return Score(value=CORRECT if hit else INCORRECT, answer=text)

    return score


@scorer(metrics={key: [mean()] for key in KV_KEYS})
def kv_stats() -> Scorer:
    """The KV statistics the model attached to its output, as a dict score (0s if none).

    A plain model keeps the full cache, so its ratio is 1 and agreement 1 by definition;
    the scorer reports exactly what the model said and marks absence with ``kv_reported``.
    """

    async def score(state: TaskState, target: Target) -> Score:
        meta = (state.output.metadata or {}).get("kv") if state.output else None
        if not isinstance(meta, dict):
            return Score(value={key: 0.0 for key in KV_KEYS}, explanation="no KV report")
        value = {key: float(meta.get(key, 0.0)) for key in KV_KEYS}
        value.update({key: float(meta[key]) for key in KV_COST_KEYS if key in meta})
        return Score(value=value, metadata={"kv": meta})

    return score


@benchmark("passkey")
@task
def passkey(
    n: int = DEFAULT_N,
    seed: int = DEFAULT_SEED,
    n_filler: int = DEFAULT_N_FILLER,
    digits: int = DEFAULT_DIGITS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> Task:
    """Seeded passkey-in-filler retrieval.

    Args:
        n: Number of items.
        seed: Seed of the item stream (same seed, same items).
        n_filler: Filler sentences per context (~5 tokens each): the context length knob.
        digits: Digits in the key.
        max_tokens: Completion budget (the answer is one short sentence).
    """
    items = make_items(n, seed=seed, n_filler=n_filler, digits=digits)
    dataset = MemoryDataset([record_to_sample(item.record()) for item in items], name="passkey")
    return Task(
        dataset=dataset,
        solver=generate(),
        scorer=[passkey_match(), kv_stats()],
        config=GenerateConfig(max_tokens=max_tokens, temperature=0.0),
        version="1.0.0",
    )
