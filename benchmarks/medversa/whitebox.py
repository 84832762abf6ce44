"""Run the MedVersa probes on an HF causal LM: teacher-forced argmax and sampled continuations.

The metrics themselves live in :mod:`environments.medversa.metrics`; this module only runs
the model. Text contexts from prompt editors are encoded once per distinct context and kept
as a KV-cache prefix that the queries continue from, so IKE with 100 edits in context costs
one long forward per unit instead of one per query. Queries run in right-padded batches
without an attention mask, as the spec's scorer does.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from environments.medversa.metrics import TeacherForced, teacher_forced
from harness.editors import Editor

DEFAULT_BATCH = 16


@dataclass(frozen=True)
class Probe:
    """One teacher-forced query: the text the editor sees, and its token construction."""

    query: str
    forced: TeacherForced


class WhiteBoxRunner:
    """An HF model plus tokenizer, scored position by position."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        params = inspect.signature(model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        eos = tokenizer.eos_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos

    def tokenize(self, text: str) -> list[int]:
        """Token ids with the tokenizer's own special tokens (BOS where the model has one)."""
        return list(self.tokenizer(text).input_ids)

    def probe(self, prompt: str, target: str) -> Probe:
        """Spec §2.1 token construction for (prompt, target)."""
        return Probe(prompt, teacher_forced(self.tokenize, prompt, target))

    def _ids(self, ids: Sequence[int]) -> Any:
        import torch

        return torch.tensor([list(ids)], dtype=torch.long, device=self.model.device)

    def argmax(self, probes: Sequence[Probe], editor: Editor | None = None,
               batch_size: int = DEFAULT_BATCH) -> list[list[int]]:
        """Argmax token at every input position of each probe, under ``editor`` (or unedited).

        Probes that share a text context and a hook state run together: right-padded
        batches (causal attention never lets a real position see the padding to its right,
        and padded positions are outside every mask), continuing a cached context prefix.
        """
        import torch

        queries = [p.query for p in probes]
        contexts = editor.contexts(queries) if editor else [""] * len(probes)
        keys = editor.hook_keys(queries) if editor else [None] * len(probes)
        out: list[list[int]] = [[] for _ in probes]
        groups: dict[tuple[str, Any], list[int]] = {}
        for i, (ctx, key) in enumerate(zip(contexts, keys, strict=True)):
            groups.setdefault((ctx, key), []).append(i)
        with torch.inference_mode():
            for (ctx, _), members in groups.items():
                prefix = self._prefix(ctx) if ctx else None
                for start in range(0, len(members), batch_size):
                    chunk = members[start:start + batch_size]
                    rows = [probes[i].forced.inputs for i in chunk]
                    width = max(len(r) for r in rows)
                    ids = self._batch([r + [self.pad_id] * (width - len(r)) for r in rows])
                    kwargs: dict[str, Any] = {}
                    if prefix is not None:
                        cache = copy.deepcopy(prefix)
                        cache.batch_repeat_interleave(len(chunk))
                        kwargs = {self._cache_arg: cache, "use_cache": True}
                    hooks = editor.hooks(self.model, probes[chunk[0]].query) if editor \
                        else _no_hooks()
                    with hooks:
                        logits = self.model(input_ids=ids, **kwargs).logits
                    preds = logits.argmax(-1).tolist()
                    for row, i in enumerate(chunk):
                        out[i] = preds[row][: len(probes[i].forced.inputs)]
        return out

    def _prefix(self, context: str) -> Any:
        """KV cache of a text context (batch 1)."""
        first = self.model(input_ids=self._ids(self.tokenize(context)), use_cache=True)
        return _cache_of(first)

    def _batch(self, rows: Sequence[Sequence[int]]) -> Any:
        import torch

        return torch.tensor([list(r) for r in rows], dtype=torch.long, device=self.model.device)

    def continuation(self, prompt: str, editor: Editor | None, max_new_tokens: int,
                     top_k: int, seed: int) -> str:
        """Spec §2.4 fluency sample: top-k sampling from the (edited) model, whole text back."""
        import torch

        context = editor.context(prompt) if editor else ""
        ids = self.tokenize(context + prompt)
        gen = torch.Generator(device="cpu").manual_seed(seed)
        new: list[int] = []
        with torch.inference_mode():
            hooks = editor.hooks(self.model, prompt) if editor else _no_hooks()
            with hooks:
                out = self.model(input_ids=self._ids(ids), use_cache=True)
            cache = _cache_of(out)
            logits = out.logits[0, -1]
            for _ in range(max_new_tokens):
                top = torch.topk(logits.float(), top_k)
                probs = torch.softmax(top.values, dim=-1)
                token = int(top.indices[torch.multinomial(probs, 1, generator=gen)].item())
                if token == self.tokenizer.eos_token_id:
                    break
                new.append(token)
                out = self.model(input_ids=self._ids([token]), use_cache=True,
                                 **{self._cache_arg: cache})
                cache = _cache_of(out)
                logits = out.logits[0, -1]
        text: str = self.tokenizer.decode(self.tokenize(prompt) + new, skip_special_tokens=True)
        return text


class _no_hooks:  # noqa: N801 - used like contextlib.nullcontext(0)
    def __enter__(self) -> int:
        return 0

    def __exit__(self, *exc: object) -> None:
        return None


def _cache_of(output: Any) -> Any:
    """The KV cache of a forward output, whatever this transformers version calls it."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else getattr(output, "past_key_values", None)


