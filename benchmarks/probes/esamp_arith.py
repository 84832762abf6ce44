"""ESamp probe: k sampled answers per two-number sum; pass@k, pass@1 and diversity per item.

A verifiable task the embedded SmolLM2-135M solves only part of the time (seeded sums of
two 1-2 digit numbers), so sampling more than once pays off and exploration can change
pass@k. Each sample draws ``k`` replies at the same temperature (seeds 0..k-1, decoded in
one batch by ``whitebox/``) and scores, per item:

* ``pass_at_k``: 1 if any reply's last integer equals the sum; ``pass_at_1``: the fraction
  of replies that are right (the unbiased pass@1 estimate);
* ``distinct_1`` / ``distinct_2``: distinct unigrams / bigrams over all tokens of the k
  replies (whitespace tokens), a lexical diversity measure;
* ``spread``: mean pairwise cosine distance of the replies' MiniLM embeddings.

    inspect eval benchmarks/probes/esamp_arith.py --model whitebox/smollm2-135m -T k=4
    inspect eval benchmarks/probes/esamp_arith.py --model whitebox/smollm2-135m \\
        -M method=esamp -M beta=0.1 -T k=4
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Sequence

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness.tasks import benchmark

DEFAULT_N = 16
DEFAULT_K = 4
DEFAULT_SEED = 0
DEFAULT_TEMPERATURE = 0.8
DEFAULT_MAX_TOKENS = 12
PROMPT = "What is {a} + {b}? Reply with the number only."

_INT = re.compile(r"-?\d+")


def make_samples(n: int = DEFAULT_N, seed: int = DEFAULT_SEED) -> list[Sample]:
    """``n`` seeded sums ``a + b`` with 1 <= a, b <= 60."""
    rng = random.Random(seed)
    samples = []
    for i in range(n):
        a, b = rng.randint(1, 60), rng.randint(1, 60)
        samples.append(
            Sample(id=f"sum-{i}", input=PROMPT.format(a=a, b=b), target=str(a + b),
                   metadata={"a": a, "b": b})
        )
    return samples


def last_int(text: str) -> str | None:
    """The last integer in a reply, or None. Why the last: a small model restates the sum
    before answering ("27 + 3 = 30"), and since both operands are >= 1 neither equals it."""
    found = _INT.findall(text.replace(",", ""))
    return found[-1] if found else None


def distinct_n(replies: Sequence[str], n: int) -> float:
    """Distinct n-grams / all n-grams over the replies' whitespace tokens (0 if none)."""
    grams = [
        tuple(words[i : i + n])
        for words in (r.split() for r in replies)
        for i in range(len(words) - n + 1)
    ]
    return len(set(grams)) / len(grams) if grams else 0.0


def spread(replies: Sequence[str]) -> float:
    """Mean pairwise cosine distance of the replies' MiniLM embeddings (0 for < 2)."""
    if len(replies) < 2:
        return 0.0
    from harness.models.minilm import MiniLM

    vecs = MiniLM.shared().encode([r or " " for r in replies])
    sims = vecs @ vecs.T
    k = len(replies)
    return float((k * k - sims.sum()) / (k * (k - 1)))


@solver
def sample_k(k: int = DEFAULT_K) -> Solver:
    """Draw ``k`` replies with seeds 0..k-1 (concurrently, so a batching model batches them);
    the first becomes the output, all go to ``state.metadata["replies"]``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        outputs = await asyncio.gather(
            *[model.generate(state.messages, config=GenerateConfig(seed=i)) for i in range(k)]
        )
        state.metadata["replies"] = [o.completion for o in outputs]
        state.output = outputs[0]
        state.messages.append(outputs[0].message)
        return state

    return solve


@scorer(metrics={"*": [mean()]})
def pass_at_k() -> Scorer:
    """pass@k, pass@1, distinct-1/2 and embedding spread of the k replies."""

    async def score(state: TaskState, target: Target) -> Score:
        replies = list(state.metadata.get("replies") or [state.output.completion])
        right = [last_int(r) == target.text for r in replies]
        return Score(
            value={
                "pass_at_k": float(any(right)),
                "pass_at_1": sum(right) / len(right),
                "distinct_1": distinct_n(replies, 1),
                "distinct_2": distinct_n(replies, 2),
                "spread": spread(replies),
            },
            answer=" | ".join(replies),
        )

    return score


@benchmark("esamp_arith")
@task
def esamp_arith(
    n: int = DEFAULT_N,
    k: int = DEFAULT_K,
    seed: int = DEFAULT_SEED,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> Task:
    """Sampled two-number sums, k replies per item, scored for pass@k and diversity.

    Args:
        n: Number of items.
        k: Replies per item.
        seed: Item generation seed.
        temperature: Sampling temperature (the same for every method compared).
        max_tokens: Reply budget.
    """
    return Task(
        dataset=MemoryDataset(make_samples(n, seed), name="esamp_arith"),
        solver=sample_k(k),
        scorer=pass_at_k(),
        config=GenerateConfig(temperature=temperature, max_tokens=max_tokens, top_p=0.95),
        version="1.0.0",
    )
