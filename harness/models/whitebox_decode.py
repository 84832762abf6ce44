"""The white-box decode loop: batched prefill + one-token steps with method hooks.

Why not ``model.generate``: a method must see hidden states and the KV cache at every step
and may replace the cache (compression, eviction) between steps; transformers' ``generate``
exposes logits processors but neither of the others. This loop is the plain greedy/sampling
loop ``generate`` runs (prefill, then one token per forward with the cache), written out so
the hooks of :mod:`harness.plugins.whitebox_method` fit between its steps. With no method it
yields the same greedy tokens as ``generate`` (tested).

Batching: prompts are left-padded into one batch with an attention mask and position ids
counted from each row's first real token, so a row's tokens do not depend on its
neighbours (up to float rounding in padded matmuls). Each row samples from its own
``torch.Generator`` seeded with the request's seed, so sampled replies repeat whatever batch
a request lands in.

Shared prefill: rows whose prompts tokenise identically (``n`` samples of one prompt) are
prefilled once; the cache, logits, hidden states and captures of that forward are then
expanded to every row, so an item costs one prefill plus ``n`` short decodes. The rows
sample exactly as if each had been prefilled itself (tested), up to float rounding between a
1-row and an n-row matmul.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.plugins.whitebox_method import Method, RequestState, StepView


@dataclass(frozen=True)
class DecodeParams:
    """Sampling settings shared by one batch (greedy when ``temperature == 0``)."""

    max_new_tokens: int = 64
    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    stop: tuple[str, ...] = ()


def keep_mask(logits: Any, temperature: float, top_p: float | None, top_k: int | None) -> Any:
    """Bool ``[batch, vocab]``: tokens that survive top-k then top-p of ``softmax(z / T)``
    (all True for greedy decoding, where no truncation applies)."""
    import torch

    keep = torch.ones_like(logits, dtype=torch.bool)
    if temperature <= 0:
        return keep
    scaled = logits / temperature
    if top_k is not None and 0 < top_k < logits.shape[-1]:
        kth = scaled.topk(top_k, dim=-1).values[..., -1:]
        keep &= scaled >= kth
    if top_p is not None and 0 < top_p < 1:
        masked = scaled.masked_fill(~keep, float("-inf"))
        sorted_z, order = masked.sort(dim=-1, descending=True)
        cum = sorted_z.softmax(-1).cumsum(-1)
        # keep a token while the mass before it is < top_p (the top token always survives)
        sorted_keep = (cum - sorted_z.softmax(-1)) < top_p
        keep &= torch.zeros_like(keep).scatter(-1, order, sorted_keep)
    return keep


def _eos_ids(lm: Any) -> set[int]:
    ids: set[int] = set()
    configured = getattr(lm.model.generation_config, "eos_token_id", None)
    if isinstance(configured, int):
        ids.add(configured)
    elif configured:
        ids.update(int(i) for i in configured)
    if lm.tokenizer.eos_token_id is not None:
        ids.add(int(lm.tokenizer.eos_token_id))
    return ids


class _Captures:
    """Forward hooks that keep the latest output of each named submodule."""

    def __init__(self, model: Any, names: Sequence[str]) -> None:
        self.values: dict[str, Any] = {}
        modules = dict(model.named_modules())
        missing = [n for n in names if n not in modules]
        if missing:
            raise ValueError(f"no such submodules to capture: {missing}")
        self.handles = [modules[n].register_forward_hook(self._hook(n)) for n in names]

    def _hook(self, name: str) -> Any:
        def hook(module: Any, args: Any, output: Any) -> None:
            self.values[name] = output[0] if isinstance(output, tuple) else output

        return hook

    def take(self) -> dict[str, Any]:
        values, self.values = self.values, {}
        return values

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


@dataclass
class Decoded:
    """One row's result."""

    text: str
    prompt_tokens: int
    tokens: list[int]
    finish_reason: str  # "stop" (EOS or stop string) or "length"
    state: RequestState
    cache: Any = None


def decode(
    lm: Any,
    prompts: Sequence[str],
    seeds: Sequence[int],
    params: DecodeParams,
    method: Method | None = None,
    return_cache: bool = False,
    share_prefill: bool = True,
) -> list[Decoded]:
    """Generate for every prompt in one left-padded batch, calling ``method``'s hooks
    (identical prompts prefilled once when ``share_prefill``)."""
    import torch

    method = method or Method()
    tok = lm.tokenizer
    encoded = [tok(p, add_special_tokens=False).input_ids for p in prompts]
    width = max(len(e) for e in encoded)
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    ids = torch.tensor([[pad] * (width - len(e)) + e for e in encoded], device=lm.device)
    mask = torch.tensor(
        [[0] * (width - len(e)) + [1] * len(e) for e in encoded], device=lm.device
    )
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    pairs = enumerate(zip(prompts, seeds, strict=True))
    states = [RequestState(i, p, int(s)) for i, (p, s) in pairs]
    generators = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds]
    eos = _eos_ids(lm)
    finish = ["length"] * len(prompts)
    texts = [""] * len(prompts)
    method.start(lm, states)  # may decide what to capture from the model it is given
    want_hidden = bool(method.hidden_layers)
    captures = _Captures(lm.model, method.capture_modules) if method.capture_modules else None

    def forward(step: int, fed: Any, attn: Any, pos: Any, cache: Any) -> StepView:
        out = lm.model(
            input_ids=fed,
            attention_mask=attn,
            position_ids=pos,
            use_cache=True,
            output_hidden_states=want_hidden,
            **{lm._cache_arg: cache},
        )
        hidden = (
            {i: out.hidden_states[i] for i in method.hidden_layers} if want_hidden else {}
        )
        taken = captures.take() if captures else {}
        return StepView(step, fed, attn, hidden, taken, lm.cache_of(out), out.logits[:, -1])

    try:
        with torch.no_grad():
            firsts = _first_rows(encoded) if share_prefill else list(range(len(encoded)))
            if len(set(firsts)) < len(encoded):
                unique = sorted(set(firsts))
                rows = torch.tensor(unique, device=lm.device)
                view = forward(0, ids[rows], mask[rows], positions[rows], None)
                view = _expand(view, torch.tensor([unique.index(f) for f in firsts],
                                                  device=lm.device), ids, mask)
            else:
                view = forward(0, ids, mask, positions, None)
            cache = method.after_prefill(lm, view, states)
            if cache is not None:
                view.cache = cache
            for step in range(1, params.max_new_tokens + 1):
                logits = view.logits.float()
                view.keep = keep_mask(logits, params.temperature, params.top_p, params.top_k)
                z = method.process_logits(lm, logits, view, states)
                chosen = _choose(z, view.keep, params.temperature, generators)
                for state, token in zip(states, chosen, strict=True):
                    if state.done:
                        continue
                    state.tokens.append(token)
                    if token in eos:
                        state.done, finish[state.index] = True, "stop"
                    elif params.stop:
                        text = tok.decode(state.tokens, skip_special_tokens=True)
                        hit = [s for s in params.stop if s in text]
                        if hit:
                            state.done, finish[state.index] = True, "stop"
                            texts[state.index] = min((text.split(s)[0] for s in hit), key=len)
                if all(s.done for s in states) or step == params.max_new_tokens:
                    break
                fed = torch.tensor(
                    [[pad if s.done else t] for s, t in zip(states, chosen, strict=True)],
                    device=lm.device,
                )
                mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=-1)
                positions = positions[:, -1:] + 1
                view = forward(step, fed, mask, positions, view.cache)
                cache = method.after_step(lm, view, states)
                if cache is not None:
                    view.cache = cache
            method.finish(lm, states)
    finally:
        if captures:
            captures.remove()
    results = []
    for state, enc in zip(states, encoded, strict=True):
        if not texts[state.index]:
            kept = [t for t in state.tokens if t not in eos]
            texts[state.index] = tok.decode(kept, skip_special_tokens=True)
        results.append(
            Decoded(
                texts[state.index],
                len(enc),
                list(state.tokens),
                finish[state.index],
                state,
                view.cache if return_cache else None,
            )
        )
    return results


def _first_rows(encoded: Sequence[Sequence[int]]) -> list[int]:
    """For each row, the first row with the same token ids (itself if none before it)."""
    seen: dict[tuple[int, ...], int] = {}
    return [seen.setdefault(tuple(e), i) for i, e in enumerate(encoded)]


def _expand(view: StepView, index: Any, ids: Any, mask: Any) -> StepView:
    """The prefill ``view`` of the distinct rows, gathered out to every row by ``index``."""
    view.cache.batch_select_indices(index)  # in place; repeated indices copy the rows

    def take(tensor: Any) -> Any:
        return tensor.index_select(0, index)

    return StepView(
        view.step, ids, mask, {k: take(v) for k, v in view.hidden.items()},
        {k: take(v) for k, v in view.captures.items()}, view.cache, take(view.logits),
    )


def _choose(z: Any, keep: Any, temperature: float, generators: Sequence[Any]) -> list[int]:
    """Greedy argmax, or one multinomial draw per row from its own generator."""
    import torch

    masked = z.masked_fill(~keep, float("-inf"))
    if temperature <= 0:
        return [int(i) for i in masked.argmax(-1).tolist()]
    probs = (masked / temperature).softmax(-1)
    return [
        int(torch.multinomial(probs[i], 1, generator=generators[i]).item())
        for i in range(probs.shape[0])
    ]
