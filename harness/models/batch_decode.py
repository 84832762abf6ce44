"""Continuous batching for ``harness serve``: concurrent requests decoded in one batch.

Why: a llama context run one request at a time leaves most of a CPU's matrix throughput
unused while it decodes one token per step (a step is bound by reading the weights, and a
batch of four tokens reads them once). :class:`BatchDecoder` gives each request a sequence
of its own (``seq_id``) in a second llama context built with ``n_seq_max`` slots, and each
step evaluates the token every generating sequence sampled last in one ``llama_decode``
(prompt blocks of several tokens get a call of their own, see :meth:`BatchDecoder._step`).
Each sequence samples from its own row of
logits with its own sampler chain (penalties, the JSON-schema grammar of a forced tool call,
then greedy or top-k/typical/top-p/min-p/temperature/seeded draw), built as llama-cpp-python
builds it, so grammar-constrained calls batch like any other request.

What stays as the sequential engine does it (:class:`~harness.models.llama_engine.ChatEngine`):
the rendered prompt and sampling settings (:meth:`ChatEngine.prepare`); prompts evaluated
in blocks aligned to absolute positions (:data:`BLOCK`), then the partial block, then the
last token alone, so a token's KV comes from the same chunk it would alone; block-aligned
prefixes kept per slot and in a :class:`PrefixStore`, reported as ``cached_tokens``; stop
strings, end-of-generation tokens, ``max_tokens`` and incomplete UTF-8 handled as
``Llama.create_completion`` handles them. The KV cache is not unified (each slot has a
stream of its own, the full window long), so a sequence's attention sees the same cells at
the same places whether it runs alone or beside others.

Threading: all decoding runs on the engine's one worker thread (llama.cpp's OpenMP pool
belongs to the calling thread, see :attr:`ChatEngine.worker`); a request thread enqueues
its prepared request and waits on a future.
"""

from __future__ import annotations

import atexit
import ctypes
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from harness.models.llama_engine import (
    BLOCK,
    ChatEngine,
    Completion,
    PrefixStore,
    Prepared,
    _common_prefix,
)

MAX_SLOTS = 8
"""At most this many sequences at once: one step's batch is at most ``MAX_SLOTS * BLOCK``
tokens, which must fit ``n_batch`` (:data:`STEP_TOKENS`)."""
STEP_TOKENS = MAX_SLOTS * BLOCK
PENALTY_LAST_N = 64
"""llama-cpp-python's ``last_n_tokens_size`` default: the penalties' window."""


@dataclass
class _Sequence:
    """One request in flight: its prompt, sampler and where its decoding stands."""

    prepared: Prepared
    future: Future[Completion]
    slot: int = -1
    sampler: Any = None
    pos: int = 0
    """Tokens of this sequence whose KV is in the context."""
    cached: int = 0
    out: list[int] = field(default_factory=list)
    pending: int | None = None
    """The token sampled last, evaluated in the next step."""
    multibyte: int = 0

    @property
    def tokens(self) -> list[int]:
        return self.prepared.tokens

    @property
    def target(self) -> int:
        """End of the prompt's complete aligned blocks (never the last token)."""
        return (len(self.tokens) - 1) // BLOCK * BLOCK

    def chunk(self) -> tuple[list[int], bool]:
        """The tokens this sequence evaluates next and whether their last row is sampled."""
        if self.pending is not None:
            return [self.pending], True
        if self.pos < self.target:
            return self.tokens[self.pos : self.pos + BLOCK], False
        if self.pos < len(self.tokens) - 1:
            return self.tokens[self.pos : len(self.tokens) - 1], False
        return self.tokens[-1:], True


class BatchDecoder:
    """Decodes up to ``slots`` requests together on a context of its own (module docstring).

    ``complete`` has :meth:`ChatEngine.complete`'s signature and result; call it from any
    thread (it blocks until the reply is done)."""

    def __init__(self, engine: ChatEngine, slots: int = 4) -> None:
        import llama_cpp
        from llama_cpp import _internals as internals

        if not 1 <= slots <= MAX_SLOTS:
            raise ValueError(f"slots must be in [1, {MAX_SLOTS}], got {slots}")
        self.engine = engine
        self.slots = slots
        llama = engine.llama
        self.window = engine.window()
        source = llama.context_params
        params = type(source).from_buffer_copy(source)
        params.n_seq_max = slots
        params.kv_unified = False  # one stream per slot, each the full window
        params.n_ctx = self.window * slots
        params.n_batch = params.n_ubatch = STEP_TOKENS
        self._lib = llama_cpp
        self.ctx = internals.LlamaContext(model=llama._model, params=params, verbose=False)
        self._memory = llama_cpp.llama_get_memory(self.ctx.ctx)
        self._batch = llama_cpp.llama_batch_init(STEP_TOKENS, 0, 1)
        self._vocab = llama._model.vocab
        self._n_vocab = llama.n_vocab()
        self.store = PrefixStore(engine.store.capacity) if engine.store is not None else None
        self._held: list[list[int]] = [[] for _ in range(slots)]
        """Per slot, the prompt tokens whose aligned-block KV the slot still holds."""
        self._free = list(range(slots))
        self._active: list[_Sequence] = []
        self._waiting: deque[_Sequence] = deque()
        self._lock = threading.Lock()
        self._running = False
        self._closed = False
        self.steps = 0
        """Decode calls made (a batch of several sequences counts once)."""
        self.peak = 0
        """Most sequences active in one step."""
        atexit.register(self.close)  # before the engine's model is freed (atexit is LIFO)

    def close(self) -> None:
        """Free the context and the batch (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._lib.llama_batch_free(self._batch)
        self.ctx.close()

    # -- the request side -------------------------------------------------------------

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        forced: list[dict[str, Any]],
        sampling: dict[str, Any],
        use_grammar: bool = True,
    ) -> Completion:
        """Like :meth:`ChatEngine.complete`, decoded in a batch with whatever else runs."""
        prepared = self.engine.prepare(messages, tools, forced, sampling, use_grammar)
        if prepared.early is not None:
            return prepared.early
        return self.submit(prepared).result()

    def submit(self, prepared: Prepared) -> Future[Completion]:
        """Queue a prepared request; the future holds its completion."""
        sequence = _Sequence(prepared, Future())
        with self._lock:
            if self._closed:
                raise RuntimeError("the batch decoder is closed")
            self._waiting.append(sequence)
            start = not self._running
            self._running = True
        if start:
            self.engine.worker.submit(self._loop)
        return sequence.future

    # -- the decode thread ------------------------------------------------------------

    def _loop(self) -> None:
        """Step until nothing is active or waiting (runs on the engine's worker)."""
        try:
            while True:
                with self._lock:
                    self._admit()
                    if not self._active:
                        self._running = False
                        return
                self._step()
        except BaseException as exc:  # a llama failure: every request in flight learns it
            with self._lock:
                failed = self._active + list(self._waiting)
                self._active, self._waiting = [], deque()
                self._free = list(range(self.slots))
                self._held = [[] for _ in range(self.slots)]
                self._running = False
            self._lib.llama_memory_clear(self._memory, True)
            for sequence in failed:
                if not sequence.future.done():
                    sequence.future.set_exception(exc)

    def _admit(self) -> None:
        """Give waiting requests free slots, each the slot holding most of its prompt."""
        while self._waiting and self._free:
            sequence = self._waiting.popleft()
            tokens, target = sequence.tokens, sequence.target
            best = max(self._free, key=lambda s: (
                min(_common_prefix(self._held[s], tokens), target) // BLOCK * BLOCK, -s))
            self._free.remove(best)
            reuse = min(_common_prefix(self._held[best], tokens), target) // BLOCK * BLOCK
            reuse = self._restore(best, tokens, target, reuse)
            self._lib.llama_memory_seq_rm(self._memory, best, reuse, -1)
            self._held[best] = tokens[:reuse]
            sequence.slot, sequence.pos, sequence.cached = best, reuse, reuse
            sequence.sampler = self._sampler(sequence.prepared)
            self._active.append(sequence)

    def _restore(self, slot: int, tokens: list[int], target: int, reuse: int) -> int:
        """Load the store's longest prefix of ``tokens`` into ``slot`` if it beats
        ``reuse``; returns the prefix length the slot now holds."""
        stored = self.store.best(tokens, target) if self.store is not None else None
        if self.store is None or stored is None or stored[1] <= reuse:
            return reuse
        key, length = stored
        state = self.store.get(key)
        self._lib.llama_memory_seq_rm(self._memory, slot, 0, -1)
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if self._lib.llama_state_seq_set_data(self.ctx.ctx, buffer, len(state), slot) == 0:
            self._lib.llama_memory_seq_rm(self._memory, slot, 0, -1)
            return 0  # a state that does not restore: evaluate from scratch
        self._lib.llama_memory_seq_rm(self._memory, slot, length, -1)
        return length

    def _sampler(self, prepared: Prepared) -> Any:
        """The sampler chain ``Llama.create_completion`` would build for these kwargs."""
        from llama_cpp import _internals as internals

        kw = prepared.kwargs
        sampler = internals.LlamaSampler()
        sampler.add_penalties(
            n_vocab=self._n_vocab, penalty_last_n=PENALTY_LAST_N,
            penalty_repeat=float(kw.get("repeat_penalty", 1.0)),
            penalty_freq=float(kw.get("frequency_penalty", 0.0)),
            penalty_present=float(kw.get("presence_penalty", 0.0)))
        if prepared.grammar is not None:
            sampler.add_grammar(self.engine.llama._model, prepared.grammar)
        temperature = float(kw.get("temperature", 0.8))
        seed = int(kw.get("seed", 0)) & 0xFFFFFFFF
        if temperature < 0.0:
            sampler.add_dist(seed)
        elif temperature == 0.0:
            sampler.add_greedy()
        else:
            sampler.add_top_k(int(kw.get("top_k", 40)))
            sampler.add_typical(float(kw.get("typical_p", 1.0)), 1)
            sampler.add_top_p(float(kw.get("top_p", 0.95)), 1)
            sampler.add_min_p(float(kw.get("min_p", 0.05)), 1)
            sampler.add_temp(temperature)
            sampler.add_dist(seed)
        return sampler

    def _decode(self, rows: list[tuple[_Sequence, list[int], bool]]) -> list[int]:
        """One ``llama_decode`` of each sequence's chunk; the batch rows to sample from."""
        batch = self._batch
        sampled: list[int] = []
        n = 0
        for sequence, chunk, sample in rows:
            for i, token in enumerate(chunk):
                batch.token[n] = token
                batch.pos[n] = sequence.pos + i
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = sequence.slot
                batch.logits[n] = sample and i == len(chunk) - 1
                n += 1
            if sample:
                sampled.append(n - 1)
        batch.n_tokens = n
        code = self._lib.llama_decode(self.ctx.ctx, batch)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code} for a batch of {n} tokens "
                               f"over {len(rows)} sequences")
        self.steps += 1
        for sequence, chunk, _ in rows:
            sequence.pos += len(chunk)
            if sequence.pending is None and sequence.pos == sequence.target:
                self._keep_prefix(sequence)
        return sampled

    def _step(self) -> None:
        """Advance every active sequence by one chunk, then sample those that are due.

        Prompt chunks of several tokens are decoded one sequence per call: on some models
        (Qwen2.5-Coder-0.5B's Q4_K_M file, measured) a prompt's KV depends on how its tokens
        are cut into micro-batches, and llama.cpp cuts a batch that mixes a 64-token block
        with other sequences' single tokens into equal per-sequence parts. A chunk of one
        token (a sampled token, a prompt's last token) does not change with its neighbours
        (measured: identical logits with 0, 1 or 3 other sequences in the batch), so all of
        those go into one batched call: that is where the throughput comes from."""
        singles: list[tuple[_Sequence, list[int], bool]] = []
        for sequence in self._active:
            chunk, sample = sequence.chunk()
            if len(chunk) > 1:
                self._decode([(sequence, chunk, sample)])
            else:
                singles.append((sequence, chunk, sample))
        self.peak = max(self.peak, len(singles))
        if not singles:
            return
        rows = self._decode(singles)
        due = [sequence for sequence, _, sample in singles if sample]
        done = []
        for sequence, row in zip(due, rows, strict=True):
            sequence.pending = None
            if self._sample(sequence, row):
                done.append(sequence)
        for sequence, _, sample in singles:
            if not sample:
                sequence.pending = None
        if done:
            with self._lock:
                for sequence in done:
                    self._active.remove(sequence)
                    self._lib.llama_memory_seq_rm(self._memory, sequence.slot,
                                                  sequence.target, -1)
                    self._free.append(sequence.slot)

    def _keep_prefix(self, sequence: _Sequence) -> None:
        """The prompt's aligned blocks are all in: remember them in the slot and store."""
        target = sequence.target
        self._held[sequence.slot] = sequence.tokens[:target]
        if self.store is None or target <= sequence.cached:
            return
        size = self._lib.llama_state_seq_get_size(self.ctx.ctx, sequence.slot)
        buffer = (ctypes.c_uint8 * size)()
        written = self._lib.llama_state_seq_get_data(self.ctx.ctx, buffer, size, sequence.slot)
        self.store.put(tuple(sequence.tokens[:target]), bytes(buffer)[:written])

    def _sample(self, sequence: _Sequence, row: int) -> bool:
        """Sample the sequence's next token from batch row ``row``; True when it is done
        (its future then holds the completion)."""
        token = int(sequence.sampler.sample(self.ctx, row))
        llama = self.engine.llama
        prompt = sequence.tokens
        if self._lib.llama_vocab_is_eog(self._vocab, token):
            return self._finish(sequence, llama.detokenize(sequence.out, prev_tokens=prompt),
                                "stop")
        sequence.out.append(token)
        text: bytes = llama.detokenize(sequence.out, prev_tokens=prompt)
        for k, char in enumerate(text[-3:]):  # an incomplete UTF-8 character: go on
            k = 3 - k
            for num, pattern in ((2, 192), (3, 224), (4, 240)):
                if num > k and pattern & char == pattern:
                    sequence.multibyte = num - k
        if sequence.multibyte > 0:
            sequence.multibyte -= 1
            sequence.pending = token
            return False
        stops = [s.encode("utf-8") for s in sequence.prepared.kwargs.get("stop") or []]
        hits = [s for s in stops if s in text]
        if hits:
            return self._finish(sequence, text[: text.index(hits[0])], "stop")
        if len(sequence.out) >= int(sequence.prepared.kwargs["max_tokens"]):
            return self._finish(sequence, text, "length")
        sequence.pending = token
        return False

    def _finish(self, sequence: _Sequence, text: bytes, reason: str) -> bool:
        done = self.engine.finish(sequence.prepared, text.decode("utf-8", errors="ignore"),
                                  len(sequence.tokens), len(sequence.out), sequence.cached,
                                  reason)
        sequence.sampler.close()
        sequence.future.set_result(done)
        return True
