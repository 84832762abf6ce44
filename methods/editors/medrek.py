"""White-box MedREK: retrieved edits enter the model as soft prompts through forward hooks.

Spec §4.4: the top-1 edit passed by the prototype gate contributes T soft-prompt vectors that
are prepended to the input of transformer layer 0 (after the token embeddings); the logits at
those T positions are dropped, so outputs align with the query's own tokens. Retrieval is the
same key-aware retriever as :class:`~methods.editors.retrieval.RetrievalEditor`.

Small-scale version (a documented deviation): the value of an edit is the token-embedding
sequence of its knowledge sentence, and the prompt encoder is a residual linear map
initialised to zero, i.e. the soft prompt starts as the knowledge sentence's embeddings
(T = its token count, not a fixed 3). MedREK meta-trains KRM + prompt encoder with
reliability/generality/locality losses on a 7B model; :meth:`PromptEncoder.delta` is where such
training would go, and the hooks are the same either way.

Hooks are registered on the HF ``*ForCausalLM`` module: a pre-hook (with kwargs) on its base
model replaces ``input_ids`` by ``inputs_embeds`` with the soft prompt in front, and a forward
hook on the outer model cuts the first T logits. Both are removed when the context exits.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from harness.editors import Edit, Editor, EditTriple, editor
from methods.editors.retrieval import RetrievalEditor, Retriever


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


@editor("medrek", whitebox=True, extra="cpu",
        summary="White-box MedREK: retrieved edit as a soft prompt via forward hooks (HF models)")
class SoftPromptEditor(RetrievalEditor):
    """Retrieval + soft-prompt injection at layer 0 (white-box only: no text context)."""

    name = "medrek"

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
            raise ValueError("medrek is white-box: pass the HF model and tokenizer")
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
        raise TypeError("medrek is white-box only: score it on an HF model")

    def hook_keys(self, queries: Sequence[str]) -> list[Hashable]:
        """The retrieved edit decides the soft prompt, so queries with one hit share hooks."""
        return list(self.retrieve(queries)) if self.edits else [None for _ in queries]

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
