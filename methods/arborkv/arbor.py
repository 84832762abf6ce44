"""ArborKV: tree-of-thoughts decoding where every node owns its KV, under a memory budget.

Each node of the search tree holds the KV of its own tokens only (the root: the prompt);
a node's full context is the concatenation of its ancestors' KV. Expanding a node branches
on the ``branch`` most likely next tokens and continues each greedily for ``segment``
tokens (a "thought"). A light value estimator — the path's mean token log-probability —
picks which frontier node to expand next (best-first) and which finished leaf answers.

Memory policy (after the ArborKV description; no public code): before each expansion the
active branch (the node about to be expanded and all its ancestors) keeps its full KV; the
other nodes share ``budget`` tokens, handed out by value (best first, the boundary node
keeps a prefix of its tokens); everything else is evicted outright. Revisiting a node whose
path lost tokens re-prefills exactly the missing tokens from the token ids (lazy
re-prefill), then keeps them while the node is active. ``budget=None`` never evicts.

With ``branch=1`` the tree is a chain of greedy thoughts, i.e. the model's own greedy
decoding (tested token-exact); with no eviction it is the unmodified search, which the
budgeted one is compared with (``reference=True``). Runs inside the ``whitebox/`` decode
loop as ``-M method=arborkv``: the search runs after prefill (reusing the loop's prompt
cache as the root's KV) and the loop then emits the chosen answer's tokens::

    inspect eval harness/passkey --model whitebox/smollm2-135m -M method=arborkv -M budget=8
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from harness.plugins.whitebox_method import Method, RequestState, StepView, whitebox_method
from methods.kv.cache import (
    KVRun,
    LayerKV,
    flag,
    force_logits,
    full_kv_bytes,
    layers_of,
    make_cache,
    prefix_agreement,
    step,
)


@dataclass(eq=False)
class Node:
    """One thought: its tokens, their log-probabilities, and the part of its KV still kept."""

    tokens: list[int]
    logprob: float
    parent: Node | None
    kv: list[LayerKV] | None
    next_logits: torch.Tensor | None
    finished: bool = False
    expanded: bool = False
    children: list[Node] = field(default_factory=list)

    @property
    def kept(self) -> int:
        """Tokens of this node whose KV is resident."""
        return 0 if self.kv is None else int(self.kv[0][0].shape[2])

    def path(self) -> list[Node]:
        """Root ... self."""
        node: Node | None = self
        out: list[Node] = []
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]

    def answer(self) -> list[int]:
        """Generated tokens from the root's end to this node (the root's prompt excluded)."""
        return [t for n in self.path()[1:] for t in n.tokens]

    def value(self) -> float:
        """Mean log-probability of the generated tokens on the path (0 for the root)."""
        n = len(self.answer())
        total = sum(node.logprob for node in self.path()[1:])
        return total / n if n else 0.0


@dataclass
class SearchStats:
    """Memory and work of one search, in tokens of KV (times bytes per token = bytes)."""

    peak_tokens: int = 0
    peak_tree_tokens: int = 0
    total_tokens: int = 0
    reprefill_tokens: int = 0
    reprefills: int = 0
    """Revisits that re-prefilled a node's evicted tokens (one count per node and visit)."""
    evicted_tokens: int = 0
    evictions: int = 0
    """Times a node lost tokens to the budget."""
    expansions: int = 0
    nodes: int = 1
    forward_passes: int = 0
    """Model forwards the search ran (generation and re-prefill; the prompt's prefill is the
    decode loop's, before the search)."""
    forward_tokens: int = 0
    """Token positions those forwards processed (each costs one pass through the weights)."""
    attended_keys: int = 0
    """Query-key pairs of attention over those forwards: ``n`` new tokens after ``L`` cached
    ones attend ``n L + n (n + 1) / 2`` keys. With ``forward_tokens`` the deterministic
    measure of the search's compute, blind to how busy the machine is."""
    reprefill_attended_keys: int = 0
    """The share of ``attended_keys`` spent re-prefilling evicted tokens."""
    search_seconds: float = 0.0
    """Wall seconds of the whole search (noisy on a shared machine: read with the load)."""
    search_cpu_seconds: float = 0.0
    """CPU seconds of the searching thread (``time.thread_time``): what the search itself
    used, much less sensitive to other processes than wall time (with one torch thread all
    of its compute runs on this thread)."""
    reprefill_seconds: float = 0.0
    """Wall seconds inside the forwards that re-prefilled evicted tokens."""
    reprefill_cpu_seconds: float = 0.0
    """Thread CPU seconds inside those forwards."""


STRATEGIES = ("best", "bfs")
"""``best``: best-first over the whole frontier by path value; ``bfs``: level by level,
the ``beam`` best nodes of each level expanded (Tree of Thoughts' BFS)."""


def _slice(layers: Sequence[LayerKV], start: int, stop: int | None = None) -> list[LayerKV]:
    return [(k[:, :, start:stop].clone(), v[:, :, start:stop].clone()) for k, v in layers]


def attended_keys(new: int, cached: int) -> int:
    """Query-key pairs of one causal forward of ``new`` tokens after ``cached`` ones."""
    return new * cached + new * (new + 1) // 2


def parameter_count(model: Any) -> int:
    """Distinct parameters of ``model`` (tied embeddings once): the weights every token
    position passes through."""
    return sum(int(p.numel()) for p in model.parameters())


def search_flops(config: Any, params: int, tokens: int, keys: int) -> int:
    """Forward FLOPs of ``tokens`` positions attending ``keys`` query-key pairs in all:
    2 x parameters per position (one multiply-add per weight) plus, per pair, layer and
    query head, 2 x head_dim for the score and 2 x head_dim for the weighted value. The
    usual estimate (SCD's TTFT model uses the first term); counted, not timed."""
    heads = int(config.num_attention_heads)
    head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // heads)
    return 2 * params * tokens + 4 * int(config.num_hidden_layers) * heads * head_dim * keys


class TreeSearch:
    """One best-first tree-of-thoughts search from a prefilled prompt (batch of one)."""

    def __init__(
        self,
        model: Any,
        eos: set[int],
        branch: int = 2,
        segment: int = 4,
        expansions: int = 4,
        budget: int | None = None,
        max_tokens: int = 32,
        segment_end: set[int] | frozenset[int] = frozenset(),
        strategy: str = "best",
        beam: int = 2,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, not {strategy!r}")
        self.strategy, self.beam = strategy, max(1, beam)
        self.model, self.eos = model, eos
        self.branch, self.segment = max(1, branch), max(1, segment)
        self.segment_end = frozenset(segment_end)
        self.expansions, self.budget, self.max_tokens = max(1, expansions), budget, max_tokens
        self.stats = SearchStats()
        self.nodes: list[Node] = []

    # -- memory ------------------------------------------------------------------------
    def _resident(self) -> tuple[int, int]:
        total = sum(n.kept for n in self.nodes)
        return total, total - self.nodes[0].kept

    def _note_peak(self) -> None:
        total, tree = self._resident()
        self.stats.peak_tokens = max(self.stats.peak_tokens, total)
        self.stats.peak_tree_tokens = max(self.stats.peak_tree_tokens, tree)

    def evict(self, active: Node) -> None:
        """Keep the active branch whole; give ``budget`` tokens to the rest by value."""
        if self.budget is None:
            return
        protected = {id(n) for n in active.path()}
        others = [n for n in self.nodes if id(n) not in protected and n.kept > 0]
        left = self.budget
        for node in sorted(others, key=lambda n: n.value(), reverse=True):
            keep = min(node.kept, left)
            left -= keep
            if keep < node.kept:
                self.stats.evicted_tokens += node.kept - keep
                self.stats.evictions += 1
                node.kv = _slice(node.kv, 0, keep) if keep and node.kv is not None else None

    # -- search ------------------------------------------------------------------------
    def _forward(self, ids: list[int], cache: Any, device: Any, reprefill: bool = False) -> Any:
        """One model forward of ``ids`` after ``cache``, counted (passes, positions, attended
        keys) and, for a re-prefill, timed: the cost of eviction as work and as seconds."""
        keys = attended_keys(len(ids), int(cache.get_seq_length()))
        self.stats.forward_passes += 1
        self.stats.forward_tokens += len(ids)
        self.stats.attended_keys += keys
        if not reprefill:
            return step(self.model, torch.tensor([ids], device=device), cache)
        wall, cpu = time.perf_counter(), time.thread_time()
        out = step(self.model, torch.tensor([ids], device=device), cache)
        if out.logits.is_cuda:  # kernels are asynchronous: time their completion
            torch.cuda.synchronize(out.logits.device)
        self.stats.reprefill_seconds += time.perf_counter() - wall
        self.stats.reprefill_cpu_seconds += time.thread_time() - cpu
        self.stats.reprefill_attended_keys += keys
        return out

    def _path_cache(self, node: Node) -> Any:
        """The full context's cache for ``node``, re-prefilling evicted tokens (kept after)."""
        cache = make_cache([])
        for n in node.path():
            if n.kv is not None:
                for i, (k, v) in enumerate(n.kv):
                    cache.update(k.clone(), v.clone(), i)
            missing = n.tokens[n.kept :]
            if missing:
                before = cache.get_seq_length()
                device = n.next_logits.device if n.next_logits is not None else "cpu"
                self._forward(missing, cache, device, reprefill=True)
                self.stats.reprefill_tokens += len(missing)
                self.stats.reprefills += 1
                n.kv = _slice(layers_of(cache), before - n.kept)
        return cache

    def _child(self, parent_cache: Any, first: int, first_lp: float, depth: int) -> Node:
        cache = make_cache(layers_of(parent_cache))
        start = cache.get_seq_length()
        tokens, logprob = [first], first_lp
        device = next(self.model.parameters()).device
        logits: torch.Tensor | None = None
        while True:
            done = tokens[-1] in self.eos or depth + len(tokens) >= self.max_tokens
            if done:
                break
            out = self._forward([tokens[-1]], cache, device)
            logits = out.logits[0, -1].float()
            if len(tokens) >= self.segment or tokens[-1] in self.segment_end:
                break
            lp = torch.log_softmax(logits, -1)
            token = int(torch.argmax(lp))
            tokens.append(token)
            logprob += float(lp[token])
            logits = None
        kv = _slice(layers_of(cache), start) if cache.get_seq_length() > start else None
        node = Node(tokens, logprob, None, kv, logits, finished=logits is None)
        return node

    def expand(self, node: Node) -> None:
        """Branch ``node`` on its top tokens; each child is a greedy thought."""
        self.evict(node)
        cache = self._path_cache(node)
        assert node.next_logits is not None
        lp = torch.log_softmax(node.next_logits.float(), -1)
        top = torch.topk(lp, self.branch)
        depth = len(node.answer())
        for value, token in zip(top.values.tolist(), top.indices.tolist(), strict=True):
            child = self._child(cache, int(token), float(value), depth)
            child.parent = node
            node.children.append(child)
            self.nodes.append(child)
            self.stats.total_tokens += len(child.tokens)
        node.expanded = True
        self.stats.expansions += 1
        self.stats.nodes = len(self.nodes)
        self._note_peak()

    def _bfs(self, root: Node) -> None:
        """Tree-of-Thoughts BFS: expand the ``beam`` best open nodes of each level, then move
        to their children. Every level switches between branches, so with a budget the
        search keeps returning to evicted nodes (the revisits lazy re-prefill serves)."""
        level = [root]
        while level and self.stats.expansions < self.expansions:
            for node in sorted(level, key=lambda n: n.value(), reverse=True)[: self.beam]:
                if self.stats.expansions >= self.expansions:
                    break
                self.expand(node)
            children = [c for n in level if n.expanded for c in n.children]
            level = [c for c in children if not c.finished]

    def run(self, prompt_kv: list[LayerKV], first_logits: torch.Tensor) -> Node:
        """Search from the prompt's cache; return the answering leaf (timed: the stats'
        ``search_seconds`` / ``search_cpu_seconds``)."""
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return self._run(prompt_kv, first_logits)
        finally:
            self.stats.search_seconds = time.perf_counter() - wall
            self.stats.search_cpu_seconds = time.thread_time() - cpu

    def _run(self, prompt_kv: list[LayerKV], first_logits: torch.Tensor) -> Node:
        root = Node([], 0.0, None, prompt_kv, first_logits.float())
        self.nodes = [root]
        self.stats.total_tokens = root.kept
        self._note_peak()
        if self.strategy == "bfs":
            self._bfs(root)
        while self.strategy == "best":
            frontier = [n for n in self.nodes if not n.expanded and n is not root or n is root
                        and not root.expanded]
            best = max(frontier, key=lambda n: n.value()) if frontier else root
            if best.finished or self.stats.expansions >= self.expansions:
                break
            self.expand(best)
        leaf = max((n for n in self.nodes if not n.expanded), key=lambda n: n.value())
        while not leaf.finished and self.stats.expansions < self.expansions + self.max_tokens:
            # out of expansions: finish the best leaf greedily (one branch per level)
            self.branch = 1
            self.expand(leaf)
            leaf = leaf.children[0]
        return leaf


def search_tokens(
    model: Any,
    eos: set[int],
    prompt_kv: list[LayerKV],
    first_logits: torch.Tensor,
    **options: Any,
) -> tuple[list[int], SearchStats]:
    """Run one search and return the answer's tokens and the memory statistics."""
    search = TreeSearch(model, eos, **options)
    leaf = search.run([(k.clone(), v.clone()) for k, v in prompt_kv], first_logits)
    return leaf.answer(), search.stats


def cost_metadata(stats: SearchStats, config: Any, params: int) -> dict[str, Any]:
    """The search's cost for the log: deterministic work (forwards, positions, attended
    keys, FLOPs: the whole search's and the re-prefills' share) beside measured seconds
    (wall and thread CPU), so the time eviction costs can be read on a busy machine too."""
    return {
        "forward_passes": stats.forward_passes,
        "forward_tokens": stats.forward_tokens,
        "attended_keys": stats.attended_keys,
        "reprefill_attended_keys": stats.reprefill_attended_keys,
        "search_flops": search_flops(config, params, stats.forward_tokens,
                                     stats.attended_keys),
        "reprefill_flops": search_flops(config, params, stats.reprefill_tokens,
                                        stats.reprefill_attended_keys),
        "search_seconds": stats.search_seconds,
        "search_cpu_seconds": stats.search_cpu_seconds,
        "reprefill_seconds": stats.reprefill_seconds,
        "reprefill_cpu_seconds": stats.reprefill_cpu_seconds,
        "torch_threads": torch.get_num_threads(),
        "loadavg_1m": os.getloadavg()[0],  # the machine's load when the search ended
    }


def _cost_ratios(mine: dict[str, Any], reference: dict[str, Any]) -> dict[str, float]:
    """This search's cost over the unevicted search's on the same prompt: ``compute_ratio``
    (FLOPs, deterministic: 1 + the re-prefills' share when the answers agree),
    ``pass_ratio`` (model forwards: on a small model each forward costs about the same
    whatever its length, so this tracks time better than FLOPs do) and
    ``time_ratio`` (thread CPU seconds; the reference may have run minutes earlier in the
    process, so it carries the load's drift). The counterparts of ``kv_ratio``."""
    out = {"compute_ratio": mine["search_flops"] / reference["search_flops"]
           if reference["search_flops"] else 1.0,
           "pass_ratio": mine["forward_passes"] / reference["forward_passes"]
           if reference["forward_passes"] else 1.0}
    ref_cpu = float(reference["search_cpu_seconds"])
    if ref_cpu > 0:  # a clock too coarse to see the reference leaves the ratio out
        out["time_ratio"] = mine["search_cpu_seconds"] / ref_cpu
    out["reference_search_cpu_seconds"] = ref_cpu
    out["reference_search_seconds"] = float(reference["search_seconds"])
    return out


def _eos_of(lm: Any) -> set[int]:
    ids = {int(lm.tokenizer.eos_token_id)} if lm.tokenizer.eos_token_id is not None else set()
    configured = getattr(lm.model.generation_config, "eos_token_id", None)
    if isinstance(configured, int):
        ids.add(configured)
    elif configured:
        ids.update(int(i) for i in configured)
    return ids


_LINE_ENDS: dict[int, frozenset[int]] = {}
_PARAMS: dict[int, int] = {}
_REFERENCES: dict[tuple[Any, ...], tuple[list[int], SearchStats]] = {}
"""Unbudgeted searches by (model, prompt ids, options): the search is deterministic, so the
cells of a budget sweep that share items (same process) run each reference once."""


def line_end_tokens(tokenizer: Any) -> frozenset[int]:
    """Token ids whose text contains a newline: where a one-line thought ends."""
    key = id(tokenizer)
    if key not in _LINE_ENDS:
        size = len(tokenizer)
        texts = tokenizer.batch_decode([[i] for i in range(size)])
        _LINE_ENDS[key] = frozenset(i for i, t in enumerate(texts) if "\n" in t)
    return _LINE_ENDS[key]


@whitebox_method("arborkv")
class ArborKV(Method):
    """``-M method=arborkv``: budgeted tree-of-thoughts decoding (see module doc).

    Options: ``branch``, ``segment`` (max tokens per thought), ``thought`` (``tokens``: a
    thought is ``segment`` tokens; ``line``: it also ends at a newline, so one thought is
    one reasoning step), ``strategy`` (``best``-first or ToT ``bfs`` with ``beam`` nodes
    expanded per level), ``expansions``, ``budget`` (tokens of KV for inactive nodes;
    ``none`` = never evict), ``max_tokens`` (answer length cap; the loop's own cap also
    applies), ``reference`` (rerun without eviction and report agreement; memoised per
    prompt, and skipped for ``budget=none``, which is its own reference). Decodes greedily
    inside the tree whatever the loop's sampling.
    """

    name = "arborkv"

    def __init__(
        self,
        branch: int = 2,
        segment: int = 4,
        expansions: int = 4,
        budget: int | str | None = None,
        max_tokens: int = 32,
        reference: bool = True,
        thought: str = "tokens",
        strategy: str = "best",
        beam: int = 2,
    ) -> None:
        if thought not in ("tokens", "line"):
            raise ValueError(f"thought must be 'tokens' or 'line', not {thought!r}")
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, not {strategy!r}")
        self.options: dict[str, Any] = {
            "branch": int(branch), "segment": int(segment), "expansions": int(expansions),
            "budget": None if budget in (None, "none", "inf", "") else int(budget),
            "max_tokens": int(max_tokens), "strategy": strategy, "beam": int(beam),
        }
        self.thought = thought
        self.reference = flag(reference)

    def _reference(self, lm: Any, eos: set[int], row: list[LayerKV], logits: torch.Tensor,
                   prompt: tuple[int, ...], ends: frozenset[int]
                   ) -> tuple[list[int], SearchStats]:
        unbounded = {**self.options, "budget": None}
        key = (id(lm.model), prompt, tuple(sorted(unbounded.items())), self.thought)
        if key not in _REFERENCES:
            if len(_REFERENCES) > 4096:
                _REFERENCES.clear()
            _REFERENCES[key] = search_tokens(lm.model, eos, row, logits, segment_end=ends,
                                             **unbounded)
        return _REFERENCES[key]

    def _params(self, model: Any) -> int:
        key = id(model)
        if key not in _PARAMS:
            _PARAMS[key] = parameter_count(model)
        return _PARAMS[key]

    def after_prefill(self, lm: Any, view: StepView, states: Sequence[RequestState]) -> Any:
        """Search every row from its unpadded prompt cache; remember the answers."""
        layers = layers_of(view.cache)
        mask = view.attention_mask
        eos = _eos_of(lm)
        ends = line_end_tokens(lm.tokenizer) if self.thought == "line" else frozenset()
        per_token = full_kv_bytes(lm.model.config, 1)
        params = self._params(lm.model)
        for state in states:
            b = state.index
            start = int(mask.shape[1] - mask[b].sum())
            row = [(k[b : b + 1, :, start:], v[b : b + 1, :, start:]) for k, v in layers]
            logits = view.logits[b].float()
            prompt = tuple(view.input_ids[b, start:].tolist())
            if self.options["budget"] is None and self.reference:
                tokens, stats = self._reference(lm, eos, row, logits, prompt, ends)
            else:
                tokens, stats = search_tokens(lm.model, eos, row, logits, segment_end=ends,
                                              **self.options)
            run = KVRun(
                tokens, "", int(mask.shape[1] - start),
                stats.peak_tokens * per_token, stats.total_tokens * per_token,
            )
            run.extra = {
                "kv_tree_bytes": stats.peak_tree_tokens * per_token,
                "kv_tree_bytes_full": (stats.total_tokens - run.prompt_tokens) * per_token,
                "reprefill_tokens": stats.reprefill_tokens,
                "reprefills": stats.reprefills,
                "evicted_tokens": stats.evicted_tokens,
                "evictions": stats.evictions,
                "expansions": stats.expansions,
                "nodes": stats.nodes,
                "budget": -1 if self.options["budget"] is None else self.options["budget"],
                **cost_metadata(stats, lm.model.config, params),
            }
            if self.reference:
                ref, ref_stats = self._reference(lm, eos, row, logits, prompt, ends)
                run.exact = ref == tokens
                run.agreement = prefix_agreement(tokens, ref)
                run.kv_bytes_full = ref_stats.peak_tokens * per_token
                run.extra["kv_tree_bytes_full"] = ref_stats.peak_tree_tokens * per_token
                run.extra.update(_cost_ratios(run.extra, cost_metadata(
                    ref_stats, lm.model.config, params)))
            state.data["arbor"] = tokens
            state.data["metadata"] = {"kv": run.metadata()}
        return None

    def process_logits(
        self, lm: Any, logits: Any, view: StepView, states: Sequence[RequestState]
    ) -> Any:
        """Emit the searched answer: one-hot logits on its next token (EOS once it ends)."""
        answers = [state.data.get("arbor", []) for state in states]
        done = [len(state.tokens) for state in states]
        return force_logits(logits, answers, done, int(lm.tokenizer.eos_token_id))


def budget_sweep(
    lm: Any, prompt: str, budgets: Sequence[int | None], **options: Any
) -> list[dict[str, Any]]:
    """Peak tree KV, re-prefill work and answer agreement for each budget on one prompt
    (the first budget is the reference; pass ``None`` first for "no eviction")."""
    ids = lm.encode(prompt)
    from methods.kv.cache import prefill

    logits, cache = prefill(lm.model, ids)
    layers = layers_of(cache)
    per_token = full_kv_bytes(lm.model.config, 1)
    rows: list[dict[str, Any]] = []
    reference: list[int] | None = None
    for budget in budgets:
        tokens, stats = search_tokens(lm.model, _eos_of(lm), layers, logits,
                                      budget=budget, **options)
        reference = tokens if reference is None else reference
        rows.append({
            "budget": "none" if budget is None else budget,
            "peak_kv_bytes": stats.peak_tokens * per_token,
            "peak_tree_kv_bytes": stats.peak_tree_tokens * per_token,
            "reprefill_tokens": stats.reprefill_tokens,
            "evicted_tokens": stats.evicted_tokens,
            "reprefill_cpu_seconds": stats.reprefill_cpu_seconds,
            "search_cpu_seconds": stats.search_cpu_seconds,
            "agreement": prefix_agreement(tokens, reference),
            "answer": lm.tokenizer.decode(tokens),
        })
    return rows


if __name__ == "__main__":  # python -m methods.arborkv.arbor: budget sweep on one short prompt
    import json
    import sys

    from harness.models.whitebox import WhiteBoxLM

    torch.set_num_threads(1)
    model = WhiteBoxLM.load()
    question = sys.argv[1] if len(sys.argv) > 1 else "List three uses of a brick, one per line."
    chat = model.chat_prompt([{"role": "user", "content": question}])
    for r in budget_sweep(model, chat, [None, 32, 8, 0], branch=3, segment=6, expansions=6,
                          max_tokens=24):
        print(json.dumps(r))
