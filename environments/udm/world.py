"""Short strings from a seeded sparse Markov chain, and a seeded verifiable reward on them.

Why this world: UDM-GRPO (Wang et al., arXiv 2604.18518) fine-tunes a pretrained uniform
discrete diffusion model with a reward on its final sample. A toy needs (a) a pretraining
distribution with structure the denoiser must learn (here: a first-order Markov chain in
which each token has only ``branching`` allowed successors, so "in support" is an exact,
checkable notion of staying on the pretraining distribution), and (b) a reward that is
exact, graded and reachable inside that support (here: the fraction of ``n_constraints``
seeded constraints a string satisfies, all of them drawn so that one in-support *witness*
string satisfies every one, so reward 1.0 is attainable without leaving the support).

Constraints are plain data (JSON-able dicts), so a method can be handed them as inputs:

* ``{"kind": "eq", "i": 1, "j": 6}``: positions 1 and 6 hold the same token;
* ``{"kind": "in", "i": 3, "tokens": [0, 4]}``: position 3 holds one of the listed tokens.

Everything is generated from ``random.Random(seed)``: same seed, same world, same corpus.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Constraint", "StringWorld", "constraint_reward", "in_support", "make_world",
           "render", "sample_corpus", "satisfied"]

Constraint = dict[str, Any]
ALPHABET = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class StringWorld:
    """A seeded world: the chain (start and transition weights), constraints, witness."""

    vocab: int
    length: int
    start: tuple[float, ...]
    transitions: tuple[tuple[float, ...], ...]
    constraints: tuple[Constraint, ...]
    witness: tuple[int, ...]
    seed: int

    def allowed(self, a: int, b: int) -> bool:
        """Whether token ``b`` may follow token ``a`` in the pretraining chain."""
        return self.transitions[a][b] > 0.0


def _weights(rng: random.Random, support: Sequence[int], vocab: int) -> tuple[float, ...]:
    raw = {v: rng.uniform(0.2, 1.0) for v in support}
    total = sum(raw.values())
    return tuple(raw.get(v, 0.0) / total for v in range(vocab))


def _draw(rng: random.Random, weights: Sequence[float]) -> int:
    return rng.choices(range(len(weights)), weights=weights, k=1)[0]


def _chain_string(rng: random.Random, start: Sequence[float],
                  transitions: Sequence[Sequence[float]], length: int) -> list[int]:
    s = [_draw(rng, start)]
    while len(s) < length:
        s.append(_draw(rng, transitions[s[-1]]))
    return s


def make_world(seed: int, vocab: int = 6, length: int = 8, branching: int = 3,
               n_constraints: int = 6) -> StringWorld:
    """A world from ``seed``: chain weights, a witness string drawn from the chain, and
    ``n_constraints`` constraints the witness satisfies (``eq`` and ``in`` alternating;
    an ``eq`` falls back to ``in`` when no unused equal pair is left)."""
    if vocab < 2 or vocab > len(ALPHABET):
        raise ValueError(f"vocab must be in 2..{len(ALPHABET)}, got {vocab}")
    if length < 2:
        raise ValueError(f"length must be at least 2, got {length}")
    if not 1 <= branching <= vocab:
        raise ValueError(f"branching must be in 1..{vocab}, got {branching}")
    if n_constraints < 1:
        raise ValueError(f"n_constraints must be at least 1, got {n_constraints}")
    rng = random.Random(seed)
    start = _weights(rng, range(vocab), vocab)
    transitions = tuple(_weights(rng, sorted(rng.sample(range(vocab), branching)), vocab)
                        for _ in range(vocab))
    witness = _chain_string(rng, start, transitions, length)
    pairs = [(i, j) for i in range(length) for j in range(i + 1, length)
             if witness[i] == witness[j]]
    rng.shuffle(pairs)
    constraints: list[Constraint] = []
    for k in range(n_constraints):
        if k % 2 == 0 and pairs:
            i, j = pairs.pop()
            constraints.append({"kind": "eq", "i": i, "j": j})
        else:
            i = rng.randrange(length)
            other = rng.choice([v for v in range(vocab) if v != witness[i]])
            constraints.append({"kind": "in", "i": i, "tokens": sorted({witness[i], other})})
    return StringWorld(vocab, length, start, transitions, tuple(constraints), tuple(witness),
                       seed)


def sample_corpus(world: StringWorld, n: int, seed: int) -> list[list[int]]:
    """``n`` strings drawn from the world's chain with ``random.Random(seed)``."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    rng = random.Random(seed)
    return [_chain_string(rng, world.start, world.transitions, world.length) for _ in range(n)]


def _check(c: Constraint, s: Sequence[int]) -> bool:
    if c["kind"] == "eq":
        return s[c["i"]] == s[c["j"]]
    if c["kind"] == "in":
        return s[c["i"]] in c["tokens"]
    raise ValueError(f"unknown constraint kind {c['kind']!r}")


def satisfied(constraints: Sequence[Constraint], s: Sequence[int]) -> int:
    """How many of ``constraints`` string ``s`` satisfies."""
    return sum(_check(c, s) for c in constraints)


def constraint_reward(constraints: Sequence[Constraint], s: Sequence[int]) -> float:
    """The verifiable reward: the fraction of ``constraints`` that ``s`` satisfies."""
    return satisfied(constraints, s) / len(constraints)


def in_support(world: StringWorld, s: Sequence[int]) -> bool:
    """Whether the pretraining chain can produce ``s`` (right length, tokens in range,
    a possible start, every transition allowed)."""
    if len(s) != world.length or any(not 0 <= v < world.vocab for v in s):
        return False
    if world.start[s[0]] <= 0.0:
        return False
    return all(world.allowed(a, b) for a, b in zip(s, s[1:], strict=False))


def render(s: Sequence[int]) -> str:
    """A string of letters (token 0 is ``a``) for logs and READMEs."""
    return "".join(ALPHABET[v] for v in s)
