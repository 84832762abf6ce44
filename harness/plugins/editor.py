"""The one interface every knowledge editor implements, and the ``@editor`` registry.

Why it lives in harness: benchmarks drive editors (MedVersa applies edits and probes) and
methods implement them; both depend on this interface, neither on the other. A benchmark
asks :func:`make_editor` for one by name, so a new editor is one module with ``@editor``.

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
from typing import Any, ClassVar, TypeVar

from harness.plugins.core import get, names, register

E = TypeVar("E", bound="type[Editor]")

EditTriple = tuple[str, str, str]
"""A training record for editors that learn: (edit prompt, its paraphrase, an unrelated
locality prompt). Benchmarks pass their train split as these; editors never load data."""

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

    @classmethod
    def build(cls, *, model: Any = None, tokenizer: Any = None,
              train: Sequence[EditTriple] | None = None) -> Editor:
        """A fresh editor. White-box editors take the HF ``model`` and ``tokenizer``; editors
        that learn take ``train``. The default ignores all three."""
        return cls()

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

    def save_state(self) -> dict[str, Any]:
        """What a long sequence of edits needs to continue later (a lifelong run cut short by
        a session's end). Plain lists, strings, numbers and tensors only, so it round-trips
        through ``torch.save`` / ``torch.load(weights_only=True)``.

        The default holds the edits alone: an editor whose index is a function of its edits
        (a knowledge base) is rebuilt by applying them again. Editors whose state is the
        product of the order of work (weights, codebooks) override this and
        :meth:`load_state`."""
        return {"edits": [[e.prompt, e.target] for e in self.edits]}

    def load_state(self, state: dict[str, Any]) -> None:
        """Back to the state :meth:`save_state` returned (the default: reset, then apply the
        saved edits again in one call)."""
        self.reset()
        edits = [Edit(prompt, target) for prompt, target in state["edits"]]
        if edits:
            self.apply(edits)

    def settings(self) -> dict[str, Any]:
        """The editor's scalar settings (its public int/float/str/bool attributes): a saved
        state is only loaded into an editor whose settings match the one that saved it."""
        def scalar(v: Any) -> bool:
            return isinstance(v, int | float | str | bool)

        return {k: list(v) if isinstance(v, list | tuple) else v
                for k, v in sorted(vars(self).items())
                if not k.startswith("_") and k not in self._STATE
                and (scalar(v) or (isinstance(v, list | tuple) and all(map(scalar, v))))}

    _STATE: ClassVar[frozenset[str]] = frozenset({"edits", "updates"})
    """Public attributes that are state, not settings (a subclass adds its own)."""

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


def editor(name: str, *, whitebox: bool = False, extra: str | None = None,
           summary: str | None = None) -> Callable[[E], E]:
    """Register an :class:`Editor` subclass as ``-T editor=name``.

    Args:
        name: The editor's name.
        whitebox: True when it needs the HF model (it hooks forward passes).
        extra: The optional extra it needs, if any.
        summary: One line for ``harness list`` (default: the class docstring's first line).
    """

    def decorate(cls: E) -> E:
        register("editor", name, cls, summary=summary, extra=extra, whitebox=whitebox)
        return cls

    return decorate


def editor_names() -> list[str]:
    """Registered editor names, sorted."""
    return names("editor")


def is_whitebox(name: str) -> bool:
    """True when editor ``name`` needs an HF model (``whitebox/`` or ``hf/``)."""
    return bool(get("editor", name).meta.get("whitebox"))


def make_editor(name: str, model: Any = None, tokenizer: Any = None, *,
                train: Sequence[EditTriple] | None = None) -> Editor:
    """A fresh editor by registered name (the error lists the registered ones)."""
    entry = get("editor", name)
    if entry.meta.get("whitebox") and (model is None or tokenizer is None):
        raise ValueError(f"{name} is white-box: pass the HF model and tokenizer")
    cls = entry.load()
    built: Editor = cls.build(model=model, tokenizer=tokenizer, train=train)
    return built
