"""The verifiable reward the trainers optimise, from constraints given as data.

A method task hands the method its world as plain data (``environments/udm`` makes it; a
method imports no environment), so the trainer evaluates the same constraint language here,
vectorised over a batch: ``{"kind": "eq", "i", "j"}`` (positions hold the same token) and
``{"kind": "in", "i", "tokens"}`` (the position holds one of the tokens). The reward of a
string is the fraction of constraints it satisfies, in ``[0, 1]``; the benchmark re-scores
the final samples with its own verifier, so a trainer cannot grade itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

__all__ = ["check_constraints", "constraint_rewards", "transition_set", "within_transitions"]


def check_constraints(constraints: Sequence[Mapping[str, Any]], vocab: int,
                      length: int) -> None:
    """Raise ``ValueError`` naming the first malformed constraint."""
    if not constraints:
        raise ValueError("no constraints: the reward would be undefined")
    for n, c in enumerate(constraints):
        kind = c.get("kind")
        positions = [c.get("i")] + ([c.get("j")] if kind == "eq" else [])
        if kind not in ("eq", "in"):
            raise ValueError(f"constraint {n}: kind must be 'eq' or 'in', got {kind!r}")
        if any(not isinstance(p, int) or not 0 <= p < length for p in positions):
            raise ValueError(f"constraint {n}: positions must be in 0..{length - 1}: {c}")
        if kind == "in" and (not c.get("tokens")
                             or any(not 0 <= int(t) < vocab for t in c["tokens"])):
            raise ValueError(f"constraint {n}: tokens must be a non-empty list in "
                             f"0..{vocab - 1}: {c}")


def constraint_rewards(constraints: Sequence[Mapping[str, Any]],
                       x: torch.Tensor) -> torch.Tensor:
    """Fraction of ``constraints`` each row of ``x`` (``B x L`` tokens) satisfies."""
    hits = torch.zeros(x.shape[0], dtype=torch.float32)
    for c in constraints:
        if c["kind"] == "eq":
            hits += (x[:, c["i"]] == x[:, c["j"]]).float()
        else:
            allowed = torch.tensor([int(t) for t in c["tokens"]], dtype=x.dtype)
            hits += torch.isin(x[:, c["i"]], allowed).float()
    return hits / len(constraints)


def transition_set(corpus: torch.Tensor, vocab: int) -> torch.Tensor:
    """``V x V`` booleans: which adjacent token pairs occur in the corpus (``N x L``)."""
    seen = torch.zeros(vocab, vocab, dtype=torch.bool)
    seen[corpus[:, :-1].reshape(-1), corpus[:, 1:].reshape(-1)] = True
    return seen


def within_transitions(x: torch.Tensor, seen: torch.Tensor) -> torch.Tensor:
    """Per row, whether every adjacent pair was seen in the corpus: the trainer's own
    monitor of drift off the pretraining distribution."""
    return seen[x[:, :-1], x[:, 1:]].all(dim=1)
