"""Synthetic training streams for recipes whose claim is about a skill, not a corpus.

Training data, not evaluation items: the probes that score the products draw their items
from :mod:`environments.probes` with other seeds (methods do not import environments, so the
format is restated here: lowercase letters, one newline between copies, as in the
induction probe's prompts).
"""

from __future__ import annotations

import random
import string

__all__ = ["ALPHABET", "SEPARATOR", "induction_stream"]

ALPHABET = string.ascii_lowercase
SEPARATOR = "\n"


def induction_stream(n_bytes: int, seed: int, min_length: int = 8,
                     max_length: int = 40) -> str:
    """A seeded training text of repeated random strings, ``S\\nS\\n`` per segment with
    ``len(S)`` uniform in ``[min_length, max_length]``, cut to ``n_bytes`` characters.

    Why varying lengths: with one fixed length a model could copy by a fixed relative offset
    (a positional head, which symmetric Q=K attention under RoPE can still form); varying
    the length leaves content matching — attend to the position after the earlier copy of
    the current letter — as the only way to predict the second copy."""
    if n_bytes < 0 or not 1 <= min_length <= max_length:
        raise ValueError("need n_bytes >= 0 and 1 <= min_length <= max_length")
    rng = random.Random(f"induction-train:{seed}:{min_length}:{max_length}")
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        letters = "".join(rng.choices(ALPHABET, k=rng.randint(min_length, max_length)))
        segment = letters + SEPARATOR + letters + SEPARATOR
        parts.append(segment)
        size += len(segment)
    return "".join(parts)[:n_bytes]
