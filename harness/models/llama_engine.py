"""One llama.cpp chat engine, shared by ``embedded/`` (in process) and ``harness serve``.

Both take OpenAI-style messages (see :mod:`harness.models.toolprompt`), so the served path
renders, constrains and parses exactly as the in-process one does; only the transport
differs. What the engine adds to a bare ``llama_cpp.Llama``:

- **The model's own template with its tools block** (:mod:`harness.models.chat_template`);
  a template without one (SmolLM2) gets the tools described in the system turn instead.
- **Grammar-constrained calls** when ``tool_choice`` forces a tool: the reply is prefilled
  with ``<tool_call>`` and decoded under a JSON-schema grammar of the allowed calls.
- **Prefix reuse across turns, without giving up determinism.** An agent turn re-sends the
  whole conversation. The engine evaluates every prompt in blocks of :data:`BLOCK` tokens
  aligned to absolute positions, keeps the KV of complete blocks, and stores it (sequence
  state only, no logits) in a byte-bounded LRU :class:`PrefixStore`, so samples that
  interleave on one model each resume from their own prefix. Why aligned blocks: llama.cpp's
  numbers depend on how tokens are batched, so a prefix evaluated in other batches than a
  fresh run would use gives other logits, and a sampled reply would depend on which sample
  ran before. With aligned blocks a token's KV is computed from the same batch whether it
  comes from the store or not (the partial last block and the final token are always
  re-evaluated, as are generated tokens, whose KV came one token at a time), so the same
  prompt gives the same reply in any order. Every completion reports the prompt tokens it
  re-used (``cached_tokens``), which Inspect logs as ``input_tokens_cache_read``.

``llama_cpp`` is imported lazily; one ``Llama`` per (file, n_ctx, threads) per process.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.models.chat_template import ChatTemplate
from harness.models.toolprompt import CLOSE_TAG, OPEN_TAG, call_schema, fallback_messages

DEFAULT_N_CTX = 2048
DEFAULT_PREFIX_CACHE_MB = 1024
BLOCK = 64
"""Prompt tokens are evaluated in batches aligned to multiples of this (see above)."""

_ENGINES: dict[tuple[str, int, int, bool, int], ChatEngine] = {}
_ENGINES_LOCK = threading.Lock()


@atexit.register
def _close_engines() -> None:
    """Free models while llama_cpp still exists (``Llama.__del__`` at interpreter teardown
    finds its module globals set to None and prints a traceback)."""
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            engine.llama.close()
        _ENGINES.clear()


WAIT_POLICY = "PASSIVE"
"""OpenMP's waiting policy for llama.cpp's threads unless ``OMP_WAIT_POLICY`` is set
(measured both ways: tests/perf/test_engine_wait_policy_perf.py)."""


def default_threads() -> int:
    """Cores this process may use (the affinity mask, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass
class Completion:
    """One completion: raw text (prefill included) and the token accounting."""

    text: str
    prompt: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    """Prompt tokens whose KV came from an earlier evaluation (not re-processed)."""
    finish_reason: str | None
    grammar: bool
    refused: bool = False
    """The prompt fills the window: nothing was evaluated (``prompt_tokens`` is its length)."""


@dataclass
class Prepared:
    """A completion request rendered and tokenized, not yet decoded (see
    :meth:`ChatEngine.prepare`)."""

    prompt: str
    prefill: str
    tokens: list[int]
    grammar: Any
    kwargs: dict[str, Any]
    """llama-cpp-python completion kwargs: sampling, ``stop``, clamped ``max_tokens``."""
    forced: bool
    early: Completion | None
    """The answer without decoding (a prompt that fills the window), else None."""


def shared_engine(
    path: Path,
    n_ctx: int = DEFAULT_N_CTX,
    n_threads: int | None = None,
    extra_bufts: bool = False,
    prefix_cache_mb: int = DEFAULT_PREFIX_CACHE_MB,
) -> ChatEngine:
    """The process-wide engine for these settings."""
    threads = n_threads or default_threads()
    key = (str(path.resolve()), int(n_ctx), threads, bool(extra_bufts), int(prefix_cache_mb))
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            llama = _new_llama(path, int(n_ctx), threads, bool(extra_bufts))
            _ENGINES[key] = ChatEngine(llama, int(prefix_cache_mb))
        return _ENGINES[key]


def _new_llama(path: Path, n_ctx: int, n_threads: int, extra_bufts: bool) -> Any:
    """A ``Llama`` with llama.cpp's "extra buffer types" off unless asked: its AMX path
    crashes (SIGSEGV in ``ggml_backend_amx_mul_mat``) on VMs that advertise AMX but don't
    grant the tile state, and llama-cpp-python has no argument for it, so the default model
    params are patched for the duration of the load."""
    # OpenMP reads its waiting policy once, when llama.cpp's library loads: idle threads
    # that spin (the default, ACTIVE) take the cores a busy machine's other processes need,
    # and a prompt block took 2-6x longer at load 4.5; a user's own setting is kept
    os.environ.setdefault("OMP_WAIT_POLICY", WAIT_POLICY)
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


def _common_prefix(a: Any, b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PrefixStore:
    """KV states of block-aligned prompt prefixes, least recently used evicted past a byte
    budget. A state is one sequence's KV cells (``llama_state_seq_get_data``), not logits."""

    def __init__(self, capacity_bytes: int) -> None:
        from collections import OrderedDict

        self.capacity = capacity_bytes
        self.used = 0
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._states)

    def best(self, tokens: list[int], limit: int) -> tuple[tuple[int, ...], int] | None:
        """The stored prefix sharing most of ``tokens`` (aligned, at most ``limit``)."""
        found: tuple[tuple[int, ...], int] | None = None
        for key in self._states:
            shared = min(_common_prefix(key, tokens), limit) // BLOCK * BLOCK
            if shared > 0 and (found is None or shared > found[1]):
                found = (key, shared)
        return found

    def get(self, key: tuple[int, ...]) -> bytes:
        self._states.move_to_end(key)
        return self._states[key]

    def put(self, key: tuple[int, ...], state: bytes) -> None:
        if key in self._states or len(state) > self.capacity:
            return
        self._states[key] = state
        self.used += len(state)
        while self.used > self.capacity and self._states:
            _, old = self._states.popitem(last=False)
            self.used -= len(old)


def _token_text(llama: Any, token: int) -> str:
    if token < 0:
        return ""
    return bytes(llama.detokenize([token], special=True)).decode("utf-8", errors="ignore")


class ChatEngine:
    """A llama.cpp model with its chat template, a prefix cache and a lock.

    A llama context is not re-entrant: :meth:`complete` holds the lock for the whole call
    (callers run it in a worker thread).
    """

    def __init__(self, llama: Any, prefix_cache_mb: int = DEFAULT_PREFIX_CACHE_MB) -> None:
        self.llama = llama
        self.lock = threading.Lock()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama")
        """The one thread that runs this model. llama.cpp's OpenMP pool belongs to the
        calling thread: generation hopping between threads (a new one per HTTP request, or
        any of asyncio's pool) builds a pool per thread, and idle pools spin on the same two
        cores (measured here: 0.45 s -> 0.9-1.3 s for a 32-token reply of the 135M model
        when a second thread's pool was live)."""
        meta: dict[str, str] = llama.metadata
        eos = _token_text(llama, int(meta.get("tokenizer.ggml.eos_token_id", -1)))
        bos = _token_text(llama, int(meta.get("tokenizer.ggml.bos_token_id", -1)))
        self.template = ChatTemplate(meta.get("tokenizer.chat_template"), bos, eos)
        self.name = str(meta.get("general.name", ""))
        self.store = PrefixStore(prefix_cache_mb << 20) if prefix_cache_mb > 0 else None
        self._aligned: list[int] = []
        """Tokens whose KV in the live context came from aligned blocks."""

    @property
    def native_tools(self) -> bool:
        """Whether the model's template has a tools block of its own."""
        return self.template.supports_tools

    def tokenize(self, text: str) -> list[int]:
        """Token ids (special tokens parsed, no BOS)."""
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def prompt_tokens(self, prompt: str) -> list[int]:
        """The tokens a completion of ``prompt`` evaluates (BOS where the model wants one)."""
        return list(self.llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))

    def _prefill(self, tokens: list[int]) -> int:
        """Bring the live context to ``tokens[:-1]`` through aligned blocks, re-using what
        the context or the store holds; returns how many prompt tokens were re-used."""
        import ctypes

        import llama_cpp

        llama = self.llama
        target = (len(tokens) - 1) // BLOCK * BLOCK
        reuse = min(_common_prefix(self._aligned, tokens), target) // BLOCK * BLOCK
        stored = self.store.best(tokens, target) if self.store is not None else None
        if stored is not None and stored[1] > reuse:
            key, reuse = stored
            state = self.store.get(key) if self.store is not None else b""
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
            if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, buffer, len(state), 0) == 0:
                reuse = 0  # a state that does not restore: evaluate from scratch
            else:
                llama.input_ids[: len(key)] = key
        llama.n_tokens = reuse  # eval() drops the KV cells past n_tokens
        for start in range(reuse, target, BLOCK):
            llama.eval(tokens[start : start + BLOCK])
        self._aligned = tokens[:target]
        if self.store is not None and target > reuse:
            size = llama_cpp.llama_state_seq_get_size(llama._ctx.ctx, 0)
            buffer = (ctypes.c_uint8 * size)()
            written = llama_cpp.llama_state_seq_get_data(llama._ctx.ctx, buffer, size, 0)
            self.store.put(tuple(self._aligned), bytes(buffer)[:written])
        if len(tokens) - 1 > target:  # the partial last block, always evaluated whole
            llama.eval(tokens[target:-1])
        return reuse

    def window(self) -> int:
        """The real context size: llama.cpp may round it up, llama-cpp-python's buffers keep
        the requested size, so the smaller of the two."""
        return int(min(self.llama.n_ctx(), self.llama.context_params.n_ctx))

    def prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        """The rendered prompt (tools through the template's own block when it has one)."""
        if self.native_tools:
            return self.template.render(messages, tools)
        return self.template.render(fallback_messages(messages, tools))

    def prepare(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        forced: list[dict[str, Any]],
        sampling: dict[str, Any],
        use_grammar: bool = True,
    ) -> Prepared:
        """Everything a completion needs before it touches the context: the rendered prompt
        (with the ``<tool_call>`` prefill when a tool is forced), its tokens, the grammar and
        the llama-cpp-python sampling kwargs with the template's stop strings added and
        ``max_tokens`` clamped to the room left in the window. Shared by :meth:`complete`
        and the batched decoder (:mod:`harness.models.batch_decode`), so both decode the
        same tokens under the same settings."""
        prompt = self.prompt(messages, tools)
        prefill = ""
        grammar = None
        if forced:
            prefill = OPEN_TAG + ("\n" if self.native_tools else "")
            grammar = self._grammar(forced) if use_grammar else None
        prompt += prefill
        stops = list(sampling.get("stop") or []) + self.template.stops()
        stops += [CLOSE_TAG] if forced else []
        kwargs = {**sampling, "stop": list(dict.fromkeys(stops))}
        tokens = self.prompt_tokens(prompt)
        room = self.window() - len(tokens)
        early = None
        if room <= 0:
            early = Completion(prefill, prompt, len(tokens), 0, 0, "model_length", False,
                               refused=True)
        else:
            kwargs["max_tokens"] = min(int(kwargs.get("max_tokens") or room), room)
        return Prepared(prompt, prefill, tokens, grammar, kwargs, bool(forced), early)

    def finish(self, prepared: Prepared, text: str, prompt_tokens: int,
               completion_tokens: int, cached: int, finish_reason: str | None) -> Completion:
        """The :class:`Completion` of a decoded reply (prefill and closing tag restored)."""
        text = prepared.prefill + text
        if prepared.forced:
            text += ("\n" if self.native_tools else "") + CLOSE_TAG
        return Completion(text, prepared.prompt, prompt_tokens, completion_tokens, cached,
                          finish_reason, prepared.grammar is not None)

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        forced: list[dict[str, Any]],
        sampling: dict[str, Any],
        use_grammar: bool = True,
    ) -> Completion:
        """Render, complete (constrained when ``forced`` is non-empty) and account tokens.

        ``sampling`` holds llama-cpp-python completion kwargs (``max_tokens``, ``stop``,
        ``temperature``, ``seed``...); the template's own stop strings are added here.
        """
        prepared = self.prepare(messages, tools, forced, sampling, use_grammar)
        if prepared.early is not None:
            return prepared.early
        tokens = prepared.tokens
        with self.lock:
            cached = self._prefill(tokens)
            # llama.cpp now holds tokens[:-1]: the completion evaluates the last one alone
            result: dict[str, Any] = self.llama.create_completion(
                tokens, grammar=prepared.grammar, **prepared.kwargs
            )
        usage = result["usage"]
        return self.finish(prepared, result["choices"][0]["text"], int(usage["prompt_tokens"]),
                           int(usage["completion_tokens"]), cached,
                           result["choices"][0].get("finish_reason"))

    def _grammar(self, forced: list[dict[str, Any]]) -> Any:
        from llama_cpp import LlamaGrammar

        try:
            return LlamaGrammar.from_json_schema(json.dumps(call_schema(forced)), verbose=False)
        except Exception:  # a schema the GBNF converter can't express: decode freely
            return None
