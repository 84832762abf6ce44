"""``embedded/<name>``: a small GGUF chat model served in-process by llama.cpp, fully offline.

    inspect eval TASK --model embedded/smollm2-135m                 # bundled SmolLM2-135M Q4_1
    inspect eval TASK --model embedded/mine -M model_path=FILE.gguf  # any local GGUF
    -M n_ctx=4096 -M n_threads=2                                     # defaults: 2048, all cores

Why in-process: no server to start, ~0.2 s load, ~100 tok/s on 2 idle cores for the 135M model,
so agent loops and whole evals run in CI. Tool calling goes through the prompt format of
:mod:`harness.models.toolprompt`; when ``tool_choice`` forces a tool the call is constrained
with a JSON-schema grammar so even a 135M model emits a parseable call.

Design notes:
- ``llama_cpp`` is imported lazily (the registry must stay light); one ``Llama`` per
  (file, n_ctx, n_threads) per process, shared by every ModelAPI instance.
- Generation runs in a worker thread (``asyncio.to_thread``) under a lock: a llama context is
  not re-entrant. ``max_connections`` defaults to 1 so Inspect queues requests itself
  instead of parking threads on the lock.
- llama.cpp's AMX "extra buffer type" crashes (SIGSEGV in ``ggml_backend_amx_mul_mat``) on
  VMs that advertise AMX but don't grant the tile state (Firecracker here), so extra buffer
  types are off unless ``-M extra_bufts=true``. llama-cpp-python exposes no argument for
  ``use_extra_bufts``; we patch the default model params for the duration of the load.
- Speed depends on having the cores to itself: llama.cpp's OpenMP workers spin between ops.
  Measured here with 2 threads: ~105 tok/s on an idle box (libgomp's default wait policy),
  ~28 tok/s with ``OMP_WAIT_POLICY=PASSIVE``; on a box oversubscribed by other jobs
  (load average 5-6) the default fell to 7-62 tok/s and PASSIVE held 36-54 tok/s. So the
  default is left alone; export ``OMP_WAIT_POLICY=PASSIVE`` (before anything loads libgomp,
  torch included) on a shared, oversubscribed machine.
- Usage comes from llama.cpp's own token counts; ``count_text_tokens`` uses the model's
  tokenizer, so Inspect never reaches for tiktoken.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.model._model_call import ModelCall
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
from harness.models.toolprompt import CLOSE_TAG, OPEN_TAG, call_schema, forced_tools, to_chat
from harness.models.weights import resolve_gguf

DEFAULT_N_CTX = 2048
CHATML_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""Fallback template for a GGUF without ``tokenizer.chat_template``."""

_LLAMAS: dict[tuple[str, int, int, bool], tuple[Any, threading.Lock]] = {}
_LLAMAS_LOCK = threading.Lock()


@atexit.register
def _close_llamas() -> None:
    """Free cached models while llama_cpp still exists (``Llama.__del__`` at interpreter
    teardown finds its module globals set to None and prints a traceback)."""
    with _LLAMAS_LOCK:
        for llama, _ in _LLAMAS.values():
            llama.close()
        _LLAMAS.clear()


def default_threads() -> int:
    """Cores this process may use (the affinity mask, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def load_llama(
    path: Path, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None, extra_bufts: bool = False
) -> tuple[Any, threading.Lock]:
    """The process-wide ``llama_cpp.Llama`` for these settings and the lock that guards it."""
    threads = n_threads or default_threads()
    key = (str(path.resolve()), n_ctx, threads, extra_bufts)
    with _LLAMAS_LOCK:
        if key not in _LLAMAS:
            _LLAMAS[key] = (_new_llama(path, n_ctx, threads, extra_bufts), threading.Lock())
        return _LLAMAS[key]


def _new_llama(path: Path, n_ctx: int, n_threads: int, extra_bufts: bool) -> Any:
    try:
        import llama_cpp.llama as llama_module
    except ImportError as ex:
        raise RuntimeError(
            "the embedded provider needs llama-cpp-python (pip install llama-cpp-python)"
        ) from ex
    lib = llama_module.llama_cpp
    default_params = lib.llama_model_default_params

    def params_without_extra_bufts() -> Any:
        params = default_params()
        params.use_extra_bufts = extra_bufts
        return params

    lib.llama_model_default_params = params_without_extra_bufts
    try:
        return llama_module.Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            verbose=False,
        )
    finally:
        lib.llama_model_default_params = default_params


class ChatTemplate:
    """The GGUF's own Jinja chat template (ChatML for SmolLM2), rendered with jinja2."""

    def __init__(self, llama: Any) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        meta: dict[str, str] = llama.metadata
        template = meta.get("tokenizer.chat_template") or CHATML_TEMPLATE
        self.eos = _token_text(llama, int(meta.get("tokenizer.ggml.eos_token_id", -1)))
        bos = _token_text(llama, int(meta.get("tokenizer.ggml.bos_token_id", -1)))
        self._formatter = Jinja2ChatFormatter(template, eos_token=self.eos, bos_token=bos)

    def render(self, chat: list[dict[str, str]]) -> tuple[str, list[str]]:
        """Prompt text ending with the assistant header, and the template's stop strings."""
        messages: Any = chat  # llama_cpp types messages as TypedDicts; plain dicts are fine
        response = self._formatter(messages=messages)
        stops = response.stop if isinstance(response.stop, list) else [response.stop or ""]
        return response.prompt, [s for s in [*stops, self.eos] if s]


def _token_text(llama: Any, token: int) -> str:
    if token < 0:
        return ""
    return bytes(llama.detokenize([token], special=True)).decode("utf-8", errors="ignore")


class EmbeddedModelAPI(LocalModelAPI):
    """Inspect ModelAPI over an in-process llama.cpp model (see module docstring).

    Args: ``-M model_path=FILE.gguf -M n_ctx=2048 -M n_threads=N -M extra_bufts=false
    -M grammar=true``.
    """

    provider = "embedded"

    def setup(
        self,
        model_path: str | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        extra_bufts: bool = False,
        grammar: bool = True,
        **model_args: Any,
    ) -> None:
        """Load (or reuse) the llama.cpp model for these ``-M`` args."""
        super().setup(**model_args)
        self.path = resolve_gguf(self.model_name, model_path)
        self.llama, self._lock = load_llama(self.path, int(n_ctx), n_threads, bool(extra_bufts))
        self.template = ChatTemplate(self.llama)
        self.use_grammar = bool(grammar)

    def max_tokens(self) -> int | None:
        """Default completion budget when the task sets none."""
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        """One llama context: let Inspect queue requests rather than park threads."""
        return 1

    async def count_text_tokens(self, text: str) -> int:
        """Exact count with the model's tokenizer (never tiktoken)."""
        return len(await self.tokenize(text))

    async def tokenize(self, text: str) -> list[int]:
        """Token ids from the GGUF's tokenizer (special tokens parsed)."""
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        """Render the chat, complete it with llama.cpp off the event loop, parse tool calls."""
        prompt, stops = self.template.render(to_chat(input, tools, tool_choice))
        forced = forced_tools(tools, tool_choice)
        grammar = None
        if forced:
            prompt += OPEN_TAG  # prefill: the reply *is* a call
            grammar = self._grammar(forced)
        kwargs = self._sampling(config, stops + ([CLOSE_TAG] if forced else []))
        kwargs["seed"] = call_seed(prompt, config.seed)
        result = await asyncio.to_thread(self._complete, prompt, grammar, kwargs)
        text: str = result["choices"][0]["text"]
        if forced:
            text = OPEN_TAG + text + CLOSE_TAG
        output = self._output(text, tools, tool_choice, result)
        request = {"prompt": prompt, "grammar": grammar is not None, **kwargs}
        return output, ModelCall.create(request, result)

    def _complete(self, prompt: str, grammar: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        n_prompt = len(self.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))
        # llama.cpp may round the context up (min 256); llama-cpp-python's buffers keep the
        # requested size, so the smaller of the two is the real window
        room = min(self.llama.n_ctx(), self.llama.context_params.n_ctx) - n_prompt
        if room <= 0:
            return _overflow(n_prompt)
        kwargs = {**kwargs, "max_tokens": min(kwargs["max_tokens"], room)}
        with self._lock:
            result: dict[str, Any] = self.llama.create_completion(prompt, grammar=grammar, **kwargs)
        return result

    def _grammar(self, tools: list[ToolInfo]) -> Any:
        if not self.use_grammar:
            return None
        import json

        from llama_cpp import LlamaGrammar

        try:
            return LlamaGrammar.from_json_schema(json.dumps(call_schema(tools)), verbose=False)
        except Exception:  # a schema the GBNF converter can't express: decode freely
            return None

    def _sampling(self, config: GenerateConfig, stops: list[str]) -> dict[str, Any]:
        max_tokens, temperature, top_p = sampling(config)
        kwargs: dict[str, Any] = {
            "max_tokens": max_tokens,
            "stop": stops + list(config.stop_seqs or []),
            "temperature": temperature,
            "top_p": top_p,
        }
        if config.top_k is not None:
            kwargs["top_k"] = config.top_k
        if config.frequency_penalty is not None:
            kwargs["frequency_penalty"] = config.frequency_penalty
        if config.presence_penalty is not None:
            kwargs["presence_penalty"] = config.presence_penalty
        if config.logit_bias:
            kwargs["logit_bias"] = {int(k): float(v) for k, v in config.logit_bias.items()}
        return kwargs

    def _output(
        self, text: str, tools: list[ToolInfo], tool_choice: ToolChoice, result: dict[str, Any]
    ) -> ModelOutput:
        usage = result["usage"]
        return reply_output(
            self.model_name,
            text,
            tools,
            tool_choice,
            result["choices"][0].get("finish_reason"),
            make_usage(usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]),
        )


def _overflow(n_prompt: int) -> dict[str, Any]:
    """A completion-shaped result for a prompt that does not fit the context window."""
    return {
        "choices": [{"text": "", "finish_reason": "model_length"}],
        "usage": {"prompt_tokens": n_prompt, "completion_tokens": 0, "total_tokens": n_prompt},
    }
