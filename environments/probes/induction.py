"""Procedural induction items: a random letter string, then its first letters again; the
answer is the letters that followed them the first time.

Pure domain code (no Inspect): the generator behind :mod:`benchmarks.probes.induction`.
Continuing a repeated random string needs an induction circuit (Olsson et al., 2022,
"In-context Learning and Induction Heads"): at the current letter, attend to the position
*after* its earlier occurrence and copy what is there. That attention is directional — the
query at one position must match a key that differs from its own — which is what sharing
the query and key projections (Q=K) takes away; nothing in a random string is predictable
from training data, so only copying scores above chance (1/26 per letter).
"""

from __future__ import annotations

import random
import string
from dataclasses import asdict, dataclass
from typing import Any

ALPHABET = string.ascii_lowercase
SEPARATOR = "\n"


@dataclass(frozen=True)
class InductionItem:
    """One item: the prompt (string, separator, its first ``prefix`` letters) and target."""

    id: str
    prompt: str
    target: str
    length: int
    prefix: int

    def record(self) -> dict[str, Any]:
        """Plain dict (dataset record)."""
        return asdict(self)


def make_item(index: int, seed: int, length: int = 24, prefix: int = 8,
              answer: int = 8) -> InductionItem:
    """Item ``index`` of the seeded stream: same arguments -> same item."""
    if not 1 <= prefix < length or answer < 1 or prefix + answer > length:
        raise ValueError("need 1 <= prefix < length and prefix + answer <= length")
    rng = random.Random(f"induction:{seed}:{index}:{length}:{prefix}:{answer}")
    letters = "".join(rng.choice(ALPHABET) for _ in range(length))
    prompt = letters + SEPARATOR + letters[:prefix]
    return InductionItem(f"{seed}-{index}", prompt, letters[prefix:prefix + answer],
                         length, prefix)


def make_items(n: int, seed: int = 0, length: int = 24, prefix: int = 8,
               answer: int = 8) -> list[InductionItem]:
    """``n`` seeded items."""
    if n < 0:
        raise ValueError("n must be >= 0")
    return [make_item(i, seed, length, prefix, answer) for i in range(n)]


def copy_accuracy(completion: str, target: str) -> float:
    """Share of the target's letters the completion reproduces at the same position
    (leading whitespace of the completion ignored)."""
    if not target:
        return 0.0
    text = completion.lstrip()
    return sum(a == b for a, b in zip(text, target, strict=False)) / len(target)
