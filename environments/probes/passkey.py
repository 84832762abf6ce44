"""Procedural passkey-in-filler items: a number hidden at a seeded depth in repetitive text.

Pure domain code (no Inspect): the generator behind :mod:`benchmarks.probes.passkey`. The
filler is the classic repetitive text of passkey-retrieval probes, so nothing in the context
but the needle carries information, and the only way to answer is to attend back to it. That
makes it a direct probe of what a KV-cache edit (compression, eviction, transfer) destroys.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any

FILLER = (
    "The grass is green.",
    "The sky is blue.",
    "The sun is yellow.",
    "Here we go.",
    "There and back again.",
)
INTRO = (
    "There is an important piece of information hidden inside a lot of irrelevant text. "
    "Find it and memorize it."
)
NEEDLE = "The pass key is {key}. Remember it. {key} is the pass key."
QUESTION = "What is the pass key?"


@dataclass(frozen=True)
class PasskeyItem:
    """One item: the full context, the key, and where the needle sits."""

    id: str
    context: str
    question: str
    key: str
    depth: float
    n_filler: int

    def record(self) -> dict[str, Any]:
        """Plain dict (dataset record)."""
        return asdict(self)


def make_item(index: int, seed: int, n_filler: int, digits: int = 5) -> PasskeyItem:
    """Item ``index`` of the seeded stream: same (seed, index, n_filler) -> same item."""
    rng = random.Random(f"passkey:{seed}:{index}:{n_filler}:{digits}")
    key = str(rng.randrange(10 ** (digits - 1), 10**digits))
    depth = rng.random()
    sentences = [FILLER[i % len(FILLER)] for i in range(n_filler)]
    at = round(depth * n_filler)
    sentences.insert(at, NEEDLE.format(key=key))
    context = f"{INTRO}\n\n" + " ".join(sentences)
    return PasskeyItem(f"{seed}-{index}", context, QUESTION, key, at / max(n_filler, 1), n_filler)


def make_items(n: int, seed: int = 0, n_filler: int = 20, digits: int = 5) -> list[PasskeyItem]:
    """``n`` seeded items with ``n_filler`` filler sentences each (about 5 tokens apiece)."""
    if n < 0 or n_filler < 0 or digits < 1:
        raise ValueError("n and n_filler must be >= 0 and digits >= 1")
    return [make_item(i, seed, n_filler, digits) for i in range(n)]
