"""Fine-tune a pretrained tiny LM on the needle task, then score recall on held-out needles:
the procedural-pretraining paper's needle-in-a-haystack number is a diagnostic *after
training on the task*, not a zero-shot score.

Why: scored zero-shot, a 200-step byte LM recalls no needle in any arm (0 of 64 with or
without procedural data; ``methods/studies/procedural_pretraining/README.md``), so the
zero-shot probe sits at a floor and cannot tell the arms apart. Jiang et al. (2026) report
needle recall 10% -> 98% for small models trained on the task after (or without) Dyck
pretraining: what the procedural data buys is how fast the model *learns* recall. So each
product gets the same small fine-tuning budget on needle items — same steps, same items,
same order, same learning rate, seeded by the replicate's seed — and is then scored on
needles it never saw (``harness/needle``, item stream seed 0). Everything that differs
between two arms of one replicate is the pretrained weights.

The fine-tuning data: ``items`` needle items of the ``harness/needle`` task (its samples,
read through the task: a method imports no environment) from the item stream
``TRAIN_STREAM + seed``, leaving out every item whose key is one of the scored items'
(the first 256 of stream 0, the test's, and of :data:`PILOT_STREAM`, the
pilot's: :func:`held_out_keys`), in exactly the evaluated format (the prompt's bytes with no
``<|bos|>``, as the ``whitebox/`` provider feeds them), loss on the key's digits only
(:func:`methods.recipes.tinylm.answer_batches`); fresh AdamW, linear warmup over a tenth of
the steps, cosine decay to 10%; one CPU thread and torch's deterministic algorithms, so a
(product, seed, budget) gives bit-identical weights.

The budget is chosen by :func:`pilot`: one fine-tuning run per arm with recall on
``PILOT_STREAM`` items (not the test items) scored at checkpoints, so the chosen step count
leaves neither arm at 0 or 1. Run through the recipe's ``finetune_steps`` option::

    harness recipes build procedural-pretraining -o kind=dyck -o fraction=0.003 \
        -o finetune_steps=150 --seed 1
    harness method procedural-needle-pilot --steps 50,100,150,200 --out pilot.json
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HELD_OUT_N", "LOSSES", "NEEDLE_TASK", "PILOT_STREAM", "RECIPE_LOSS", "TRAIN_STREAM",
           "Needle", "digits_in_place", "finetune", "held_out_keys", "load_product", "main",
           "needle_rows", "needles", "pilot", "recall", "train_items"]

TRAIN_STREAM = 10_000
"""Fine-tuning items of seed ``s`` come from item stream ``TRAIN_STREAM + s``."""
PILOT_STREAM = 9_999
"""The items the pilot scores to choose the budget (neither the test's nor training's)."""
N_FILLER, DIGITS = 8, 4
"""The item shape of ``harness/needle``'s defaults (about 175-190 bytes an item)."""
NEEDLE_TASK = "harness/needle"


@dataclass(frozen=True)
class Needle:
    """One needle item: the prompt (filler with the needle, newline, cue) and its key."""

    prompt: str
    target: str


def needles(n: int, stream: int) -> list[Needle]:
    """The first ``n`` items of ``harness/needle``'s item stream ``stream`` (its samples:
    same stream, same items, as the task scores them)."""
    from harness.factorial.cells import load_task

    task = load_task(NEEDLE_TASK, {"n": n, "seed": stream, "n_filler": N_FILLER,
                                   "digits": DIGITS})
    return [Needle(str(s.input), str(s.target)) for s in task.dataset]


def digits_in_place(completion: str, key: str) -> float:
    """Share of the key's digits the completion has at the same position, leading white
    space ignored (``harness/needle``'s ``digits`` score)."""
    text = completion.lstrip()
    return sum(a == b for a, b in zip(text, key, strict=False)) / len(key) if key else 0.0


HELD_OUT_N = 256
"""The first ``HELD_OUT_N`` items of the test stream (0) and the pilot's stream are scored
items: no fine-tuning item carries one of their keys."""


@functools.cache
def held_out_keys() -> frozenset[str]:
    """Keys of the scored items. The item space is small (10^4 keys x 9 depths x a few
    filler phases), so a seeded training stream of 2,048 items repeats a test item now and
    then; leaving out every item with a scored key makes the test needles unseen."""
    return frozenset(i.target for s in (0, PILOT_STREAM) for i in needles(HELD_OUT_N, s))


def train_items(n: int, seed: int) -> list[Needle]:
    """The ``n`` fine-tuning items of replicate ``seed``: the item stream
    ``TRAIN_STREAM + seed`` without the items whose key is held out."""
    held = held_out_keys()
    draw = n + n // 8 + 64  # about 2.5% of a stream's keys are held out
    while True:
        kept = [i for i in needles(draw, TRAIN_STREAM + seed) if i.target not in held]
        if len(kept) >= n:
            return kept[:n]
        draw *= 2


LOSSES = ("answer", "text")
"""Where the fine-tune's loss sits: on the key's digits only (``answer``), or on every byte
of the item after the first (``text``: the repeating filler is itself a copy-from-context
signal, about 45x more targets a row than the 4 digits)."""


RECIPE_LOSS = "answer"
"""The loss the recipe's ``finetune_steps`` option trains with: the better of the two pilots
(seed 0, 64 pilot items, both arms). On the key's digits only, 300 steps at lr 1e-3 left 0
exact recalls but the digits in place rose to 0.16 / 0.16 (chance 0.10); on every byte, 600
steps at lr 3e-3 left the digits at chance (0.10-0.11): the filler's own copy signal is
learnt, the key's is not."""


def needle_rows(items: Sequence[Needle],
                loss: str = "answer") -> list[tuple[list[int], list[int]]]:
    """(prompt, answer) token rows for :func:`methods.recipes.tinylm.answer_batches` (the
    byte LM's token ``b`` is byte ``b``): the prompt and the key for ``answer``; the first
    byte and all the rest for ``text``."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)}")
    rows = []
    for i in items:
        prompt, key = list(i.prompt.encode()), list(i.target.encode())
        rows.append((prompt, key) if loss == "answer" else (prompt[:1], prompt[1:] + key))
    return rows


def finetune(model: Any, rows: list[tuple[list[int], list[int]]], steps: int, lr: float,
             batch: int, seed: int, threads: int = 1,
             log: Callable[..., None] | None = None,
             checkpoints: Sequence[int] = (),
             at_checkpoint: Callable[[int, Any], None] | None = None) -> Any:
    """Train ``model`` (a plain tiny Llama, in place) for ``steps`` AdamW steps on ``rows``,
    loss on the answers only; returns it in eval mode. Same arguments, same weights.
    ``at_checkpoint(step, model)`` is called (model in eval mode) after each step of
    ``checkpoints`` that is within ``steps``: the pilot's curve comes from the same run, so a
    checkpoint of a longer schedule is not mistaken for a shorter run."""
    import torch

    from methods.recipes import tinylm

    cfg = tinylm.TinyConfig(steps=max(steps, 1), lr=lr, warmup=max(1, steps // 10),
                            batch=batch, threads=threads)
    stops = sorted({c for c in checkpoints if 0 < c < steps} | {steps})
    with tinylm.deterministic(threads):
        gen = torch.Generator().manual_seed(seed)
        opt = tinylm.make_optimizer(model, cfg)
        batches = tinylm.answer_batches(rows, batch, gen)
        done = 0
        for stop in stops:
            tinylm.train_steps(model, opt, range(done + 1, stop + 1), batches,
                               tinylm.cosine_lr(cfg), 0, log, phase="finetune")
            done = stop
            if at_checkpoint is not None and stop in checkpoints:
                at_checkpoint(stop, model.eval())
    model.eval()
    return model


def recall(model: Any, items: Sequence[Needle]) -> dict[str, float]:
    """Greedy recall of ``items``: the share whose completion starts with the whole key
    (``accuracy``) and the mean share of key digits in place (``digits``), as
    ``harness/needle`` scores them (the pilot's quick scorer; the study scores through
    Inspect)."""
    import torch

    exact = digits = 0.0
    with torch.no_grad():
        for item in items:
            ids = torch.tensor([list(item.prompt.encode())])
            out = []
            for _ in range(len(item.target)):
                nxt = int(model(input_ids=ids, use_cache=False).logits[0, -1].argmax())
                out.append(nxt)
                ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
            text = bytes(b for b in out if b < 256).decode("utf-8", "replace")
            d = digits_in_place(text, item.target)
            exact += float(d == 1.0)
            digits += d
    n = max(len(items), 1)
    return {"accuracy": exact / n, "digits": digits / n}


def load_product(folder: Path) -> Any:
    """A product folder as a trainable plain Llama (its saved weights, nothing shared)."""
    from transformers import LlamaForCausalLM

    return LlamaForCausalLM.from_pretrained(str(folder), local_files_only=True)


def pilot(bases: dict[str, Path], checkpoints: Sequence[int], *, items: int, lr: float,
          batch: int, seed: int, n_eval: int = 64, loss: str = "answer") -> dict[str, Any]:
    """Recall on :data:`PILOT_STREAM` items at each checkpoint of one fine-tuning run per
    base product (arm label -> product folder): the curve a budget is chosen from."""
    rows = needle_rows(train_items(items, seed), loss)
    held = needles(n_eval, PILOT_STREAM)
    curves: dict[str, list[dict[str, Any]]] = {}
    for arm, folder in bases.items():
        model = load_product(folder)
        curve = [{"step": 0, **recall(model.eval(), held)}]

        def score(step: int, trained: Any, curve: list[dict[str, Any]] = curve) -> None:
            curve.append({"step": step, **recall(trained, held)})

        finetune(model, rows, max(checkpoints), lr, batch, seed, checkpoints=checkpoints,
                 at_checkpoint=score)
        curves[arm] = curve
    return {"items": items, "lr": lr, "batch": batch, "seed": seed, "n_eval": n_eval,
            "loss": loss,
            "schedule_steps": max(checkpoints), "eval_stream": PILOT_STREAM, "curves": curves}


def main(argv: Sequence[str] | None = None) -> int:
    """``harness method procedural-needle-pilot``: build (or find) the pretrained products
    of the arms and write the pilot's recall curves as JSON."""
    from harness.plugins.recipe import build_product

    p = argparse.ArgumentParser(prog="harness method procedural-needle-pilot",
                                description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--arms", default="none:dyck:0.0,dyck-0.3%:dyck:0.003",
                   help="label:kind:fraction,... (the study's arms)")
    p.add_argument("--steps", default="50,100,150,200", help="checkpoints (the cosine "
                   "schedule runs to the last, so an early checkpoint is not the same as a "
                   "shorter run)")
    p.add_argument("--items", type=int, default=2048)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--loss", choices=LOSSES, default="answer")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    bases = {}
    for arm in args.arms.split(","):
        label, kind, fraction = arm.split(":")
        bases[label] = build_product("procedural-pretraining",
                                     {"kind": kind, "fraction": float(fraction)}, args.seed)
    result = pilot(bases, [int(s) for s in args.steps.split(",")], items=args.items,
                   lr=args.lr, batch=args.batch, seed=args.seed, loss=args.loss)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({arm: [(c["step"], round(c["accuracy"], 3)) for c in curve]
                      for arm, curve in result["curves"].items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
