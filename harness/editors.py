"""The one interface every knowledge editor implements.

An editor holds a knowledge base of edits (``apply`` appends, ``reset`` empties it) and
changes how the model is queried: black-box editors return a text ``context`` to put before
the query; white-box editors may also install forward ``hooks`` on an HF model for the
duration of one query. ``retrieve`` tells the scorer which stored edit a query used, so
retrieval precision and false retrievals on locality prompts can be measured for every
editor with the same code. Editors never score anything themselves.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

ALL_EDITS = -1
"""``retrieve`` result of editors that use every stored edit for every query (IKE)."""


@dataclass(frozen=True)
class Edit:
    """One fact to inject: asking ``prompt`` should now give ``target``."""

    prompt: str
    target: str

    def sentence(self) -> str:
        """The knowledge sentence ``prompt + " " + target`` (spec §4.2, no double space)."""
        return f"{self.prompt.rstrip()} {self.target.strip()}"


class Editor(ABC):
    """Base class: a knowledge base of edits plus the way queries see it."""

    name: ClassVar[str] = "editor"

    def __init__(self) -> None:
        self.edits: list[Edit] = []

    def apply(self, edits: Sequence[Edit]) -> None:
        """Add edits to the knowledge base (batch = one call, sequential = one call each)."""
        self.edits.extend(edits)
        self._added(list(edits))

    def _added(self, edits: list[Edit]) -> None:  # noqa: B027 - optional hook
        """Hook for subclasses that index new edits (embeddings, soft prompts)."""

    def reset(self) -> None:
        """Back to the unedited model: empty knowledge base."""
        self.edits.clear()
        self._cleared()

    def _cleared(self) -> None:  # noqa: B027 - optional hook
        """Hook for subclasses that hold indexes."""

    @abstractmethod
    def retrieve(self, queries: Sequence[str]) -> list[int | None]:
        """Per query: index of the edit used, ``None`` for none, :data:`ALL_EDITS` for all."""

    def context(self, query: str) -> str:
        """Text placed before ``query`` (empty when the query is answered unedited)."""
        return self.contexts([query])[0]

    def contexts(self, queries: Sequence[str]) -> list[str]:
        """:meth:`context` for many queries at once (retrieval editors batch the encoder)."""
        return [self._context_for(hit) for hit in self.retrieve(queries)]

    def _context_for(self, hit: int | None) -> str:
        """Default rendering: a retrieved edit as one line, all edits as lines, or nothing."""
        if hit is None or not self.edits:
            return ""
        chosen = self.edits if hit == ALL_EDITS else [self.edits[hit]]
        return "".join(f"{e.sentence()}\n" for e in chosen)

    def hook_keys(self, queries: Sequence[str]) -> list[Hashable]:
        """Per query, a value equal for queries that get the same hooks (so they can share a
        batch); ``None`` for editors without hooks."""
        return [None for _ in queries]

    @contextlib.contextmanager
    def hooks(self, model: Any, query: str) -> Iterator[int]:
        """White-box hooks on ``model`` for forward passes inside the block; yields how many
        positions the hooks prepend. Hooks drop those positions' logits themselves, so
        outputs stay aligned with the query tokens."""
        yield 0

    def answer(self, prompt: str, generate: Callable[[str], str]) -> str:
        """Black-box use: the edited query through any text-in/text-out ``generate``."""
        return generate(self.context(prompt) + prompt)
