"""Run the MedVersa probes on an HF causal LM: teacher-forced argmax and sampled continuations.

The metrics themselves live in :mod:`environments.medversa.metrics`; this module only runs
the model. Text contexts from prompt editors are encoded once per distinct context and kept
as a KV-cache prefix that the queries continue from, so IKE with 100 edits in context costs
one long forward per unit instead of one per query. Queries run in right-padded batches
without an attention mask, as the spec's scorer does.

With ``cache=True`` the runner also remembers argmax rows across units and cells, keyed by
the model's weight state (every parameter's storage and in-place version counter), the
text context, the editor's hook key and the token ids. Only editors that change nothing
but the prompt (:data:`CACHEABLE`) use it: an editor that edits weights or installs its own
hooks is always run afresh. Identical forwards then cost one pass however many protocols,
batch sizes and editors ask for them (a locality query that retrieves nothing is the
unedited forward).

:meth:`WhiteBoxRunner.sample_batch` samples fluency continuations for many prompts at
once (left-padded, attention-masked, one decode step for all rows): on a CPU a decode step
costs about the same for 1 row as for 50, since it streams all weights either way.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import os
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from environments.medversa.metrics import TeacherForced, teacher_forced
from harness.plugins.editor import Editor

DEFAULT_BATCH = 16
CACHEABLE = frozenset({"none", "ike", "retrieval", "medrek", "soft-text"})
"""Editors whose effect is fully described by (context, hook key): safe to cache."""
SAVE_EVERY = 200  # new cache rows between writes of a persistent store


@dataclass(frozen=True)
class Probe:
    """One teacher-forced query: the text the editor sees, and its token construction."""

    query: str
    forced: TeacherForced


class WhiteBoxRunner:
    """An HF model plus tokenizer, scored position by position."""

    def __init__(self, model: Any, tokenizer: Any, cache: bool = False,
                 store: str | os.PathLike[str] | None = None) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.cache_enabled = cache
        self._memo: dict[tuple[Any, ...], list[int]] = {}
        self.forwards = 0  # rows actually run (the cache's misses), for cost reports
        # the forward cache may persist across processes (``store``, a pickle file) for
        # forwards of the model as loaded: keyed by a content id of the weights, not by
        # storage addresses, and never for a model whose weights have since changed
        self._pristine = self.weight_state()
        self.model_id = _model_id(model) if cache and store else ""
        self._store = Path(store) if cache and store else None
        self._unsaved = 0
        if self._store is not None and self._store.is_file():
            with self._store.open("rb") as fh:
                saved = pickle.load(fh)
            if saved.get("model_id") == self.model_id:
                self._memo.update(saved["memo"])
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
        use_cache = self.cache_enabled and (editor is None or editor.name in CACHEABLE)
        state: Any = self.weight_state() if use_cache else None
        if use_cache and self.model_id and state == self._pristine:
            state = self.model_id
        memo_keys: list[tuple[Any, ...]] = []
        groups: dict[tuple[str, Any], list[int]] = {}
        for i, (ctx, key) in enumerate(zip(contexts, keys, strict=True)):
            if use_cache:
                memo = (state, ctx, repr(key), tuple(probes[i].forced.inputs))
                memo_keys.append(memo)
                if memo in self._memo:
                    out[i] = list(self._memo[memo])
                    continue
            groups.setdefault((ctx, key), []).append(i)
        self.forwards += sum(len(m) for m in groups.values())
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
                        if use_cache:
                            self._memo[memo_keys[i]] = out[i]
                            self._unsaved += 1
        if self._unsaved >= SAVE_EVERY:
            self.save()
        return out

    def save(self) -> None:
        """Write the persistable part of the forward cache to ``store`` (atomically)."""
        if self._store is None or not self._unsaved:
            return
        keep = {k: v for k, v in self._memo.items() if k[0] == self.model_id}
        self._store.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._store.with_suffix(".tmp")
        with tmp.open("wb") as fh:
            pickle.dump({"model_id": self.model_id, "memo": keep}, fh)
        tmp.replace(self._store)
        self._unsaved = 0

    def weight_state(self) -> tuple[tuple[int, int], ...]:
        """Each parameter's storage address and in-place version: changes with any edit."""
        return tuple((p.data_ptr(), p._version) for p in self.model.parameters())

    def choose(self, prompts: Sequence[str], choices: Sequence[int],
               editor: Editor | None = None) -> list[int]:
        """Index into ``choices`` (token ids) of the highest next-token logit after each
        prompt, under ``editor``: multiple-choice answering by the option letter."""
        import torch

        contexts = editor.contexts(prompts) if editor else [""] * len(prompts)
        out: list[int] = []
        prefixes: dict[str, Any] = {}
        with torch.inference_mode():
            for prompt, ctx in zip(prompts, contexts, strict=True):
                kwargs: dict[str, Any] = {}
                if ctx:  # a context is encoded once and continued from, as in argmax
                    if ctx not in prefixes:
                        prefixes[ctx] = self._prefix(ctx)
                    kwargs = {self._cache_arg: copy.deepcopy(prefixes[ctx]), "use_cache": True}
                hooks = editor.hooks(self.model, prompt) if editor else _no_hooks()
                with hooks:
                    logits = self.model(input_ids=self._ids(self.tokenize(prompt)),
                                        **kwargs).logits[0, -1]
                out.append(int(logits[list(choices)].argmax()))
        return out

    def sample_batch(self, prompts: Sequence[str], editor: Editor | None, max_new_tokens: int,
                     top_k: int, seed: int, batch_size: int = 50) -> list[str]:
        """Spec §2.4 fluency samples for many prompts at once (whole text, prompt included).

        Rows are left-padded and attention-masked; a retrieved text context is written
        before its row's prompt. Editors that prepend soft prompts expose them through
        ``soft_prompt_for(query)`` (a tensor ``[T, hidden]`` or ``None``): the row's
        embeddings start with it. One generator (``seed``) samples all rows.
        """
        import torch

        contexts = editor.contexts(prompts) if editor else [""] * len(prompts)
        soft_of = getattr(editor, "soft_prompt_for", None) if editor else None
        gen = torch.Generator(device="cpu").manual_seed(seed)
        texts: list[str] = []
        embed = self.model.get_input_embeddings()
        eos = self.tokenizer.eos_token_id
        with torch.inference_mode():
            for start in range(0, len(prompts), batch_size):
                rows = []
                for k in range(start, min(start + batch_size, len(prompts))):
                    ids = self._ids(self.tokenize(contexts[k] + prompts[k]))[0]
                    e = embed(ids)
                    soft = soft_of(prompts[k]) if soft_of is not None else None
                    if soft is not None:
                        e = torch.cat([soft.to(e.dtype), e], dim=0)
                    rows.append(e)
                width = max(r.shape[0] for r in rows)
                dim = rows[0].shape[1]
                x = torch.zeros(len(rows), width, dim, dtype=rows[0].dtype,
                                device=self.model.device)
                mask = torch.zeros(len(rows), width, dtype=torch.long, device=self.model.device)
                for b, r in enumerate(rows):
                    x[b, width - r.shape[0]:] = r
                    mask[b, width - r.shape[0]:] = 1
                out = self.model(inputs_embeds=x, attention_mask=mask, use_cache=True)
                cache = _cache_of(out)
                logits = out.logits[:, -1]
                new: list[list[int]] = [[] for _ in rows]
                done = [False] * len(rows)
                for _ in range(max_new_tokens):
                    top = torch.topk(logits.float(), top_k, dim=-1)
                    probs = torch.softmax(top.values, dim=-1)
                    pick = torch.multinomial(probs, 1, generator=gen)
                    tokens = top.indices.gather(1, pick)[:, 0]
                    for b, t in enumerate(tokens.tolist()):
                        if not done[b]:
                            if t == eos:
                                done[b] = True
                            else:
                                new[b].append(int(t))
                    if all(done):
                        break
                    mask = torch.cat([mask, torch.ones(len(rows), 1, dtype=mask.dtype,
                                                       device=mask.device)], dim=1)
                    out = self.model(input_ids=tokens[:, None], attention_mask=mask,
                                     use_cache=True, **{self._cache_arg: cache})
                    cache = _cache_of(out)
                    logits = out.logits[:, -1]
                for b, k in enumerate(range(start, start + len(rows))):
                    texts.append(self.tokenizer.decode(self.tokenize(prompts[k]) + new[b],
                                                       skip_special_tokens=True))
        return texts

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


def _model_id(model: Any) -> str:
    """Content id of a model's weights (every tensor's shape, dtype and float64 sum)."""
    import torch

    digest = hashlib.sha256(str(getattr(model.config, "_name_or_path", "")).encode())
    with torch.no_grad():
        for name, p in model.named_parameters():
            digest.update(f"{name}:{tuple(p.shape)}:{p.dtype}:{p.sum(dtype=torch.float64).item():.9e}"
                          .encode())
    return digest.hexdigest()[:24]


def _cache_of(output: Any) -> Any:
    """The KV cache of a forward output, whatever this transformers version calls it."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else getattr(output, "past_key_values", None)


