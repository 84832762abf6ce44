"""``scout-sft-ladder``: a ladder model (SmolLM2-135M) fine-tuned on scout dialogues.

SCOUT's product is an LLM taught by its scouts' trajectories; ``scout-sft`` teaches a
117k-parameter byte model because a SmolLM2 forward pass over a ~300-token move prompt
costs seconds of CPU. This recipe teaches the ladder model itself, at a cost that fits a
CPU session, by training only its top ``top_layers`` decoder layers and final norm
(embeddings and the tied output head stay frozen) and by never recomputing what the
frozen part gives:

1. every turn is rendered exactly as ``whitebox/`` renders it
   (:func:`methods.scout.data.window_prompts`), so the model learns the prompt it is
   asked at test;
2. turns that share a system prompt share a long token prefix (the rules and the tool
   schema); the frozen bottom layers see that prefix once per group, and each turn only
   its own suffix (board and answer) on top of the prefix's cached keys and values
   (:func:`top_inputs`). Their output, the input of the first trained layer, is kept;
3. each training step runs the trained layers on those kept inputs
   (:class:`TopStack`) and computes the output head only at the answer positions:
   cross-entropy on the move argument, the closing tag and the end token.

The split is exact, not an approximation: the bottom layers are frozen and causal, so
their output at any position depends only on the tokens up to it;
``tests/methods/scout/test_ladder_sft.py`` checks that the top stack's logits equal the
full model's. The product is a ``save_pretrained`` folder that ``whitebox/`` loads with
``-M model_path=`` (or ``-M recipe=scout-sft-ladder``); the recipe and its defaults are
registered in :mod:`methods.scout.recipe`, which imports this module only to build.

    harness recipes build scout-sft-ladder --seed 0
    inspect eval harness/scout -T split=test --model whitebox/smollm2-135m \\
        -M recipe=scout-sft-ladder
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch.nn import functional as F  # noqa: N812

from harness.plugins.recipe import TrainLog
from methods.scout.data import ScoutData, scout_task, token_rows, window_prompts
from methods.scout.qlearning import QConfig

__all__ = ["TopStack", "answer_targets", "build", "prefix_groups", "top_inputs",
           "train_top"]

Row = tuple[list[int], list[int]]


def load_base(name: str) -> tuple[Any, Any]:
    """The ladder model ``name`` in float32 and its tokenizer, loaded as ``whitebox/``
    loads it (:meth:`harness.models.whitebox.WhiteBoxLM.load`; SmolLM2's dequantised
    folder, or the ladder rung's)."""
    from harness.models.weights import SMOLLM2_NAMES
    from harness.models.whitebox import WhiteBoxLM, ladder_hf_copy

    lm = WhiteBoxLM.load(None if name in SMOLLM2_NAMES else ladder_hf_copy(name),
                         dtype="float32")
    return lm.model, lm.tokenizer


def prefix_groups(rows: Sequence[Row]) -> list[tuple[int, list[int]]]:
    """``(prefix length, row indices)``: rows grouped by their first prompt token run.

    Rows join the group whose shared prefix with them is longest (at least half their
    prompt; else they start a group). The prefix of a group is the longest common prefix
    of its rows' prompts, at most one token short of the shortest, so every row keeps a
    suffix of its own.
    """
    groups: list[tuple[list[int], list[int]]] = []
    for i, (prompt, _) in enumerate(rows):
        best, best_len = -1, 0
        for g, (prefix, _) in enumerate(groups):
            n = _common(prefix, prompt)
            if n > best_len:
                best, best_len = g, n
        if best >= 0 and best_len * 2 >= len(prompt):
            prefix, members = groups[best]
            groups[best] = (prefix[:best_len], [*members, i])
        else:
            groups.append((list(prompt), [i]))
    out = []
    for prefix, members in groups:
        shortest = min(len(rows[i][0]) for i in members)
        out.append((min(len(prefix), shortest - 1), members))
    return out


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _sequence(row: Row) -> list[int]:
    """The input tokens of a row: the prompt and the answer less its last token."""
    prompt, answer = row
    return [*prompt, *answer[:-1]]


@torch.no_grad()
def top_inputs(model: Any, rows: Sequence[Row], split: int) -> list[torch.Tensor]:
    """Per row, the input of decoder layer ``split`` at every input position, ``[T, D]``.

    Each prefix group's prefix goes through the model once (its cache kept); each row then
    runs only its suffix on that cache, which is cropped back to the prefix after it.
    """
    model.eval()
    # transformers 5 names the cache argument ``cache``; 4.x ``past_key_values``
    cache_arg = "cache" if "cache" in inspect.signature(model.forward).parameters \
        else "past_key_values"
    out: list[torch.Tensor | None] = [None] * len(rows)
    for plen, members in prefix_groups(rows):
        prefix = torch.tensor([rows[members[0]][0][:plen]])
        first = model(input_ids=prefix, use_cache=True, output_hidden_states=True)
        cache, head = first.past_key_values, first.hidden_states[split][0]
        for i in members:
            suffix = torch.tensor([_sequence(rows[i])[plen:]])
            step = model(input_ids=suffix, use_cache=True, output_hidden_states=True,
                         **{cache_arg: cache})
            out[i] = torch.cat([head, step.hidden_states[split][0]]).clone()
            cache.crop(-suffix.shape[1])  # negative: drop this row's tokens, keep the prefix
    return [t for t in out if t is not None]


def answer_targets(rows: Sequence[Row]) -> list[tuple[list[int], list[int]]]:
    """Per row, the input positions whose next token is an answer token, and those tokens."""
    out = []
    for prompt, answer in rows:
        start = len(prompt) - 1
        out.append((list(range(start, start + len(answer))), list(answer)))
    return out


class TopStack:
    """The trained part of a Llama-style model: decoder layers ``split:``, norm, head."""

    def __init__(self, model: Any, split: int) -> None:
        inner = model.model
        self.layers = list(inner.layers)[split:]
        self.norm = inner.norm
        self.rotary = inner.rotary_emb
        self.head = model.lm_head

    def parameters(self) -> list[torch.nn.Parameter]:
        """The trained parameters: the top layers' and the final norm's."""
        params = [p for layer in self.layers for p in layer.parameters()]
        return params + list(self.norm.parameters())

    def logits_at(self, hidden: list[torch.Tensor],
                  positions: list[list[int]]) -> list[torch.Tensor]:
        """The output logits at ``positions`` of each kept input (right-padded batch)."""
        width = max(h.shape[0] for h in hidden)
        batch = torch.zeros(len(hidden), width, hidden[0].shape[-1], dtype=hidden[0].dtype)
        for b, h in enumerate(hidden):
            batch[b, :h.shape[0]] = h
        position_ids = torch.arange(width).unsqueeze(0).expand(len(hidden), -1)
        rotary = self.rotary(batch, position_ids)
        mask = torch.full((width, width), torch.finfo(batch.dtype).min).triu(1)
        mask = mask.view(1, 1, width, width).expand(len(hidden), 1, -1, -1)
        h = batch
        for layer in self.layers:
            result = layer(h, attention_mask=mask, position_ids=position_ids,
                           position_embeddings=rotary)
            h = result[0] if isinstance(result, tuple) else result
        h = self.norm(h)
        return [self.head(h[b, pos]) for b, pos in enumerate(positions)]


def train_top(model: Any, hidden: list[torch.Tensor], rows: Sequence[Row], split: int,
              options: dict[str, Any], seed: int, log: TrainLog | None) -> list[float]:
    """AdamW on the top stack, batches of turns drawn with replacement (seeded); losses."""
    model.requires_grad_(False)
    top = TopStack(model, split)
    params = top.parameters()
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.AdamW(params, lr=float(options["lr"]), betas=(0.9, 0.95),
                            weight_decay=0.0)
    targets = answer_targets(rows)
    gen = torch.Generator().manual_seed(seed)
    steps, size = int(options["steps"]), int(options["batch"])
    losses = []
    for layer in top.layers:
        layer.train()
    for step in range(1, steps + 1):
        picks = torch.randint(0, len(rows), (size,), generator=gen).tolist()
        logits = top.logits_at([hidden[i] for i in picks], [targets[i][0] for i in picks])
        gold = torch.tensor([t for i in picks for t in targets[i][1]])
        loss = F.cross_entropy(torch.cat(logits), gold)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        losses.append(float(loss.item()))
        if log is not None:
            log.step(step=step, loss=losses[-1], tokens=int(gold.numel()), flops=0,
                     lr=float(options["lr"]))
    model.eval()
    model.requires_grad_(False)
    return losses


def _pick(rows: list[Row], limit: int, seed: int) -> list[Row]:
    """At most ``limit`` rows, a seeded draw without replacement (in their order)."""
    if len(rows) <= limit:
        return rows
    keep = torch.randperm(len(rows), generator=torch.Generator().manual_seed(seed))[:limit]
    return [rows[i] for i in sorted(keep.tolist())]


def _scouts(options: dict[str, Any], seed: int) -> ScoutData:
    qcfg = QConfig(episodes=int(options["episodes"]), max_steps=int(options["max_steps"]),
                   shaping=bool(options["shaping"]))
    data = scout_task(str(options["task"]), str(options["task_args"]), qcfg, seed)
    if not data.dialogues:
        raise ValueError("the scouts solved no training instance: nothing to train on")
    return data


def build(options: dict[str, Any], out_dir: Path, seed: int, log: TrainLog) -> None:
    """Scout the training instances, textualise, SFT the ladder model's top layers; save
    the model folder and ``scout.json`` (what the scouts and the training cost)."""
    from methods.recipes.tinylm import deterministic

    data = _scouts(options, seed)
    with deterministic(int(options["threads"])):
        torch.manual_seed(seed)
        model, tokenizer = load_base(str(options["base"]))
        all_rows = token_rows(window_prompts(data, tokenizer), tokenizer,
                              int(tokenizer.eos_token_id))
        rows = _pick(all_rows, int(options["max_examples"]), seed)
        split = model.config.num_hidden_layers - int(options["top_layers"])
        if not 0 <= split < model.config.num_hidden_layers:
            raise ValueError(f"top_layers must be 1..{model.config.num_hidden_layers}")
        started = time.process_time()
        hidden = top_inputs(model, rows, split)
        cache_cpu = time.process_time() - started
        log.reset_clock()
        losses = train_top(model, hidden, rows, split, options, seed, log)
        train_cpu = time.process_time() - started - cache_cpu
        model.save_pretrained(str(out_dir), safe_serialization=True)
        tokenizer.save_pretrained(str(out_dir))
    groups = prefix_groups(rows)
    (out_dir / "scout.json").write_text(json.dumps({
        "task": options["task"], "task_args": json.loads(str(options["task_args"])),
        "base": options["base"], "scouts": data.stats, "dialogues": len(data.dialogues),
        "sft": {"turns": len(all_rows), "examples": len(rows), "steps": int(options["steps"]),
                "trained_layers": int(options["top_layers"]),
                "prefix_groups": len(groups),
                "mean_prompt_tokens": sum(len(p) for p, _ in rows) / len(rows),
                "mean_shared_prefix_tokens": sum(n * len(m) for n, m in groups) / len(rows),
                "loss_first": losses[0] if losses else None,
                "loss_last": losses[-1] if losses else None,
                "cache_cpu_s": round(cache_cpu, 3), "train_cpu_s": round(train_cpu, 3)},
    }, indent=2, sort_keys=True) + "\n")
