"""White-box MedREK: retrieved edits enter the model as soft prompts through forward hooks.

Spec §4.4: the top-1 edit passed by the prototype gate contributes T soft-prompt vectors that
are prepended to the input of transformer layer 0 (after the token embeddings); the logits at
those T positions are dropped, so outputs align with the query's own tokens. Retrieval is the
same key-aware retriever as :class:`~methods.editors.retrieval.RetrievalEditor` (MiniLM, the
shared query–key projection and prototype, trained contrastively on the train split).

Two editors share the hook mechanism:

* ``medrek`` (:class:`MedREKEditor`), the published method in small: the soft prompt is
  T = 3 vectors from the trained value head and attention prompt encoder of
  :mod:`.medrek_train`, trained through the frozen model with the reliability, generality
  and KL-locality losses on the benchmark's train split (cached on disk by content key).
* :class:`SoftPromptEditor` (not registered), the untrained mechanism: the soft prompt is
  the token-embedding sequence of the knowledge sentence, i.e. the retrieved edit's own
  text entered as embeddings (T = its token count). It scores like ``retrieval`` and is
  kept as the hook mechanism's reference in tests.

Hooks are registered on the HF ``*ForCausalLM`` module: a pre-hook (with kwargs) on its base
model replaces ``input_ids`` by ``inputs_embeds`` with the soft prompt in front, and a forward
hook on the outer model cuts the first T logits. Both are removed when the context exits.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from harness.plugins.editor import Edit, Editor, EditTriple, editor
from methods.editors.retrieval import RetrievalEditor, Retriever, default_encoder

if TYPE_CHECKING:
    from methods.medversa.medrek_train import PromptModules, TrainConfig, TrainReport


class PromptEncoder:
    """``soft = value + value @ delta`` (``delta`` zero until trained)."""

    def __init__(self, hidden: int) -> None:
        import torch

        self.delta = torch.zeros(hidden, hidden)

    def __call__(self, value: Any) -> Any:
        """Soft prompt ``[T, hidden]`` from a value ``[T, hidden]``."""
        return value + value @ self.delta.to(value.dtype)


def base_model(model: Any) -> Any:
    """The decoder stack inside an HF causal LM (``model.model`` for Llama-style models)."""
    inner = getattr(model, "model", None) or getattr(model, "transformer", None)
    if inner is None:
        raise TypeError(f"{type(model).__name__}: no .model/.transformer decoder to hook")
    return inner


class SoftPromptEditor(RetrievalEditor):
    """Retrieval + soft-prompt injection at layer 0 (white-box only: no text context); the
    soft prompt is the knowledge sentence's token embeddings (untrained reference)."""

    name = "soft-text"

    def __init__(self, model: Any, tokenizer: Any, retriever: Retriever | None = None,
                 encoder: PromptEncoder | None = None,
                 train: Sequence[EditTriple] | None = None) -> None:
        super().__init__(retriever, train)
        self.model = model
        self.tokenizer = tokenizer
        self.encoder = encoder or PromptEncoder(int(model.config.hidden_size))
        self.soft_prompts: list[Any] = []

    @classmethod
    def build(cls, *, model: Any = None, tokenizer: Any = None,
              train: Sequence[EditTriple] | None = None) -> Editor:
        """The white-box editor on ``model`` with a retriever trained on ``train``."""
        if model is None or tokenizer is None:
            raise ValueError(f"{cls.name} is white-box: pass the HF model and tokenizer")
        return cls(model, tokenizer, train=train)

    def _added(self, edits: list[Edit]) -> None:
        import torch

        super()._added(edits)
        embed = self.model.get_input_embeddings()
        with torch.inference_mode():
            for e in edits:
                ids = self.tokenizer(e.sentence() + "\n", add_special_tokens=False).input_ids
                value = embed(torch.tensor(ids, device=self.model.device))
                self.soft_prompts.append(self.encoder(value).detach())

    def _cleared(self) -> None:
        super()._cleared()
        self.soft_prompts.clear()

    def contexts(self, queries: Sequence[str]) -> list[str]:
        """No text context: the edit reaches the model only through the hooks."""
        return ["" for _ in queries]

    def answer(self, prompt: str, generate: Any) -> str:
        """A black-box model cannot take soft prompts."""
        raise TypeError(f"{self.name} is white-box only: score it on an HF model")

    def hook_keys(self, queries: Sequence[str]) -> list[Hashable]:
        """The retrieved edit decides the soft prompt, so queries with one hit share hooks."""
        if not self.edits:
            return [None for _ in queries]
        return [None if hit is None else (self.name, self._prompt_tag(), self.edits[hit])
                for hit in self.retrieve(queries)]

    def _prompt_tag(self) -> Hashable:
        """What, besides the edit and the model, decides the soft prompt (a forward cache
        keys on it): nothing for the embedded-text prompt."""
        return "embedded-text"

    def soft_prompt_for(self, query: str) -> Any:
        """The soft prompt ``[T, hidden]`` the query retrieves, or ``None`` (batched
        generation builds its rows' embeddings from this instead of the hooks)."""
        hit = self.retrieve([query])[0] if self.edits else None
        return None if hit is None else self.soft_prompts[hit]

    @contextlib.contextmanager
    def hooks(self, model: Any, query: str) -> Iterator[int]:
        """Install the retrieved soft prompt (if any) for forward passes inside the block."""
        hit = self.retrieve([query])[0] if self.edits else None
        if hit is None:
            yield 0
            return
        soft = self.soft_prompts[hit]
        n_soft = int(soft.shape[0])
        inner = base_model(model)

        def pre_hook(module: Any, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
            import torch

            ids = kwargs.get("input_ids")
            if ids is None and args:
                ids, args = args[0], args[1:]
            if ids is not None:
                embeds = module.get_input_embeddings()(ids)
            else:
                embeds = kwargs["inputs_embeds"]
            prefix = soft.to(embeds.dtype).unsqueeze(0).expand(embeds.shape[0], -1, -1)
            kwargs["input_ids"] = None
            kwargs["inputs_embeds"] = torch.cat([prefix, embeds], dim=1)
            mask = kwargs.get("attention_mask")
            if mask is not None:
                ones = torch.ones(mask.shape[0], n_soft, dtype=mask.dtype, device=mask.device)
                kwargs["attention_mask"] = torch.cat([ones, mask], dim=1)
            return args, kwargs

        def post_hook(module: Any, args: Any, output: Any) -> Any:
            output.logits = output.logits[:, n_soft:]
            return output

        handles = [inner.register_forward_pre_hook(pre_hook, with_kwargs=True),
                   model.register_forward_hook(post_hook)]
        try:
            yield n_soft
        finally:
            for h in handles:
                h.remove()


_MODULES: dict[str, tuple[Any, Any]] = {}


def _records(train: Sequence[Any] | None) -> list[tuple[str, str, str, str, str]]:
    """The 5-field train records MedREK's prompt encoder needs (the retriever uses the first
    three): a clear error for the 3-field triples other editors take."""
    if not train:
        raise ValueError("medrek trains on the benchmark's train split: pass train= records "
                         "(prompt, paraphrase, locality prompt, target_new, locality answer)")
    out = []
    for row in train:
        if len(row) != 5 or not all(isinstance(x, str) for x in row):
            raise ValueError("medrek needs 5-field train records (prompt, paraphrase, "
                             "locality prompt, target_new, locality answer); got "
                             f"{len(row)} fields")
        out.append((row[0], row[1], row[2], row[3], row[4]))
    return out


def trained(model: Any, tokenizer: Any, records: Sequence[tuple[str, str, str, str, str]],
            config: TrainConfig | None = None) -> tuple[PromptModules, TrainReport]:
    """The trained prompt encoder for (model, records, config): memoised in the process,
    cached on disk by :func:`methods.medversa.medrek_train.trained_modules`."""
    from methods.medversa.medrek_train import TrainConfig, cache_key, trained_modules

    config = config or TrainConfig()
    key = cache_key(model, records, config, "minilm-l6")
    if key not in _MODULES:
        _MODULES[key] = trained_modules(model, tokenizer, records, default_encoder(), config)
    modules, report = _MODULES[key]
    return modules, report


STEPS_ENV = "EVALSUITE_MEDREK_STEPS"


def train_config() -> TrainConfig:
    """The training settings ``medrek`` builds with: the defaults, with the number of steps
    from ``$EVALSUITE_MEDREK_STEPS`` when set (the budget is part of the cache key, so each
    budget trains, or loads, its own encoder)."""
    import os

    from methods.medversa.medrek_train import TrainConfig

    raw = os.environ.get(STEPS_ENV, "").strip()
    if not raw:
        return TrainConfig()
    try:
        steps = int(raw)
    except ValueError:
        msg = f"{STEPS_ENV}={raw!r}: expected a whole number of training steps"
        raise ValueError(msg) from None
    if steps < 0:
        raise ValueError(f"{STEPS_ENV}={steps}: the number of steps cannot be negative")
    return TrainConfig(steps=steps)


@editor("medrek", whitebox=True, extra="cpu",
        summary="MedREK: key-aware retrieval + trained T=3 attention soft prompt (HF models)")
class MedREKEditor(SoftPromptEditor):
    """Key-aware retrieval; the retrieved edit enters as T trained soft tokens at layer 0."""

    name = "medrek"

    def __init__(self, model: Any, tokenizer: Any, modules: PromptModules,
                 retriever: Retriever | None = None,
                 train: Sequence[EditTriple] | None = None,
                 feature_encoder: Any = None) -> None:
        self.modules = modules
        super().__init__(model, tokenizer, retriever=retriever, train=train)
        self.feature_encoder = feature_encoder or self.retriever.encoder
        self.train_report: dict[str, Any] | None = None  # what training did (build sets it)
        self.modules_key = ""  # the training cache key (build sets it)

    @classmethod
    def build(cls, *, model: Any = None, tokenizer: Any = None,
              train: Sequence[EditTriple] | None = None) -> Editor:
        """MedREK on ``model``: retriever and prompt encoder trained on ``train`` (5-field
        records; trained once per model, split and settings, then cached)."""
        if model is None or tokenizer is None:
            raise ValueError("medrek is white-box: pass the HF model and tokenizer")
        from dataclasses import asdict

        records = _records(train)
        config = train_config()
        modules, report = trained(model, tokenizer, records, config)
        built = cls(model, tokenizer, modules, train=[(r[0], r[1], r[2]) for r in records])
        built.train_report = {**asdict(report), "config": asdict(config)}
        built.modules_key = report.key
        return built

    @staticmethod
    def budget_curve(*args: Any, **kwargs: Any) -> dict[str, Any]:
        """Train once and score the encoder at checkpoints (oracle injection): see
        :func:`methods.medversa.medrek_budget.budget_curve`. On the class so a benchmark
        reaches it through the editor registry rather than by importing the method."""
        from methods.medversa.medrek_budget import budget_curve

        return budget_curve(*args, **kwargs)

    def _prompt_tag(self) -> Hashable:
        """The trained modules' content key (stable across units and processes), else
        their identity."""
        return self.modules_key or id(self.modules)

    def _added(self, edits: list[Edit]) -> None:
        import numpy as np
        import torch

        from methods.medversa.medrek_train import sentence

        self.retriever.add([e.prompt for e in edits])
        if not edits:
            return
        feats = np.asarray(self.feature_encoder.encode(
            [sentence(e.prompt, e.target) for e in edits]), dtype=np.float32)
        with torch.inference_mode():
            soft = self.modules(torch.from_numpy(feats))
        self.soft_prompts.extend(s.detach().to(self.model.device) for s in soft)
