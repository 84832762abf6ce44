"""The ``intervention`` plug-in kind: a seeded, instance-level rewrite of a sample.

A factor of a study can bind to an intervention (option permutation, paraphrase, a
distractor, a number format...): the same items, rewritten the same way for a seed, so the
analysis can attribute a score change to the rewrite. The shipped ones are in
:mod:`harness.factorial.interventions`; any module adds one with :func:`intervention`.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

from inspect_ai.dataset import Sample

from harness.plugins.core import find, names, register

__all__ = ["Intervention", "Transform", "get_intervention", "intervention",
           "list_interventions"]

Transform = Callable[[Sample, random.Random], Sample]


@dataclass(frozen=True)
class Intervention:
    """A registered intervention: its name, what it does, and the seeded transform."""

    name: str
    description: str
    transform: Transform

    def apply(self, sample: Sample, seed: int = 0) -> Sample:
        """The rewritten sample (a copy); same id, valid target, provenance in metadata."""
        digest = hashlib.sha256(f"{self.name}:{seed}:{sample.id}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        out = self.transform(sample.model_copy(deep=True), rng)
        metadata = dict(out.metadata or {})
        history = list(metadata.get("interventions", []))
        history.append({"name": self.name, "seed": seed})
        metadata["interventions"] = history
        return out.model_copy(update={"id": sample.id, "metadata": metadata})


def intervention(name: str, description: str) -> Callable[[Transform], Transform]:
    """Register ``fn(sample, rng) -> Sample`` as the intervention ``name``."""

    def decorate(fn: Transform) -> Transform:
        register("intervention", name, fn, summary=description)
        return fn

    return decorate


def list_interventions() -> list[str]:
    """Registered intervention names, sorted."""
    return names("intervention")


def get_intervention(name: str) -> Intervention:
    """The intervention called ``name`` (the error lists the known ones)."""
    entry = find("intervention", name)
    if entry is None:
        raise ValueError(
            f"unknown intervention {name!r}; known: {', '.join(list_interventions())}")
    return Intervention(name, entry.summary, entry.obj)
