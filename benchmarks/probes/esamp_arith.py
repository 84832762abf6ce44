"""ESamp probe: n sampled answers per arithmetic item; unbiased pass@k and diversity per item.

A verifiable task the ladder's small models solve only part of the time (seeded sums of
three numbers of 5..40 and products of a 2-digit by a 1-digit number), so drawing more
samples pays off and exploration can move pass@k. The ``chain`` family (version 2.1.0) asks
for worked answers instead: add 8 two-digit numbers one line at a time (``total + number =
new total``), then ``Answer: N``, about 150 tokens a reply, so an online method such as
ESamp's distiller gets ~150 decode steps per item rather than ~5 (issue 49); it is scored on
the number after the last ``Answer`` (the last integer when there is none).

Each item draws ``n`` replies at the same temperature (seeds 0..n-1; one item at a time, so
``whitebox/`` with ``batch_size >= n`` decodes an item's samples as one batch and ESamp's
per-prompt distiller sees all of them) and scores, per item:

* ``pass_at_K`` for K in ``ks``: the unbiased estimator ``1 - C(n-c, K) / C(n, K)`` of
  Chen et al. (2021) from the ``c`` of ``n`` replies whose last integer is the answer;
* ``distinct_1`` / ``distinct_2``: distinct unigrams / bigrams over all tokens of the n
  replies (whitespace tokens), a lexical diversity measure;
* ``answers``: distinct extracted answers / n, a semantic diversity measure for arithmetic;
* ``spread``: mean pairwise cosine distance of the replies' MiniLM embeddings.

    inspect eval benchmarks/probes/esamp_arith.py --model whitebox/qwen2.5-coder-0.5b \\
        -M batch_size=16 -T n=100 -T samples=16
    inspect eval benchmarks/probes/esamp_arith.py --model whitebox/qwen2.5-coder-0.5b \\
        -M batch_size=16 -M method=esamp -M beta=0.1 -T n=100 -T samples=16
    inspect eval benchmarks/probes/esamp_arith.py --model whitebox/qwen2.5-coder-0.5b \\
        -M batch_size=8 -M method=esamp -M beta=0.1 -T family=chain -T n=30 -T samples=8

Throughput (plain vs a method, interleaved in one process on the same items; JSON out):

    python -m benchmarks.probes.esamp_arith throughput --model qwen2.5-coder-0.5b \\
        --items 20 --beta 0.1 --out methods/studies/esamp/throughput.json
"""

from __future__ import annotations

import asyncio
import itertools
import random
import re
from collections.abc import Sequence
from math import comb
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness.plugins.benchmark import benchmark

DEFAULT_N = 100
DEFAULT_SAMPLES = 16
DEFAULT_KS = (1, 4, 16)
DEFAULT_SEED = 0
DEFAULT_TEMPERATURE = 0.8
DEFAULT_TOP_P = 0.95
DEFAULT_MAX_TOKENS = 6
DEFAULT_FAMILY = "mixed"
FAMILIES = ("mixed", "sum2", "chain")
DEFAULT_CHAIN_TERMS = 8
CHAIN_RANGE = (10, 99)
CHAIN_MAX_TOKENS = 384
"""Room for the worked answer: 8 lines of ~15 tokens (Qwen's tokenizer splits digits) plus
the answer line, with slack so a verbose reply is not cut before its ``Answer``."""
CHAIN_SYSTEM = "You are a careful calculator. Show your work."
CHAIN_USER = ("Add these {k} numbers: {numbers}.\nWork step by step: start from the first "
              "number and add the next number on each line, written as `total + number = "
              "new total`. After the last line, write `Answer: ` followed by the final total.")
SYSTEM = "Reply with the number only."
SUM2 = "What is {a} + {b}? Reply with the number only."
SUM3 = "What is {a} + {b} + {c}?"
PRODUCT = "What is {a} * {b}?"

_INT = re.compile(r"-?\d+")
_MARKED = re.compile(r"answer\W*(?:is\W*)?(-?\d+)", re.IGNORECASE)


def chain_records(n: int = DEFAULT_N, seed: int = DEFAULT_SEED,
                  terms: int = DEFAULT_CHAIN_TERMS) -> list[dict[str, Any]]:
    """``n`` seeded records of the ``chain`` family: ``terms`` numbers drawn uniformly from
    ``CHAIN_RANGE``, with their running totals (the worked answer's lines) and the sum. Ids
    ``chain-i`` depend only on the position, so item ``i`` is the same for any ``n``."""
    rng = random.Random(seed)
    records = []
    for i in range(n):
        numbers = [rng.randint(*CHAIN_RANGE) for _ in range(terms)]
        totals = list(itertools.accumulate(numbers))
        records.append({"id": f"chain-{i}", "numbers": numbers, "totals": totals,
                        "answer": totals[-1]})
    return records


def record_to_sample(record: dict[str, Any]) -> Sample:
    """One ``chain`` record as a Sample: the system and user turns asking for the worked sum,
    the sum as target, the numbers and running totals as metadata."""
    numbers = [int(x) for x in record["numbers"]]
    question = CHAIN_USER.format(k=len(numbers), numbers=", ".join(map(str, numbers)))
    return Sample(id=record["id"],
                  input=[ChatMessageSystem(content=CHAIN_SYSTEM),
                         ChatMessageUser(content=question)],
                  target=str(sum(numbers)),
                  metadata={"kind": "chain", "numbers": numbers,
                            "totals": list(itertools.accumulate(numbers))})


def make_samples(n: int = DEFAULT_N, seed: int = DEFAULT_SEED,
                 family: str = DEFAULT_FAMILY, terms: int = DEFAULT_CHAIN_TERMS) -> list[Sample]:
    """``n`` seeded items. ``mixed``: alternating three-number sums (5..40 each) and
    products (11..59 times 3..9), hard enough that a 0.5B model's pass@1 sits well below 1,
    easy enough that 16 samples often hold a right one (so pass@k can move). ``sum2``: the
    probe's first family, ``a + b`` with 1 <= a, b <= 60 as one user string (ids
    ``sum-i``), kept item for item because the RL recipes train and are scored on it.
    ``chain``: worked sums of ``terms`` numbers (:func:`chain_records`,
    :func:`record_to_sample`)."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    if family == "chain":
        return [record_to_sample(r) for r in chain_records(n, seed, terms)]
    rng = random.Random(seed)
    if family == "sum2":
        pairs = [(rng.randint(1, 60), rng.randint(1, 60)) for _ in range(n)]
        return [Sample(id=f"sum-{i}", input=SUM2.format(a=a, b=b), target=str(a + b),
                       metadata={"a": a, "b": b}) for i, (a, b) in enumerate(pairs)]
    samples = []
    for i in range(n):
        if i % 2 == 0:
            a, b, c = rng.randint(5, 40), rng.randint(5, 40), rng.randint(5, 40)
            question, answer, meta = SUM3.format(a=a, b=b, c=c), a + b + c, {"a": a, "b": b,
                                                                              "c": c}
        else:
            a, b = rng.randint(11, 59), rng.randint(3, 9)
            question, answer, meta = PRODUCT.format(a=a, b=b), a * b, {"a": a, "b": b}
        samples.append(
            Sample(id=f"arith-{i}", input=[ChatMessageSystem(content=SYSTEM),
                                           ChatMessageUser(content=question)],
                   target=str(answer), metadata={"kind": "sum3" if i % 2 == 0 else "product",
                                                 **meta})
        )
    return samples


def last_int(text: str) -> str | None:
    """The last integer in a reply, or None. Why the last: a small model restates the
    question before answering ("27 + 3 = 30")."""
    found = _INT.findall(text.replace(",", ""))
    return found[-1] if found else None


def marked_int(text: str) -> str | None:
    """The integer after the last ``Answer`` in a worked reply, else its last integer. Why:
    a worked reply's last integer may be a running total of a reply cut mid-work, while the
    marked one is what the model states as its result."""
    found = _MARKED.findall(text.replace(",", ""))
    return found[-1] if found else last_int(text)


EXTRACTORS = {"last": last_int, "marked": marked_int}
"""How a reply's answer is read, by name (a scorer argument must be plain data)."""


def unbiased_pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``c`` correct of ``n`` samples: ``1 - C(n-c, k) / C(n, k)``
    (the chance that ``k`` of the ``n`` drawn without replacement hold a correct one)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    return 1.0 - comb(n - c, k) / comb(n, k)


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


_ITEM_LOCKS: dict[int, asyncio.Lock] = {}


def _item_lock() -> asyncio.Lock:
    """One lock per event loop: items draw their samples one at a time, so a batching
    model gets each item's ``n`` requests as one burst and never mixes two items."""
    loop = asyncio.get_running_loop()
    return _ITEM_LOCKS.setdefault(id(loop), asyncio.Lock())


@solver
def sample_n(samples: int = DEFAULT_SAMPLES) -> Solver:
    """Draw ``samples`` replies with seeds 0..samples-1 (concurrently, so a batching model
    batches them); the first becomes the output, all go to ``state.metadata["replies"]``,
    their output metadata (a method's diagnostics) to ``state.metadata["reply_metadata"]``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        async with _item_lock():
            outputs = await asyncio.gather(
                *[model.generate(state.messages, config=GenerateConfig(seed=i))
                  for i in range(samples)]
            )
        state.metadata["replies"] = [o.completion for o in outputs]
        state.metadata["reply_metadata"] = [o.metadata or {} for o in outputs]
        state.metadata["reply_tokens"] = [o.usage.output_tokens if o.usage else None
                                          for o in outputs]
        state.output = outputs[0]
        state.messages.append(outputs[0].message)
        return state

    return solve


def score_replies(replies: Sequence[str], target: str,
                  ks: Sequence[int] = DEFAULT_KS, answer: str = "last") -> dict[str, float]:
    """Per-item values: unbiased pass@k for each ``k <= len(replies)``, the correct count,
    distinct-1/2 and the distinct-answer fraction (spread is added by the scorer); ``answer``
    names the extractor (``last``: last integer; ``marked``: after the last ``Answer``)."""
    extract = EXTRACTORS[answer]
    answers = [extract(r) for r in replies]
    n, c = len(replies), sum(a == target for a in answers)
    values = {f"pass_at_{k}": unbiased_pass_at_k(n, c, k) for k in ks if k <= n}
    values["pass_at_k"] = float(c > 0)  # pass@n: some reply is right (the first version's)
    values.update(correct=float(c), distinct_1=distinct_n(replies, 1),
                  distinct_2=distinct_n(replies, 2), answers=len(set(answers)) / n)
    return values


def reply_diagnostics(reply_tokens: Sequence[int | None],
                      reply_metadata: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the score's metadata records besides the values: the replies' token counts and,
    when a method reported them (ESamp's ``esamp_*`` keys), its diagnostics of the first
    reply. Why the first: an item's replies share one distiller, so they report the same
    loss curve; keeping one copy keeps the log small."""
    tokens = [t for t in reply_tokens if t is not None]
    out: dict[str, Any] = {"reply_tokens": list(reply_tokens),
                           "reply_tokens_mean": sum(tokens) / len(tokens) if tokens else None}
    first = reply_metadata[0] if reply_metadata else {}
    out.update({k: v for k, v in first.items() if k.startswith("esamp_")})
    return out


@scorer(metrics={"*": [mean()]})
def pass_at_k(ks: Sequence[int] = DEFAULT_KS, answer: str = "last") -> Scorer:
    """Unbiased pass@k, distinct-1/2, distinct answers and embedding spread of the replies
    (``answer``: the extractor, see :func:`score_replies`); the metadata holds the replies'
    token counts and a method's diagnostics (:func:`reply_diagnostics`)."""

    async def score(state: TaskState, target: Target) -> Score:
        replies = list(state.metadata.get("replies") or [state.output.completion])
        values = score_replies(replies, target.text, ks, answer)
        values["spread"] = spread(replies)
        metadata = reply_diagnostics(state.metadata.get("reply_tokens") or [],
                                     state.metadata.get("reply_metadata") or [])
        return Score(value=values, answer=" | ".join(replies), metadata=metadata)

    return score


@benchmark("esamp_arith")
@task
def esamp_arith(
    n: int = DEFAULT_N,
    samples: int = DEFAULT_SAMPLES,
    seed: int = DEFAULT_SEED,
    temperature: float = DEFAULT_TEMPERATURE,
    top_p: float = DEFAULT_TOP_P,
    max_tokens: int | None = None,
    family: str = DEFAULT_FAMILY,
    terms: int = DEFAULT_CHAIN_TERMS,
) -> Task:
    """Sampled arithmetic, ``samples`` replies per item, scored for pass@k and diversity.

    Args:
        n: Number of items.
        samples: Replies per item (the ``n`` of the pass@k estimator); pass@k is scored for
            k in 1, 4, 16 where k <= samples.
        seed: Item generation seed.
        temperature: Sampling temperature (the same for every method compared).
        top_p: Nucleus mass (ESamp reweights only the tokens that survive it).
        max_tokens: Reply budget (default: 6, or 384 for ``chain``).
        family: ``mixed`` (three-number sums and products), ``sum2`` (two-number sums,
            the items of version 1.0.0, which the RL recipes train on) or ``chain`` (worked
            8-number sums of >= 100 tokens, scored on the marked answer; version 2.1.0).
        terms: Numbers per ``chain`` item (the difficulty; ignored by other families).
    """
    chain = family == "chain"
    if max_tokens is None:
        max_tokens = CHAIN_MAX_TOKENS if chain else DEFAULT_MAX_TOKENS
    return Task(
        dataset=MemoryDataset(make_samples(n, seed, family, terms), name="esamp_arith"),
        solver=sample_n(samples),
        scorer=pass_at_k(answer="marked" if chain else "last"),
        config=GenerateConfig(temperature=temperature, max_tokens=max_tokens, top_p=top_p),
        version="2.1.0",
    )


def measure_throughput(model: str, items: int, beta: float, repeats: int = 1,
                       samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED,
                       max_tokens: int = DEFAULT_MAX_TOKENS) -> dict[str, Any]:
    """Tokens/s of plain sampling and of ESamp at ``beta`` on the same items, in one process.

    Why interleaved: the machine is shared, so load drifts; each item runs both arms back to
    back (order alternating ABBA across items and repeats), so drift hits both alike and the
    per-item ratio ``esamp / plain`` cancels it. The ratio's CI is over items (repeats
    averaged first), from :func:`harness.stats.mean_ci`. ``method`` is resolved through the
    registry (benchmarks never import methods).
    """
    import time

    from harness.models.whitebox import ladder_hf_copy, shared_lm
    from harness.plugins.whitebox_method import resolve_method
    from harness.stats import mean_ci

    lm = shared_lm(str(ladder_hf_copy(model)))[0]

    def run(prompt: str, arm: str) -> float:
        """Output tokens per second of one item's ``samples`` replies under ``arm``."""
        method = resolve_method("esamp", beta=beta) if arm == "esamp" else None
        t0 = time.perf_counter()
        gens = lm.generate_batch([prompt] * samples, max_new_tokens=max_tokens,
                                 temperature=DEFAULT_TEMPERATURE, top_p=DEFAULT_TOP_P,
                                 seeds=list(range(samples)), method=method)
        return sum(g.output_tokens for g in gens) / (time.perf_counter() - t0)

    prompts = [lm.chat_prompt([{"role": m.role, "content": m.text}  # type: ignore[union-attr]
                               for m in sample.input]) for sample in make_samples(items, seed)]
    run(prompts[0], "plain"), run(prompts[0], "esamp")  # warm-up, not recorded
    rows: list[dict[str, Any]] = []
    for i, (sample, prompt) in enumerate(zip(make_samples(items, seed), prompts, strict=True)):
        rates: dict[str, list[float]] = {"plain": [], "esamp": []}
        for r in range(repeats):
            order = ["plain", "esamp"] if (i + r) % 2 == 0 else ["esamp", "plain"]
            for arm in order:
                rates[arm].append(run(prompt, arm))
        plain = sum(rates["plain"]) / repeats
        esamp = sum(rates["esamp"]) / repeats
        rows.append({"item": sample.id, "plain_tok_s": plain, "esamp_tok_s": esamp,
                     "ratio": esamp / plain})
    ratio = mean_ci([row["ratio"] for row in rows])
    return {"model": model, "beta": beta, "items": items, "repeats": repeats,
            "samples": samples, "max_tokens": max_tokens,
            "ratio_mean": ratio.estimate, "ratio_ci": [ratio.lo, ratio.hi],
            "plain_tok_s_mean": sum(r["plain_tok_s"] for r in rows) / len(rows),
            "esamp_tok_s_mean": sum(r["esamp_tok_s"] for r in rows) / len(rows),
            "per_item": rows}


def _main(argv: Sequence[str] | None = None) -> None:
    import argparse
    import json
    import os

    parser = argparse.ArgumentParser(prog="python -m benchmarks.probes.esamp_arith")
    sub = parser.add_subparsers(dest="command", required=True)
    tp = sub.add_parser("throughput", help="plain vs esamp tokens/s, interleaved")
    tp.add_argument("--model", default="qwen2.5-coder-0.5b")
    tp.add_argument("--items", type=int, default=20)
    tp.add_argument("--repeats", type=int, default=1)
    tp.add_argument("--beta", type=float, default=0.1)
    tp.add_argument("--seed", type=int, default=DEFAULT_SEED)
    tp.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    load_start = list(os.getloadavg())
    result = measure_throughput(args.model, args.items, args.beta, args.repeats,
                                seed=args.seed)
    result["loadavg_start_end"] = [load_start, list(os.getloadavg())]
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=2)
    print(json.dumps({k: v for k, v in result.items() if k != "per_item"}))


if __name__ == "__main__":
    _main()
