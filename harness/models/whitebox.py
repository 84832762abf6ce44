"""White-box SmolLM2 through transformers: logits, hidden states and the KV cache, on CPU.

Methods that read activations or edit the KV cache need a torch model, not llama.cpp. This
module dequantises the bundled GGUF (see :mod:`harness.models.weights`) once into a plain HF
folder, then loads it with ``local_files_only=True``::

    from harness.models.whitebox import WhiteBoxLM
    lm = WhiteBoxLM.load()                      # builds ~/.cache/evalsuite/smollm2-135m-hf once
    lm.logits("The capital of France is")       # [seq, vocab]
    lm.hidden_states("Hi", layers=[0, -1])      # embeddings + one per layer (n_layers + 1)
    out = lm.forward("Hi")                      # lm.cache_of(out): the KV cache (a Cache)
    lm.forward(" there", cache=lm.cache_of(out))  # continue from the cached prefix
    lm.generate_batch([chat1, chat2], method="esamp")  # batched decode with method hooks

    inspect eval TASK --model whitebox/smollm2-135m -M method=esamp -M beta=0.1
                                        # a method from harness.plugins.whitebox_method' registry

    inspect eval TASK --model whitebox/smollm2-135m         # this module's ModelAPI
    python -m harness.models.whitebox [qwen2.5-coder-0.5b]  # build the copy, print its DIR
    HF_HUB_OFFLINE=1 inspect eval TASK --model hf/smollm2 -M model_path=DIR -M device=cpu
                                                            # Inspect's own hf/ provider

Dequantising and saving (transformers 5.x): ``from_pretrained(dir, gguf_file=...)`` keeps
GGUF weights in their quantised blocks behind a ``GgufHfQuantizer`` whose
``is_serializable()`` is False, so ``save_pretrained`` raises "The model is quantized with
gguf and is not serializable". Passing ``quantization_config=GgufConfig(dequantize=True)``
unpacks every tensor to fp32 and attaches no quantizer, and the model then saves; tied
embeddings (``tie_word_embeddings=True``) are written once and re-tied on load. The tokenizer
converted from the GGUF saves load-time kwargs (``is_local``, ``local_files_only``) into
``tokenizer_config.json`` and an unbounded ``model_max_length``; :func:`ensure_hf_copy`
removes the former and sets the latter to the model's context length. Both steps write into a
temporary folder that is renamed into place, so concurrent test workers never see half a copy.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolChoice, ToolInfo

from harness.models._common import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from harness.models._common import DEFAULT_TEMPERATURE as DEFAULT_TEMPERATURE
from harness.models._common import DEFAULT_TOP_P as DEFAULT_TOP_P
from harness.models._common import (
    LocalModelAPI,
    call_seed,
    make_usage,
    reply_output,
    sampling,
)
from harness.models.ladder import resolve_gguf
from harness.models.toolprompt import (
    CLOSE_TAG,
    forced_prefix,
    forced_tools,
    native_messages,
    openai_tools,
    to_chat,
)
from harness.models.weights import SMOLLM2_NAMES, hf_cache_dir
from harness.plugins.whitebox_method import Method, resolve_method
from harness.registry import require_extra

Prompt = str | list[dict[str, str]]
"""Raw text (tokenised as is) or chat messages (rendered with the chat template)."""

_MARKER = "evalsuite-source.json"
_LOAD_KWARGS = ("is_local", "local_files_only")


def _is_complete(folder: Path, source: dict[str, Any]) -> bool:
    marker = folder / _MARKER
    if not marker.is_file() or not (folder / "config.json").is_file():
        return False
    return bool(json.loads(marker.read_text()) == source)


def ensure_hf_copy(
    gguf: str | os.PathLike[str] | None = None, out: str | os.PathLike[str] | None = None
) -> Path:
    """Dequantise ``gguf`` (default: bundled SmolLM2) into an HF folder once; return the folder.

    The folder is reused while a marker file records the same GGUF (path, size, mtime).
    """
    source_path = resolve_gguf("smollm2-135m", gguf)
    folder = Path(out) if out is not None else hf_cache_dir()
    return _ensure_copy(source_path, folder)


def ladder_hf_copy(name: str) -> Path:
    """The dequantised HF folder of ladder model ``name`` (built once from its GGUF)."""
    from harness.models import ladder

    model = ladder.get(name)
    return _ensure_copy(ladder.resolve(model.name), hf_cache_dir(model.name))


def _ensure_copy(source_path: Path, folder: Path) -> Path:
    stat = source_path.stat()
    source = {"gguf": str(source_path.resolve()), "size": stat.st_size, "mtime": stat.st_mtime}
    if _is_complete(folder, source):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        _dequantise(source_path, staging)
        (staging / _MARKER).write_text(json.dumps(source))
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
        try:
            staging.rename(folder)
        except OSError:  # another process won the race; use its copy if it is complete
            if not _is_complete(folder, source):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _dequantise(gguf: Path, out: Path) -> None:
    require_extra("cpu", "the white-box model (transformers on torch)")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs: dict[str, Any] = {"gguf_file": gguf.name, "dtype": torch.float32}
    try:  # transformers >= 5: ask for dense weights, else the model is not serialisable
        from transformers import GgufConfig

        kwargs["quantization_config"] = GgufConfig(dequantize=True)
    except ImportError:  # transformers 4.x always dequantises
        pass
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), **kwargs)
    model.save_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer.save_pretrained(out)
    config_path = out / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    for key in _LOAD_KWARGS:
        config.pop(key, None)
    config["model_max_length"] = int(model.config.max_position_embeddings)
    config_path.write_text(json.dumps(config, indent=2))


@dataclass
class Generation:
    """Result of :meth:`WhiteBoxLM.generate`."""

    text: str
    prompt_tokens: int
    output_tokens: int
    finish_reason: str  # "stop" (EOS or stop string) or "length"
    cache: Any = None
    """The KV cache (transformers ``Cache``, a.k.a. ``past_key_values``) when requested."""
    tokens: list[int] = field(default_factory=list)
    """Generated token ids (set by :meth:`WhiteBoxLM.generate_batch`)."""
    data: dict[str, Any] = field(default_factory=dict)
    """The method's per-request state (``RequestState.data``) after decoding."""


class WhiteBoxLM:
    """A causal LM with its tokenizer, exposing logits, hidden states and the KV cache.

    Not thread-safe; :class:`WhiteBoxModelAPI` serialises calls with a lock.
    """

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.n_layers: int = int(model.config.num_hidden_layers)
        # transformers 5.x renamed the KV-cache argument `past_key_values` -> `cache`
        params = inspect.signature(model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str] | None = None,
        device: str = "cpu",
        dtype: str = "float32",
    ) -> WhiteBoxLM:
        """Load an HF folder offline (default: the dequantised SmolLM2, built if missing).

        Raises:
            harness.registry.MissingExtraError: torch/transformers (the ``cpu`` extra) are
                not installed.
        """
        require_extra("cpu", "the white-box model (transformers on torch)")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder = Path(path) if path is not None else ensure_hf_copy()
        model: Any = AutoModelForCausalLM.from_pretrained(
            folder, local_files_only=True, dtype=getattr(torch, dtype)
        )
        model.to(device)
        model.eval()
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        return cls(model, tokenizer)

    @property
    def device(self) -> Any:
        """Device of the model's parameters."""
        return self.model.device

    @property
    def native_tools(self) -> bool:
        """Whether the tokenizer's chat template has a tools block of its own (Qwen2.5)."""
        return "tools" in str(getattr(self.tokenizer, "chat_template", "") or "")

    def chat_prompt(self, messages: list[dict[str, Any]],
                    tools: list[dict[str, Any]] | None = None) -> str:
        """Messages rendered with the tokenizer's chat template, ending with the reply header
        (``tools`` in OpenAI shape go through the template's tools block)."""
        text: str = self.tokenizer.apply_chat_template(
            messages, tools=tools or None, tokenize=False, add_generation_prompt=True
        )
        return text

    def encode(self, prompt: Prompt) -> Any:
        """Token ids ``[1, seq]`` of a raw string or chat (no BOS is added: SmolLM2 has none)."""
        text = prompt if isinstance(prompt, str) else self.chat_prompt(prompt)
        ids = self.tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids
        return ids.to(self.device)

    def forward(self, prompt: Prompt, cache: Any = None, **kwargs: Any) -> Any:
        """One forward pass (no grad) returning the HF output; its KV cache is ``cache_of(out)``.

        Pass ``cache`` from an earlier call to continue from a cached prefix; ``prompt`` is
        then only the new tokens. Extra kwargs go to the model (e.g. ``output_attentions``).
        """
        import torch

        ids = self.encode(prompt)
        with torch.inference_mode():
            return self.model(input_ids=ids, use_cache=True, **{self._cache_arg: cache}, **kwargs)

    @staticmethod
    def cache_of(output: Any) -> Any:
        """The KV cache of a forward/generate output, whatever this transformers calls it."""
        cache = getattr(output, "cache", None)
        return cache if cache is not None else getattr(output, "past_key_values", None)

    def logits(self, prompt: Prompt) -> Any:
        """Next-token logits at every position: a float tensor ``[seq, vocab]``."""
        return self.forward(prompt).logits[0]

    def hidden_states(self, prompt: Prompt, layers: Sequence[int] | None = None) -> list[Any]:
        """Residual stream ``[seq, hidden]`` per layer: index 0 is the embeddings, so all
        ``n_layers + 1`` by default; ``layers`` selects some (negative indices allowed)."""
        states = self.forward(prompt, output_hidden_states=True).hidden_states
        chosen = range(len(states)) if layers is None else layers
        return [states[i][0] for i in chosen]

    def generate(
        self,
        prompt: Prompt,
        max_new_tokens: int = 64,
        temperature: float = 0.0,
        top_p: float | None = None,
        top_k: int | None = None,
        seed: int | None = None,
        stop: Sequence[str] = (),
        return_cache: bool = False,
    ) -> Generation:
        """Sample (greedy when ``temperature == 0``) up to ``max_new_tokens`` tokens."""
        import torch

        ids = self.encode(prompt)
        sampling: dict[str, Any] = {"do_sample": temperature > 0}
        if temperature > 0:
            sampling.update(temperature=temperature, top_p=top_p or 1.0, top_k=top_k or 0)
        else:  # silence the generation_config's sampling defaults
            sampling.update(temperature=None, top_p=None, top_k=None)
        if stop:
            sampling.update(stop_strings=list(stop), tokenizer=self.tokenizer)
        if seed is not None:
            torch.manual_seed(seed)
        with torch.inference_mode():
            out = self.model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=max_new_tokens,
                pad_token_id=self.tokenizer.eos_token_id,
                return_dict_in_generate=True,
                **sampling,
            )
        new = out.sequences[0, ids.shape[1] :]
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        for s in stop:  # generate() stops *after* a stop string; drop it like llama.cpp does
            text = text.split(s)[0]
        finish = "length" if len(new) >= max_new_tokens else "stop"
        cache = self.cache_of(out) if return_cache else None
        return Generation(text, int(ids.shape[1]), int(len(new)), finish, cache)

    def generate_batch(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 64,
        temperature: float = 0.0,
        top_p: float | None = None,
        top_k: int | None = None,
        seeds: Sequence[int] | None = None,
        stop: Sequence[str] = (),
        method: Method | str | None = None,
        return_cache: bool = False,
    ) -> list[Generation]:
        """Decode ``prompts`` as one left-padded batch through the hooked loop.

        ``method`` (a :class:`~harness.plugins.whitebox_method.Method` or a registered name)
        sees hidden states, logits before sampling and the KV cache at every step (see
        :mod:`harness.plugins.whitebox_method`); with none, greedy tokens equal :meth:`generate`'s.
        ``seeds`` (one per prompt, default 0) seed each row's own sampler.
        """
        from harness.models.whitebox_decode import DecodeParams, decode

        texts = [p if isinstance(p, str) else self.chat_prompt(p) for p in prompts]
        params = DecodeParams(max_new_tokens, temperature, top_p, top_k, tuple(stop))
        rows = decode(
            self,
            texts,
            list(seeds) if seeds is not None else [0] * len(texts),
            params,
            resolve_method(method) if not isinstance(method, Method) else method,
            return_cache=return_cache,
        )
        return [
            Generation(
                r.text, r.prompt_tokens, len(r.tokens), r.finish_reason, r.cache,
                r.tokens, r.state.data,
            )
            for r in rows
        ]


_LMS: dict[tuple[str, str, str], tuple[WhiteBoxLM, threading.Lock]] = {}
_LMS_LOCK = threading.Lock()


def shared_lm(
    path: str | None = None, device: str = "cpu", dtype: str = "float32"
) -> tuple[WhiteBoxLM, threading.Lock]:
    """One :class:`WhiteBoxLM` per (folder, device, dtype) per process, with its lock."""
    folder = str(Path(path) if path else ensure_hf_copy())
    key = (folder, device, dtype)
    with _LMS_LOCK:
        if key not in _LMS:
            _LMS[key] = (WhiteBoxLM.load(folder, device, dtype), threading.Lock())
        return _LMS[key]


class WhiteBoxModelAPI(LocalModelAPI):
    """``whitebox/smollm2-135m`` (or ``whitebox/x -M model_path=HF_DIR``) as an Inspect model.

    Same prompt-based tool calling as ``embedded/`` (without grammar: a forced tool
    pre-fills the ``<tool_call>`` tag and, for one named tool, the call's name).
    Args: ``-M model_path=HF_DIR -M device=cpu -M dtype=float32 -M batch_size=8
    -M method=NAME`` plus the method's own options (``-M method=esamp -M beta=0.5``); see
    :mod:`harness.plugins.whitebox_method` for the registry. Concurrent requests with the
    same sampling settings are decoded together, up to ``batch_size`` rows (Inspect sends
    that many at once).
    """

    provider = "whitebox"

    def setup(
        self,
        model_path: str | None = None,
        device: str = "cpu",
        dtype: str = "float32",
        batch_size: int = 8,
        method: str | None = None,
        **method_options: Any,
    ) -> None:
        """Load (or reuse) the transformers model; build the method from the other args.

        ``model_path="recipe:NAME?opt=v&seed=N"`` or ``recipe=NAME`` with ``recipe.<opt>=v``
        args loads a recipe's product, built first if missing (:mod:`harness.plugins.recipe`).
        """
        super().setup()
        if model_path is not None or any(k == "recipe" or k.startswith("recipe.")
                                         for k in method_options):
            from harness.plugins.recipe import resolve_model_args

            resolved = resolve_model_args({"model_path": model_path, **method_options})
            model_path = resolved.pop("model_path")
            method_options = resolved
        if model_path is None and self.model_name.lower() not in SMOLLM2_NAMES:
            from harness.models import ladder

            if ladder.find(self.model_name) is None:
                raise ValueError(
                    f"unknown whitebox model {self.model_name!r}: the ladder has "
                    f"{', '.join(ladder.names())}, or pass -M model_path=HF_DIR"
                )
            model_path = str(ladder_hf_copy(self.model_name))
        if method is None:  # no method to take the other args: they are typos, say so
            super().setup(**method_options)
        self.method = resolve_method(method, **method_options)
        self.batch_size = max(1, int(batch_size))
        self.lm, self._lock = shared_lm(model_path, device, dtype)
        self._batcher = _Batcher(self._run_batch, self.batch_size)

    def max_tokens(self) -> int | None:
        """Default completion budget when the task sets none."""
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        """As many concurrent requests as one batch holds; the batcher groups them."""
        return self.batch_size

    def tools_required(self) -> bool:
        """Keep the tools when ``tool_choice="none"`` (Inspect drops them otherwise): a
        template with a tools block still lists them, so the prompt keeps the conversation's
        prefix, and no call is parsed from the reply. A template without one hides them."""
        return True

    async def count_text_tokens(self, text: str) -> int:
        """Exact count with the model's tokenizer (never tiktoken)."""
        return len(self.lm.tokenizer(text, add_special_tokens=False).input_ids)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """Render the chat, queue it for the next batch, parse tool calls."""
        if self.lm.native_tools:
            described = openai_tools(tools)  # kept under tool_choice="none": same prefix
            prompt = self.lm.chat_prompt(native_messages(input), described)
        else:
            prompt = self.lm.chat_prompt(to_chat(input, tools, tool_choice))
        forced = forced_tools(tools, tool_choice)
        prefix = forced_prefix(forced) if forced else ""
        prompt += prefix
        stops = list(config.stop_seqs or []) + ([CLOSE_TAG] if forced else [])
        max_tokens, temperature, top_p = sampling(config)
        key = (max_tokens, temperature, top_p, config.top_k, tuple(stops))
        gen = await self._batcher.submit(key, (prompt, call_seed(prompt, config.seed)))
        text = prefix + gen.text + CLOSE_TAG if forced else gen.text
        usage = make_usage(gen.prompt_tokens, gen.output_tokens)
        output = reply_output(self.model_name, text, tools, tool_choice, gen.finish_reason, usage)
        if gen.data.get("metadata"):
            output.metadata = {**(output.metadata or {}), **gen.data["metadata"]}
        return output

    def _run_batch(self, key: tuple[Any, ...], requests: list[tuple[str, int]]) -> list[Generation]:
        max_tokens, temperature, top_p, top_k, stops = key
        with self._lock:
            return self.lm.generate_batch(
                [prompt for prompt, _ in requests],
                max_new_tokens=max_tokens,
                temperature=temperature,
                top_p=top_p,
                top_k=top_k,
                seeds=[seed for _, seed in requests],
                stop=stops,
                method=self.method,
            )


class _Batcher:
    """Groups concurrent requests with the same key into batches decoded off the event loop.

    Why: transformers runs a batch of 8 at ~4-5x the tokens/s of 8 single calls on CPU, and
    Inspect already sends ``max_connections`` requests at once. One worker task per event
    loop drains the queue; a request waits at most for the batch in flight.
    """

    def __init__(self, run: Any, max_batch: int) -> None:
        self._run = run
        self._max = max_batch
        self._pending: dict[int, list[tuple[Any, Any, asyncio.Future[Any]]]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}

    async def submit(self, key: Any, request: Any) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.setdefault(id(loop), []).append((key, request, future))
        worker = self._workers.get(id(loop))
        if worker is None or worker.done():
            self._workers[id(loop)] = asyncio.create_task(self._drain(id(loop)))
        return await future

    async def _drain(self, loop_id: int) -> None:
        pending = self._pending[loop_id]
        await asyncio.sleep(0.01)  # let the other requests of this burst arrive
        while pending:
            key = pending[0][0]
            group = [p for p in pending if p[0] == key][: self._max]
            for item in group:
                pending.remove(item)
            try:
                results = await asyncio.to_thread(self._run, key, [g[1] for g in group])
            except Exception as err:  # every caller of the batch sees the failure
                for _, _, future in group:
                    if not future.done():
                        future.set_exception(err)
                continue
            for (_, _, future), result in zip(group, results, strict=True):
                if not future.done():
                    future.set_result(result)


if __name__ == "__main__":  # `python -m harness.models.whitebox [NAME]`: build, print DIR
    import sys

    print(ladder_hf_copy(sys.argv[1]) if len(sys.argv) > 1 else ensure_hf_copy())
