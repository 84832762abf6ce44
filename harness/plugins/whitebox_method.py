"""Hooks a white-box method registers on the ``whitebox/`` decode loop, and the method registry.

Why a seam of its own: methods that need a model's internals (ESamp reads hidden states and
reweights logits; xKV / ArborKV / SCD rewrite the KV cache) all need the same four places in
a decode loop, and none of them should copy the loop. A method is a :class:`Method` subclass
that overrides only the hooks it needs; the loop in :mod:`harness.models.whitebox_decode`
calls them in this order for one batch of requests::

    start(lm, states)                         per-request state (RequestState.data) set up
    prefill forward  -> after_prefill(lm, view, states) -> new cache or None (keep)
    loop:  process_logits(lm, logits, view, states) -> logits   (before sampling)
           sample, forward one token -> after_step(lm, view, states) -> new cache or None
    finish(lm, states)

``view`` (a :class:`StepView`) carries the tokens fed, the residual stream at the layers the
method asked for (``hidden_layers``), the outputs of named submodules it asked for
(``capture_modules``, e.g. ``model.layers.0.input_layernorm``) and the KV cache (a
transformers ``Cache``) after that forward. Returning a cache from ``after_prefill`` /
``after_step`` replaces the one the loop continues from (compression, eviction).

Methods live in the suite's one registry (:mod:`harness.registry`, kind
``whitebox_method``). ``-M method=NAME`` on ``whitebox/`` resolves NAME there, and every
other ``-M`` arg the provider does not know goes to the factory as a keyword
(``-M method=esamp -M beta=0.5`` calls ``ESamp(beta=0.5)``). Register a method with ONE
decorator on its class::

    @whitebox_method("esamp")
    class ESamp(Method): ...

    resolve_method("esamp", beta=0.1)                    # -> a Method instance

(a module that imports torch at module level is declared by import path in its package's
plugin module instead, so listing never imports torch).

``-M method=package.module:Factory`` also works without registering. Per-request results
reach Inspect through ``state.data["metadata"]`` (a dict): the ``whitebox/`` provider merges
it into ``ModelOutput.metadata`` (e.g. ``{"kv": {"bytes": ...}}``).
Directly, without Inspect: ``lm.generate_batch(prompts, method=resolve_method("esamp", beta=0.1))``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from harness.plugins.core import find, names, register, resolve_target

__all__ = [
    "Method",
    "RequestState",
    "StepView",
    "method_names",
    "register_method",
    "resolve_method",
    "whitebox_method",
]


@dataclass
class RequestState:
    """One request (one row of a batch) for the whole decode: a method keeps its per-request
    objects in ``data`` (a distiller, a compressed cache, counters)."""

    index: int
    """Row in the batch."""
    prompt: str
    """The rendered prompt text."""
    seed: int
    """The request's sampling seed (the loop samples row ``index`` with its own generator)."""
    tokens: list[int] = field(default_factory=list)
    """Tokens generated so far."""
    done: bool = False
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepView:
    """What one forward pass exposed. Tensors are batch-first; ``step == 0`` is the prefill
    (``input_ids`` ``[batch, prompt_len]``), later steps feed one token per row."""

    step: int
    input_ids: Any
    attention_mask: Any
    """``[batch, cache_len + fed]``: 0 on left padding."""
    hidden: dict[int, Any]
    """Residual stream ``[batch, fed, hidden]`` by layer index (0 = embeddings, -1 = last)."""
    captures: dict[str, Any]
    """Output ``[batch, fed, ...]`` of each module named in ``Method.capture_modules``."""
    cache: Any
    """The KV cache after this forward (transformers ``Cache``)."""
    logits: Any = None
    """Next-token logits ``[batch, vocab]`` at the last position (before any method)."""
    keep: Any = None
    """Set on the view passed to ``process_logits``: bool ``[batch, vocab]``, the tokens that
    survive top-k/top-p of the unmodified distribution (all True when decoding greedily)."""


class Method:
    """A white-box method: override the hooks you need; the defaults change nothing."""

    name: str = "plain"
    hidden_layers: tuple[int, ...] = ()
    """Residual-stream layers to expose in ``StepView.hidden`` (indices into HF's
    ``hidden_states``: 0 = embeddings, ``n_layers`` or -1 = after the last layer + norm)."""
    capture_modules: tuple[str, ...] = ()
    """Dotted submodule names of ``lm.model`` whose outputs go to ``StepView.captures``."""

    def start(self, lm: Any, states: Sequence[RequestState]) -> None:
        """Before the prefill: set up per-request state (and, if they depend on the model,
        set ``hidden_layers`` / ``capture_modules``: the loop reads them after this call).
        One instance serves a provider's batches one at a time (the provider holds a lock)."""

    def after_prefill(self, lm: Any, view: StepView, states: Sequence[RequestState]) -> Any:
        """After the prompt's forward pass; return a replacement cache or None."""
        return None

    def process_logits(
        self, lm: Any, logits: Any, view: StepView, states: Sequence[RequestState]
    ) -> Any:
        """Next-token logits ``[batch, vocab]`` before temperature and sampling; return the
        logits to sample from (tokens outside ``view.keep`` are masked afterwards anyway)."""
        return logits

    def after_step(self, lm: Any, view: StepView, states: Sequence[RequestState]) -> Any:
        """After each one-token forward; return a replacement cache or None."""
        return None

    def finish(self, lm: Any, states: Sequence[RequestState]) -> None:
        """After the last step (e.g. record per-request statistics in ``state.data``)."""


MethodFactory = Callable[..., Method]
M = TypeVar("M", bound=Callable[..., Method])


def whitebox_method(
    name: str, *, extra: str | None = "cpu", summary: str | None = None
) -> Callable[[M], M]:
    """Register a :class:`Method` subclass (or factory) as ``-M method=name`` on
    ``whitebox/``. White-box methods need torch, hence ``extra="cpu"`` by default."""

    def decorate(factory: M) -> M:
        register("whitebox_method", name, factory, summary=summary, extra=extra)
        return factory

    return decorate


register("whitebox_method", "plain", Method, summary="No method: the plain decode loop")


def register_method(name: str, factory: MethodFactory) -> None:
    """Make ``-M method=name`` resolve to ``factory`` at run time (no decorator needed)."""
    register("whitebox_method", name, factory, extra=None)


def method_names() -> list[str]:
    """Registered method names, sorted."""
    return names("whitebox_method")


def resolve_method(name: str | Method | None, **options: Any) -> Method:
    """The :class:`Method` for ``name`` (registered, or ``module:attr``) built with ``options``.

    Unknown options are an error that names the method, so a typo in ``-M`` never passes
    silently.
    """
    if isinstance(name, Method):
        if options:
            raise ValueError(f"options {sorted(options)} given with a Method instance")
        return name
    key = name or "plain"
    factory: MethodFactory
    if ":" in key:
        factory = resolve_target(key)
    else:
        entry = find("whitebox_method", key)
        if entry is None:
            raise ValueError(f"unknown whitebox method {key!r}; registered: {method_names()}")
        factory = entry.load()
    try:
        method = factory(**options)
    except TypeError as err:
        raise ValueError(f"bad options for method {key!r}: {err}") from err
    if not isinstance(method, Method):
        raise TypeError(f"method {key!r} built {type(method).__name__}, not a Method")
    return method
