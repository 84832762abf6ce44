"""Byte-scale needle-in-a-haystack items: a number hidden in repetitive filler, then the
needle's own words again as the cue; the answer is the number.

Pure domain code (no Inspect): the generator behind :mod:`benchmarks.probes.needle`. Why not
:mod:`environments.probes.passkey`: its instruction, needle sentence and question take over
200 bytes before any filler, and it asks a question ("What is the pass key?") that only an
instruction-following model answers. A tiny byte LM trained on 256-byte windows needs the
whole item inside one window and a cue it can *complete*, so here the context ends with the
needle's prefix and the model only has to continue it with the digits it saw earlier —
context recall, the capability the procedural-pretraining paper measures with its
needle-in-a-haystack task (Jiang et al., 2026: 10% -> 98% after Dyck pretraining). The
filler is the passkey probe's repetitive sentences, so nothing but the needle predicts the
digits (chance 1/10 a digit).

Format (``n_filler`` = 6, needle at sentence 2)::

    The grass is green. The sky is blue. The pass key is 4821. The sun is yellow. ...
    The pass key is

and the target is ``4821``.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any

from environments.probes.passkey import FILLER

__all__ = ["CUE", "NeedleItem", "digit_accuracy", "make_item", "make_items"]

CUE = "The pass key is "
NEEDLE = CUE + "{key}."


@dataclass(frozen=True)
class NeedleItem:
    """One item: the prompt (filler with the needle, newline, cue), the key, the depth."""

    id: str
    prompt: str
    target: str
    depth: float
    n_filler: int

    def record(self) -> dict[str, Any]:
        """Plain dict (dataset record)."""
        return asdict(self)


def make_item(index: int, seed: int, n_filler: int = 8, digits: int = 4) -> NeedleItem:
    """Item ``index`` of the seeded stream: same arguments -> same item. The needle goes
    before a seeded filler sentence (0..``n_filler``), so its distance to the cue varies."""
    if n_filler < 0 or digits < 1:
        raise ValueError("need n_filler >= 0 and digits >= 1")
    rng = random.Random(f"needle:{seed}:{index}:{n_filler}:{digits}")
    key = "".join(rng.choice("0123456789") for _ in range(digits))
    at = rng.randint(0, n_filler)
    start = rng.randrange(len(FILLER))
    sentences = [FILLER[(start + i) % len(FILLER)] for i in range(n_filler)]
    sentences.insert(at, NEEDLE.format(key=key))
    prompt = " ".join(sentences) + "\n" + CUE
    return NeedleItem(f"{seed}-{index}", prompt, key, at / max(n_filler, 1), n_filler)


def make_items(n: int, seed: int = 0, n_filler: int = 8, digits: int = 4) -> list[NeedleItem]:
    """``n`` seeded items."""
    if n < 0:
        raise ValueError("n must be >= 0")
    return [make_item(i, seed, n_filler, digits) for i in range(n)]


def digit_accuracy(completion: str, target: str) -> float:
    """Share of the key's digits the completion reproduces at the same position (leading
    whitespace ignored)."""
    if not target:
        return 0.0
    text = completion.lstrip()
    return sum(a == b for a, b in zip(text, target, strict=False)) / len(target)
