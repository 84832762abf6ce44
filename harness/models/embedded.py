"""``embedded/<name>``: a ladder model (or any GGUF) served in-process by llama.cpp, offline.

    inspect eval TASK --model embedded/qwen2.5-coder-0.5b           # the ladder (harness models)
    inspect eval TASK --model embedded/smollm2-135m                 # bundled SmolLM2-135M Q4_1
    inspect eval TASK --model embedded/mine -M model_path=FILE.gguf  # any local GGUF
    -M n_ctx=8192 -M n_threads=2 -M prefix_cache_mb=1024 -M grammar=true

Why in-process: no server to start, a load under 2 s, and whole agent evals run in CI.
Tool calls use the model's own chat template with its tools block (Qwen2.5: ``<tool_call>``
JSON, results in ``<tool_response>``); a template without one gets the prompt format of
:mod:`harness.models.toolprompt`. A forced ``tool_choice`` is decoded under a JSON-schema
grammar; free replies go through the lenient parser, and a call that does not parse comes
back to the model as a tool error (never a crashed sample). The rendering, grammar and
prefix reuse live in :mod:`harness.models.llama_engine`, shared with ``harness serve``.

Design notes:
- ``max_connections`` defaults to 1: one llama context, so Inspect queues requests itself.
  Interleaved samples each resume from their own cached prefix (the engine's RAM cache), so
  a turn costs its new tokens; usage reports them as ``input_tokens_cache_read``.
- Speed depends on having the cores to itself: llama.cpp's OpenMP workers spin between ops.
  On a shared, oversubscribed machine export ``OMP_WAIT_POLICY=PASSIVE`` before anything
  loads libgomp (measured here: the default fell to 7-62 tok/s at load 5-6, PASSIVE held
  36-54 tok/s for the 135M model).
- Usage comes from llama.cpp's own token counts; ``count_text_tokens`` uses the model's
  tokenizer, so Inspect never reaches for tiktoken.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelCall, ModelOutput, ModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo

from harness.models._common import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from harness.models._common import DEFAULT_TEMPERATURE as DEFAULT_TEMPERATURE
from harness.models._common import DEFAULT_TOP_P as DEFAULT_TOP_P
from harness.models._common import LocalModelAPI, call_seed, reply_output, sampling
from harness.models.ladder import resolve_gguf
from harness.models.llama_engine import (
    DEFAULT_PREFIX_CACHE_MB,
    ChatEngine,
    Completion,
    default_threads,
    shared_engine,
)
from harness.models.toolprompt import forced_tools, native_messages, openai_tools
from harness.models.weights import default_n_ctx

__all__ = ["EmbeddedModelAPI", "default_threads", "llama_kwargs", "load_llama"]


def load_llama(
    path: Path, n_ctx: int = 2048, n_threads: int | None = None, extra_bufts: bool = False
) -> tuple[Any, threading.Lock]:
    """A process-wide bare ``llama_cpp.Llama`` (no prefix cache) and its lock: for code that
    drives llama.cpp directly (perf tests, tokenizer checks)."""
    engine = shared_engine(path, n_ctx, n_threads, extra_bufts, prefix_cache_mb=0)
    return engine.llama, engine.lock


def llama_kwargs(config: GenerateConfig, defaults: dict[str, float] | None = None
                 ) -> dict[str, Any]:
    """llama-cpp-python completion kwargs for an Inspect config: what the config sets wins,
    then the model's own ``defaults`` (a ladder model's generation config), then the suite's."""
    model = dict(defaults or {})
    max_tokens, temperature, top_p = sampling(config)
    kwargs: dict[str, Any] = {
        "max_tokens": max_tokens,
        "stop": list(config.stop_seqs or []),
        "temperature": temperature if config.temperature is not None
        else model.get("temperature", temperature),
        "top_p": top_p if config.top_p is not None else model.get("top_p", top_p),
    }
    if config.top_k is not None or "top_k" in model:
        kwargs["top_k"] = int(config.top_k if config.top_k is not None else model["top_k"])
    if "repeat_penalty" in model:
        kwargs["repeat_penalty"] = model["repeat_penalty"]
    if config.frequency_penalty is not None:
        kwargs["frequency_penalty"] = config.frequency_penalty
    if config.presence_penalty is not None:
        kwargs["presence_penalty"] = config.presence_penalty
    if config.logit_bias:
        kwargs["logit_bias"] = {int(k): float(v) for k, v in config.logit_bias.items()}
    return kwargs


def completion_usage(done: Completion) -> ModelUsage:
    """Inspect usage of a completion: all prompt tokens as input, the re-used ones as read
    from cache (so a log shows what each turn really cost). A prompt refused for filling
    the window cost nothing, as a hosted API's context-length error does: zero usage (its
    length stays in the call's response), so summed usage counts only evaluated tokens."""
    if done.refused:
        return ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
    return ModelUsage(
        input_tokens=done.prompt_tokens,
        output_tokens=done.completion_tokens,
        total_tokens=done.prompt_tokens + done.completion_tokens,
        input_tokens_cache_read=done.cached_tokens,
    )


class EmbeddedModelAPI(LocalModelAPI):
    """Inspect ModelAPI over an in-process llama.cpp model (see module docstring).

    Args: ``-M model_path=FILE.gguf -M n_ctx=N -M n_threads=N -M extra_bufts=false
    -M grammar=true -M prefix_cache_mb=1024`` (0 turns the cross-sample cache off).
    """

    provider = "embedded"

    def setup(
        self,
        model_path: str | None = None,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        extra_bufts: bool = False,
        grammar: bool = True,
        prefix_cache_mb: int = DEFAULT_PREFIX_CACHE_MB,
        **model_args: Any,
    ) -> None:
        """Load (or reuse) the llama.cpp model for these ``-M`` args."""
        super().setup(**model_args)
        self.path = resolve_gguf(self.model_name, model_path)
        ctx = int(n_ctx) if n_ctx is not None else default_n_ctx(self.model_name)
        self.engine: ChatEngine = shared_engine(
            self.path, ctx, n_threads, bool(extra_bufts), int(prefix_cache_mb)
        )
        self.llama = self.engine.llama
        self.use_grammar = bool(grammar)
        from harness.models import ladder

        rung = ladder.find(self.model_name) if model_path is None else None
        self.sampling_defaults = dict(rung.sampling) if rung else {}

    def max_tokens(self) -> int | None:
        """Default completion budget when the task sets none."""
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        """One llama context: let Inspect queue requests rather than park threads."""
        return 1

    def tools_required(self) -> bool:
        """Keep the tools when ``tool_choice="none"`` (Inspect drops them otherwise): the
        prompt still lists them (the template's tools block, or the system-turn description
        of a template without one), so it keeps the conversation's prefix and a closing
        no-tools turn re-uses the episode's KV; no call is parsed from the reply."""
        return True

    async def count_text_tokens(self, text: str) -> int:
        """Exact count with the model's tokenizer (never tiktoken)."""
        return len(self.engine.tokenize(text))

    async def tokenize(self, text: str) -> list[int]:
        """Token ids from the GGUF's tokenizer (special tokens parsed)."""
        return self.engine.tokenize(text)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        """Render the chat, complete it with llama.cpp off the event loop, parse tool calls."""
        # tools stay listed under tool_choice="none" (they exist, the reply may not call
        # them) so the prompt keeps the conversation's prefix
        described = openai_tools(tools)
        forced = openai_tools(forced_tools(tools, tool_choice))
        messages = native_messages(input)
        kwargs = llama_kwargs(config, self.sampling_defaults)
        kwargs["seed"] = call_seed(self.engine.prompt(messages, described), config.seed)
        done = await asyncio.get_running_loop().run_in_executor(
            self.engine.worker, functools.partial(
                self.engine.complete, messages, described, forced, kwargs, self.use_grammar))
        output = reply_output(self.model_name, done.text, tools, tool_choice,
                              done.finish_reason, completion_usage(done))
        if done.refused:
            output.metadata = {"refused_prompt_tokens": done.prompt_tokens,
                               "context_window": self.engine.window()}
        request = {"prompt": done.prompt, "grammar": done.grammar, **kwargs}
        response = {"text": done.text, "finish_reason": done.finish_reason,
                    "prompt_tokens": done.prompt_tokens, "cached_tokens": done.cached_tokens,
                    "completion_tokens": done.completion_tokens, "refused": done.refused}
        return output, ModelCall.create(request, response)
