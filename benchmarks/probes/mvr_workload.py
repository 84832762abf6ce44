"""MVR-cache probe: a paraphrase + near-miss workload for semantic caches, with exact gold.

Each base item is an arithmetic problem (``environments.arithmetic``). The workload holds,
per item, its original prompt, surface variants made by the factorial engine's instance
interventions (``paraphrase`` with two seeds, ``distractor``: same item, same answer), one
exact repeat, and near-miss prompts (one operand changed, so the answer differs) in the
original and a paraphrased wording. Items are shuffled with a seed, so a cache meets
variants and near misses in a fixed, mixed order. Behind an always-right model
(``scripted/arith-oracle``) every wrong answer is a wrong cache hit, so the scorer's
``error`` is exactly the cache's error rate::

    inspect eval benchmarks/probes/mvr_workload.py \\
        --model mvrcache/scripted/arith-oracle -M delta=0.1 -M mode=mvr
    inspect eval benchmarks/probes/mvr_workload.py \\
        --model mvrcache/scripted/arith-oracle -M delta=0.1 -M mode=single

Scores per prompt: ``hit`` (served from cache), ``error`` (served and wrong), ``correct``,
and ``near_miss_hit`` / ``near_miss_error`` on near-miss prompts (0 elsewhere).
"""

from __future__ import annotations

import random
import re

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

from benchmarks.arithmetic.arithmetic import record_to_sample
from environments.arithmetic import evaluate, generate_problems
from harness.factorial.interventions import apply
from harness.plugins.benchmark import benchmark

DEFAULT_N = 24
DEFAULT_SEED = 0
VARIANTS: tuple[tuple[str, int], ...] = (("paraphrase", 1), ("paraphrase", 2), ("distractor", 3))
"""(intervention, seed) pairs that give an item's same-answer surface forms."""

_INT = re.compile(r"-?\d+")


def near_miss(expression: str, rng: random.Random) -> str:
    """The expression with one operand moved by 1-9, chosen so the value changes."""
    tokens = expression.split()
    for _ in range(100):
        j = 2 * rng.randrange((len(tokens) + 1) // 2)
        moved = list(tokens)
        moved[j] = str(max(1, int(tokens[j]) + rng.choice([-1, 1]) * rng.randint(1, 9)))
        candidate = " ".join(moved)
        if evaluate(candidate) != evaluate(expression):
            return candidate
    raise ValueError(f"no near miss found for {expression!r}")


def _with(sample: Sample, sample_id: str, kind: str, item: str) -> Sample:
    metadata = {**(sample.metadata or {}), "kind": kind, "item": item}
    return sample.model_copy(update={"id": sample_id, "metadata": metadata})


def make_workload(n: int = DEFAULT_N, seed: int = DEFAULT_SEED) -> list[Sample]:
    """``n`` items x (original, 3 variants, 1 exact repeat, 2 near misses), shuffled."""
    rng = random.Random(seed)
    out: list[Sample] = []
    for problem in generate_problems(n, seed=seed, max_terms=3):
        record = {"id": problem.id, "expression": problem.expression,
                  "answer": problem.answer, "n_terms": problem.n_terms}
        base = record_to_sample(record)
        out.append(_with(base, f"{problem.id}-orig", "original", problem.id))
        out.append(_with(base, f"{problem.id}-repeat", "repeat", problem.id))
        for name, variant_seed in VARIANTS:
            varied = apply(base, name, variant_seed)
            out.append(_with(varied, f"{problem.id}-{name}{variant_seed}", "variant", problem.id))
        miss_expr = near_miss(problem.expression, rng)
        miss = record_to_sample({**record, "expression": miss_expr,
                                 "answer": evaluate(miss_expr)})
        out.append(_with(miss, f"{problem.id}-near", "near_miss", problem.id))
        out.append(_with(apply(miss, "paraphrase", 4), f"{problem.id}-near-para", "near_miss",
                         problem.id))
    rng.shuffle(out)
    return out


@scorer(metrics={"*": [mean()]})
def cache_outcome() -> Scorer:
    """Hit / error / correctness of each prompt, from the cache's output metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        info = (state.output.metadata or {}).get("mvr_cache", {})
        match = _INT.search(state.output.completion.replace(",", ""))
        correct = bool(match and match.group(0) == target.text)
        hit = bool(info.get("hit"))
        near = state.metadata.get("kind") == "near_miss"
        return Score(
            value={
                "hit": float(hit),
                "error": float(hit and not correct),
                "correct": float(correct),
                "near_miss_hit": float(hit and near),
                "near_miss_error": float(hit and near and not correct),
            },
            answer=state.output.completion,
            metadata={"similarity": info.get("similarity"), "kind": state.metadata.get("kind")},
        )

    return score


@benchmark("mvr_workload")
@task
def mvr_workload(n: int = DEFAULT_N, seed: int = DEFAULT_SEED) -> Task:
    """Paraphrases, exact repeats and near misses of arithmetic items for a semantic cache.

    Args:
        n: Number of base items (each gives 7 prompts).
        seed: Item and order seed.
    """
    return Task(
        dataset=MemoryDataset(make_workload(n, seed), name="mvr_workload"),
        solver=generate(),
        scorer=cache_outcome(),
        config=GenerateConfig(temperature=0.0, max_tokens=16),
        version="1.0.0",
    )
