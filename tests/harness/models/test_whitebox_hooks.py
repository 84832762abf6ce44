"""The white-box decode loop's hooks, the method registry, batching, and Inspect's ``hf/``.

The registry tests are fast; the rest load SmolLM2 through transformers (marker ``slow``).
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Sequence
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig, get_model

import harness.models.providers  # noqa: F401  (registers whitebox/)
from harness.plugins.whitebox_method import (
    Method,
    RequestState,
    StepView,
    method_names,
    register_method,
    resolve_method,
)
from harness.registry import unregister

_HAS_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "gguf"))
needs_model = [
    pytest.mark.slow,
    pytest.mark.skipif(not _HAS_TORCH, reason="needs the cpu extra: torch, transformers, gguf"),
]

CHATS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": "List three colors."}],
    [{"role": "user", "content": "What is 12 + 7?"}],
]


# ------------------------------------------------------------------ registry (fast)


class _Counting(Method):
    name = "counting"

    def __init__(self, scale: int = 1) -> None:
        self.scale = scale


def test_resolve_registered_and_module_path_and_instance() -> None:
    assert "esamp" in method_names() and "plain" in method_names()
    assert type(resolve_method(None)) is Method
    register_method("counting-test", _Counting)
    try:
        built = resolve_method("counting-test", scale=3)
        assert isinstance(built, _Counting) and built.scale == 3
    finally:
        unregister("whitebox_method", "counting-test")
    by_path = resolve_method("harness.plugins.whitebox_method:Method")
    assert type(by_path) is Method
    assert resolve_method(built) is built


def test_resolve_rejects_unknown_names_and_options() -> None:
    with pytest.raises(ValueError, match="unknown whitebox method"):
        resolve_method("no-such-method")
    with pytest.raises(ValueError, match="bad options for method 'plain'"):
        resolve_method("plain", beta=0.5)
    def not_a_method() -> Any:
        return object()

    register_method("not-a-method", not_a_method)
    try:
        with pytest.raises(TypeError, match="not a Method"):
            resolve_method("not-a-method")
    finally:
        unregister("whitebox_method", "not-a-method")


# ------------------------------------------------------------------ decode loop (slow)


@pytest.fixture(scope="module")
def lm() -> Any:
    if not _HAS_TORCH:
        pytest.skip("needs torch")
    import torch

    torch.set_num_threads(2)
    from harness.models.whitebox import shared_lm

    return shared_lm()[0]


class _Recorder(Method):
    """Records what every hook saw."""

    name = "recorder"
    hidden_layers = (0, -1)

    def start(self, lm: Any, states: Sequence[RequestState]) -> None:
        self.capture_modules = ("model.layers.0.input_layernorm",)
        self.cache_lengths: list[int] = []
        self.hidden_shapes: list[tuple[int, ...]] = []
        self.capture_shapes: list[tuple[int, ...]] = []
        self.logit_calls = 0
        for state in states:
            state.data["seen"] = 0

    def after_prefill(self, lm: Any, view: StepView, states: Sequence[RequestState]) -> Any:
        self.cache_lengths.append(view.cache.get_seq_length())
        self.hidden_shapes.append(tuple(view.hidden[-1].shape))
        self.capture_shapes.append(tuple(view.captures["model.layers.0.input_layernorm"].shape))
        return None

    def process_logits(
        self, lm: Any, logits: Any, view: StepView, states: Sequence[RequestState]
    ) -> Any:
        self.logit_calls += 1
        for state in states:
            state.data["seen"] += 1
        return logits

    def after_step(self, lm: Any, view: StepView, states: Sequence[RequestState]) -> Any:
        self.cache_lengths.append(view.cache.get_seq_length())
        self.hidden_shapes.append(tuple(view.hidden[0].shape))
        self.capture_shapes.append(tuple(view.captures["model.layers.0.input_layernorm"].shape))
        return None


class _Force(Method):
    """Masks every token but one: the logits chain decides what is sampled."""

    def __init__(self, token: int) -> None:
        self.token = token

    def process_logits(
        self, lm: Any, logits: Any, view: StepView, states: Sequence[RequestState]
    ) -> Any:
        forced = logits.clone().fill_(-1e9)
        forced[:, self.token] = 0.0
        return forced


@pytest.mark.slow
@pytest.mark.skipif(not _HAS_TORCH, reason="needs torch")
def test_plain_loop_reproduces_hf_generate_greedy_tokens(lm: Any) -> None:
    for chat in CHATS:
        reference = lm.generate(chat, max_new_tokens=20)
        [ours] = lm.generate_batch([chat], max_new_tokens=20)
        expected = lm.tokenizer(reference.text, add_special_tokens=False).input_ids
        assert ours.text == reference.text
        assert [t for t in ours.tokens if t != lm.tokenizer.eos_token_id] == expected


@pytest.mark.slow
@pytest.mark.skipif(not _HAS_TORCH, reason="needs torch")
def test_batched_rows_match_single_rows(lm: Any) -> None:
    singles = [lm.generate_batch([c], max_new_tokens=16)[0].tokens for c in CHATS]
    batched = [g.tokens for g in lm.generate_batch(CHATS, max_new_tokens=16)]
    assert batched == singles
    sampled_alone = lm.generate_batch([CHATS[1]], 16, temperature=0.9, seeds=[7])[0].tokens
    sampled_in_batch = lm.generate_batch(CHATS, 16, temperature=0.9, seeds=[1, 7, 2])[1].tokens
    assert sampled_alone == sampled_in_batch


@pytest.mark.slow
@pytest.mark.skipif(not _HAS_TORCH, reason="needs torch")
def test_hooks_see_hidden_states_captures_and_a_growing_cache(lm: Any) -> None:
    recorder = _Recorder()
    norm = lm.model.get_submodule("model.layers.0.input_layernorm")
    hooks_before = len(norm._forward_hooks)
    prompt = lm.chat_prompt(CHATS[0])
    n_prompt = lm.encode(prompt).shape[1]
    [out] = lm.generate_batch([prompt], max_new_tokens=8, method=recorder)
    hidden = lm.model.config.hidden_size
    assert recorder.cache_lengths[0] == n_prompt
    assert recorder.cache_lengths == list(range(n_prompt, n_prompt + len(recorder.cache_lengths)))
    assert recorder.hidden_shapes[0] == (1, n_prompt, hidden)
    assert set(recorder.hidden_shapes[1:]) == {(1, 1, hidden)}
    assert recorder.capture_shapes[0] == (1, n_prompt, hidden)
    assert recorder.logit_calls == len(out.tokens) == out.data["seen"]
    assert len(norm._forward_hooks) == hooks_before  # the capture hook is removed afterwards


@pytest.mark.slow
@pytest.mark.skipif(not _HAS_TORCH, reason="needs torch")
def test_logits_chain_decides_the_tokens(lm: Any) -> None:
    token = lm.tokenizer(" banana", add_special_tokens=False).input_ids[0]
    for temperature in (0.0, 0.8):
        [out] = lm.generate_batch(["Hello"], max_new_tokens=4, temperature=temperature,
                                  method=_Force(token))
        assert out.tokens == [token] * 4 and out.finish_reason == "length"


@pytest.mark.slow
@pytest.mark.skipif(not _HAS_TORCH, reason="needs torch")
def test_after_step_can_replace_the_cache(lm: Any) -> None:
    import copy

    class ZeroValues(Method):
        """Returns a copy of the cache with every value zeroed (a destructive 'compression')."""

        def start(self, lm: Any, states: Sequence[RequestState]) -> None:
            self.returned: list[int] = []
            self.seen: list[int] = []

        def after_step(self, lm: Any, view: StepView, states: Sequence[RequestState]) -> Any:
            self.seen.append(id(view.cache))
            new = copy.deepcopy(view.cache)
            for layer in new.layers:
                layer.values.mul_(0.0)
            self.returned.append(id(new))
            return new

    method = ZeroValues()
    [plain] = lm.generate_batch(["1, 2, 3, 4,"], max_new_tokens=6)
    [zeroed] = lm.generate_batch(["1, 2, 3, 4,"], max_new_tokens=6, method=method)
    assert plain.tokens[:2] == zeroed.tokens[:2]  # prefill and first step untouched
    assert plain.tokens != zeroed.tokens  # the replaced cache was used from then on
    assert method.seen[1:] == method.returned[:-1]  # each forward continued from our copy


@pytest.mark.slow
@pytest.mark.skipif(not _HAS_TORCH, reason="needs torch")
def test_provider_method_option_and_batching(lm: Any) -> None:
    config = GenerateConfig(temperature=0.0, max_tokens=12)
    plain = get_model("whitebox/smollm2-135m", memoize=False)
    esamp0 = get_model("whitebox/smollm2-135m", method="esamp", beta=0.0, memoize=False)
    prompts = [c[0]["content"] for c in CHATS]

    async def run(model: Any) -> list[str]:
        outs = await asyncio.gather(*[model.generate(p, config=config) for p in prompts])
        return [o.completion for o in outs]

    plain_out = asyncio.run(run(plain))
    assert plain_out == asyncio.run(run(esamp0))
    assert plain_out[0] == lm.generate(CHATS[0], max_new_tokens=12).text.strip()
    with pytest.raises(ValueError, match=r"unknown model args for whitebox/: \[.beta.\]"):
        get_model("whitebox/smollm2-135m", beta=0.5, memoize=False)


@pytest.mark.slow
@pytest.mark.skipif(not _HAS_TORCH or importlib.util.find_spec("accelerate") is None,
                    reason="needs torch and accelerate (Inspect's hf/)")
def test_inspect_hf_provider_gives_the_same_greedy_tokens(lm: Any) -> None:
    from harness.models.whitebox import ensure_hf_copy

    folder = ensure_hf_copy()
    config = GenerateConfig(temperature=0.0, max_tokens=16)
    # hf/ samples unless -M do_sample=false, and passes temperature on to transformers,
    # which rejects 0: greedy there is do_sample=False with no temperature
    hf_config = GenerateConfig(max_tokens=16)
    ours = get_model("whitebox/smollm2-135m", memoize=False)
    theirs = get_model("hf/smollm2", model_path=str(folder), device="cpu", do_sample=False,
                       memoize=False)
    for chat in CHATS[:2]:
        prompt = chat[0]["content"]
        a = asyncio.run(ours.generate(prompt, config=config)).completion
        b = asyncio.run(theirs.generate(prompt, config=hf_config)).completion
        assert a.strip() == b.strip(), prompt
