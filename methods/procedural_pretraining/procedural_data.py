"""Procedural training data as bytes: k-Dyck balanced brackets, copy and sort records.

Pure code (no Inspect, no torch): the seeded generators behind the
``procedural-pretraining`` recipe (:mod:`methods.procedural_pretraining.procedural`), which
front-loads a
share of these bytes before a byte-level LM sees natural text. Training data, not evaluation
items, so they live with the recipe (methods may not import ``environments``); the probes
that score the products (``harness/needle``, ``harness/induction``) draw their items from
:mod:`environments.probes`. The definitions follow the
generators of Jiang et al., "Procedural Pretraining: Warming Up Language Models with Abstract
Data" (2026, arXiv 2601.21725), translated from their separate token vocabularies to the tiny
LM's byte vocabulary:

* **k-Dyck** (:func:`dyck`): a balanced word over ``k`` bracket types built left to right
  with a stack: with an empty stack a random type opens; once the remaining length equals
  the stack depth every open bracket is closed; otherwise a random type opens with
  probability ``p_open`` (0.49, the paper's default) and the innermost bracket closes
  otherwise. No depth limit. The paper uses ``k = 64`` types and one word per training
  sequence. Bytes: type ``i`` opens as ``0x80 + i`` and closes as ``0xC0 + i`` (so
  ``k <= 64``). Why high bytes and not ``()[]{}``: the paper gives brackets their own
  tokens, disjoint from the natural-language vocabulary; bytes ``0x80..0xFF`` almost never
  occur in the (ASCII) Python corpus, so what can carry over to the corpus is the attention
  and MLP structure, not the embeddings of shared symbols — the paper's own reading of
  where the benefit lives. The bytes are not valid UTF-8, and need not be: the LM is
  trained on byte tensors, never on decoded text.
* **copy** (:func:`copy`, the paper's "identity" task): ``length`` random symbols, a
  separator, the same symbols again, a newline: ``x1..xL|x1..xL\\n``.
* **sort** (:func:`sort`): ``length`` random symbols, the separator, the symbols sorted by
  byte value, a newline: ``x1..xL|sorted(x)\\n``.

Copy and sort symbols are the 62 ASCII letters and digits (the paper draws from 99 tokens;
a byte LM has 62 alphanumerics that are not the separator or newline). Their default length
63 (the paper's sort uses 64) makes one record 128 bytes, so two records fill a 256-byte
training window exactly.

:func:`stream` fills an exact byte budget with records of one kind from one seed, each
record starting where the previous one ended (the last one truncated to the budget).
"""

from __future__ import annotations

import random
import string
from typing import Literal

__all__ = ["ALPHABET", "CLOSE", "COPY_LENGTH", "KINDS", "MAX_K", "OPEN", "P_OPEN",
           "SEPARATOR", "Kind", "copy", "dyck", "is_balanced", "record", "sort", "stream"]

Kind = Literal["dyck", "copy", "sort"]
KINDS: tuple[Kind, ...] = ("dyck", "copy", "sort")
OPEN = 0x80
"""Bracket type ``i`` opens as byte ``OPEN + i``."""
CLOSE = 0xC0
"""Bracket type ``i`` closes as byte ``CLOSE + i``."""
MAX_K = CLOSE - OPEN
P_OPEN = 0.49
ALPHABET = (string.digits + string.ascii_uppercase + string.ascii_lowercase).encode("ascii")
"""Copy/sort symbols, in byte order (so ``sorted`` of symbols is their order here)."""
SEPARATOR = b"|"
END = b"\n"
COPY_LENGTH = 63


def _check_k(k: int) -> None:
    if not 1 <= k <= MAX_K:
        raise ValueError(f"k must be in 1..{MAX_K} (bracket bytes 0x80..0xFF)")


def dyck(k: int, length: int, rng: random.Random, p_open: float = P_OPEN) -> bytes:
    """One balanced k-Dyck word of exactly ``length`` bytes (``length`` even, > 0)."""
    _check_k(k)
    if length <= 0 or length % 2:
        raise ValueError("a balanced word needs an even length > 0")
    out = bytearray()
    stack: list[int] = []
    remaining = length
    while remaining > 0:
        if not stack:
            kind = rng.randrange(k)
            out.append(OPEN + kind)
            stack.append(kind)
        elif remaining <= len(stack):
            out.append(CLOSE + stack.pop())
        elif rng.random() < p_open and len(stack) < remaining - 1:
            kind = rng.randrange(k)
            out.append(OPEN + kind)
            stack.append(kind)
        else:
            out.append(CLOSE + stack.pop())
        remaining -= 1
    return bytes(out)


def is_balanced(word: bytes, k: int) -> bool:
    """Whether ``word`` is a balanced k-Dyck word in the byte encoding above."""
    _check_k(k)
    stack: list[int] = []
    for byte in word:
        if OPEN <= byte < OPEN + k:
            stack.append(byte - OPEN)
        elif CLOSE <= byte < CLOSE + k:
            if not stack or stack.pop() != byte - CLOSE:
                return False
        else:
            return False
    return not stack


def _symbols(length: int, rng: random.Random) -> bytes:
    if length <= 0:
        raise ValueError("length must be > 0")
    return bytes(rng.choice(ALPHABET) for _ in range(length))


def copy(length: int, rng: random.Random) -> bytes:
    """One copy record: ``length`` random symbols, ``|``, the same symbols, ``\\n``."""
    x = _symbols(length, rng)
    return x + SEPARATOR + x + END


def sort(length: int, rng: random.Random) -> bytes:
    """One sort record: ``length`` random symbols, ``|``, them sorted by byte, ``\\n``."""
    x = _symbols(length, rng)
    return x + SEPARATOR + bytes(sorted(x)) + END


def record(kind: str, rng: random.Random, *, k: int = MAX_K, length: int | None = None,
           p_open: float = P_OPEN) -> bytes:
    """One record of ``kind``: a Dyck word of ``length`` (default 256) bytes, or a copy/sort
    record over ``length`` (default 63) symbols."""
    if kind == "dyck":
        return dyck(k, 256 if length is None else length, rng, p_open)
    if kind == "copy":
        return copy(COPY_LENGTH if length is None else length, rng)
    if kind == "sort":
        return sort(COPY_LENGTH if length is None else length, rng)
    raise ValueError(f"kind must be one of {', '.join(KINDS)}")


def stream(kind: str, n_bytes: int, seed: int, *, k: int = MAX_K, length: int | None = None,
           p_open: float = P_OPEN) -> bytes:
    """Exactly ``n_bytes`` of ``kind`` records from ``seed`` (same arguments, same bytes).

    Records are concatenated from the start and the last one is cut at the budget; a
    concatenation of Dyck words is itself balanced, so only a cut word is not.
    """
    if n_bytes < 0:
        raise ValueError("n_bytes must be >= 0")
    rng = random.Random(f"procedural:{kind}:{seed}")
    out = bytearray()
    while len(out) < n_bytes:
        out += record(kind, rng, k=k, length=length, p_open=p_open)
    return bytes(out[:n_bytes])
