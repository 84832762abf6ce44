"""RL recipes: PMD-mean vs GRPO on a verifiable task, with rollout staleness as a factor.

Xu et al., "Approximation of Log-Partition Function in Policy Mirror Descent Induces
Implicit Regularization for LLM Post-Training" (arXiv 2602.05933): PMD-mean (regress the
sequence log-ratio on the leave-one-out advantage over ``tau``) is a mirror-descent step
with an adaptive mixed KL-chi^2 regulariser (:mod:`methods.rl_pmd.bandit` derives and checks
it), more stable than GRPO with stale (off-policy) rollouts, at competitive reward.

Two recipes:

* ``arith-sft``: the starting policy, a tiny byte-level Llama (:mod:`methods.recipes.
  tinylm`, ~0.8M parameters) fine-tuned by supervised steps on the train items of a suite
  task (default ``harness/esamp_arith``: "What is a + b? Reply with the number only." with
  the sum as the answer, cross-entropy on the answer bytes and the end token only), for few
  enough steps that it is right only part of the time, so RL has room. Why not SmolLM2-135M
  for the grid: one RL step of 64 responses costs it ~30 s on one CPU thread (sampling and
  the backward pass through 30 layers), so 18 runs of a few hundred steps do not fit the
  shared 2-core machine; ``base=smollm2-135m`` runs the same recipe on it.
* ``rl``: :func:`methods.rl.trainer.train` from ``base`` (``arith-sft``: that recipe's
  product with the same seed and ``sft_*`` options, built through the cache; or
  ``smollm2-135m`` / a model folder) with rewards from the task's own scorer
  (:class:`methods.rl.rollouts.TaskReward`, ``score_key`` of a dict score).

Held-out items: training items come from the task built with ``task_args`` (default seed
1); every item whose prompt also appears in the task built with ``holdout_args`` (default
``{"n": 64, "seed": 0, "family": "sum2"}``, what the study scores) is dropped, so no
scored item is trained on (``rl.json`` / ``sft.json`` record how many were dropped).

Resumable: the run's checkpoints live in ``<cache>/recipes/rl/.<hash16>.run/`` (the
product's own key), so a build killed part-way resumes from its last checkpoint when the
same product is built again; the run folder is removed once the product is complete.

    harness recipes build arith-sft --seed 0
    harness recipes build rl -o algo=pmd-mean -o staleness=2 --seed 0
    inspect eval harness/esamp_arith --model whitebox/tinylm -M recipe=rl \\
        -M recipe.algo=grpo -M recipe.staleness=4 -T n=64
    harness study run methods/studies/rl_pmd/study.yaml
"""

from __future__ import annotations

import json
import shutil
from dataclasses import fields
from pathlib import Path
from typing import Any

from harness.corpus import Corpus
from harness.plugins.recipe import TrainLog, build_product, product_key, recipe

__all__ = ["RL_DEFAULTS", "SFT_DEFAULTS", "arith_sft", "rl", "train_items"]

SFT_DEFAULTS: dict[str, Any] = {
    "task": "harness/esamp_arith",
    "task_args": '{"n": 2000, "seed": 1, "family": "sum2"}',
    "holdout_args": '{"n": 64, "seed": 0, "family": "sum2"}',
    "steps": 400, "batch": 32, "lr": 3e-3,
    "d_model": 128, "n_layers": 4, "threads": 1,
}
"""400 AdamW steps of 32 items on a 4-layer, d=128 byte Llama (~30 CPU-s): the product
answers in the right format but gets only ~19% of held-out sums right at temperature 1
(150 steps: 2%; 800 steps: 16%, measured on 64 held-out items x 8 samples), so RL has room."""

RL_DEFAULTS: dict[str, Any] = {
    "base": "arith-sft", "algo": "pmd-mean", "staleness": 0, "steps": 100,
    "prompts_per_step": 8, "k": 8, "max_new_tokens": 6, "temperature": 1.0, "lr": 1e-4,
    "tau": 0.5, "clip_eps": 0.2, "kl_coef": 0.0, "trainable": "all", "ckpt_every": 25,
    "threads": 1, "score_key": "pass_at_1",
    **{f"sft_{k}": v for k, v in SFT_DEFAULTS.items() if k != "threads"},
}
"""Defaults of ``rl``: 100 steps of 8 prompts x 8 responses at temperature 1, constant lr
1e-4 (3e-4 drove the k3 KL to the reference to 0.2-0.6 within 30 steps with no reward gain),
tau 0.5 (PMD-mean's regression targets are log-ratios of +-A/tau, at most 2 in size), no KL
term (the reference's k3 KL is still logged), full fine-tuning."""

RL_VERSION = "1"
SFT_VERSION = "1"


def _args(text: str) -> dict[str, Any]:
    from methods.recipes.tinylm import json_object

    return json_object(text)


def train_items(task: str, task_args: str, holdout_args: str,
                score_key: str | None = None) -> tuple[Any, list[Any], int]:
    """``(reward, items, dropped)``: the task's scorer as a reward, its items built with
    ``task_args`` less those whose prompt is in the task built with ``holdout_args``."""
    from harness.factorial.cells import load_task
    from methods.rl.rollouts import TaskReward, task_items

    reward = TaskReward(task, _args(task_args), score_key)
    held = {json.dumps(i.prompt, sort_keys=True)
            for i in task_items(load_task(task, _args(holdout_args)))}
    items = [i for i in reward.items if json.dumps(i.prompt, sort_keys=True) not in held]
    if not items:
        raise ValueError("every training item is also a held-out item")
    return reward, items, len(reward.items) - len(items)


@recipe("arith-sft", extra="cpu", version=SFT_VERSION, defaults=SFT_DEFAULTS,
        summary="a tiny byte LM fine-tuned on a task's answers: the RL recipes' start")
def arith_sft(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
              log: TrainLog) -> None:
    """Supervised steps on (prompt, answer) pairs of the task's train items (answer bytes
    and the end token scored), from a seeded tiny byte Llama; saved as a model folder."""
    import torch
    from transformers import AutoTokenizer

    from methods.recipes import tinylm

    _, items, dropped = train_items(str(options["task"]), str(options["task_args"]),
                                    str(options["holdout_args"]))
    d = int(options["d_model"])
    cfg = tinylm.TinyConfig(d_model=d, n_layers=int(options["n_layers"]), n_heads=8,
                            n_kv_heads=8, ffn=int(d * 2.75) // 8 * 8, seq_len=64,
                            batch=int(options["batch"]), steps=int(options["steps"]),
                            lr=float(options["lr"]), warmup=10, threads=int(options["threads"]),
                            max_positions=256)
    tinylm.save_tokenizer(out_dir, cfg.max_positions)
    tok = AutoTokenizer.from_pretrained(str(out_dir), local_files_only=True)
    rows: list[tuple[list[int], list[int]]] = []
    for item in items:
        text = tok.apply_chat_template(item.prompt, tokenize=False, add_generation_prompt=True)
        prompt = tok(text, add_special_tokens=False).input_ids
        answer = tok(item.target, add_special_tokens=False).input_ids + [tinylm.EOS]
        if len(prompt) + len(answer) > cfg.seq_len + 1:
            raise ValueError(f"item {item.id} is longer than {cfg.seq_len} tokens")
        rows.append((prompt, answer))
    with tinylm.deterministic(cfg.threads):
        model = tinylm.build_model(cfg, seed)
        opt = tinylm.make_optimizer(model, cfg)
        gen = torch.Generator().manual_seed(seed)

        next_batch = tinylm.answer_batches(rows, cfg.batch, gen, width=cfg.seq_len)

        log.reset_clock()
        tinylm.train_steps(model, opt, range(1, cfg.steps + 1), next_batch,
                           tinylm.cosine_lr(cfg), tinylm.step_flops(cfg), log.step)
        tinylm.save(tinylm.export(model, cfg), cfg, out_dir)
    (out_dir / "sft.json").write_text(json.dumps(
        {"task": options["task"], "train_items": len(rows), "dropped_as_held_out": dropped},
        indent=2) + "\n")


def _base(options: dict[str, Any], seed: int, cache_root: Path) -> Path:
    base = str(options["base"])
    if base == "arith-sft":
        sft = {k: options[f"sft_{k}"] for k in SFT_DEFAULTS if k != "threads"}
        return build_product("arith-sft", {**sft, "threads": options["threads"]}, seed,
                             cache_root=cache_root)
    from methods.cpt_rewind.cpt_rewind import resolve_base

    return resolve_base(base)


@recipe("rl", extra="cpu", version=RL_VERSION, defaults=RL_DEFAULTS,
        choices={"algo": ("grpo", "pmd-mean")},
        summary="GRPO or PMD-mean with stale rollouts on a task's verifiable reward")
def rl(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
       log: TrainLog) -> None:
    """RL from ``base`` on the task's train items (see the module docstring); the final
    checkpoint, its training log and ``rl.json`` become the product."""
    from methods.rl.rollouts import SampledGroups
    from methods.rl.trainer import LOG_FILE, STATE_FILE, RLConfig, train

    cache_root = out_dir.parent.parent
    base = _base(options, seed, cache_root)
    known = {f.name for f in fields(RLConfig)}
    cfg = RLConfig(**{k: v for k, v in options.items() if k in known}, seed=seed)
    reward, items, dropped = train_items(
        str(options["sft_task"]), str(options["sft_task_args"]),
        str(options["sft_holdout_args"]), str(options["score_key"]) or None)
    key = product_key("rl", RL_VERSION, options, corpus.fingerprint, seed)[:16]
    run_dir = out_dir.parent / f".{key}.run"
    source = SampledGroups(items, reward, cfg.prompts_per_step, cfg.k, cfg.max_new_tokens,
                           seed, cfg.temperature)
    log.reset_clock()
    final = train(cfg, base, run_dir, source)
    for path in final.iterdir():
        if path.name != STATE_FILE:
            shutil.copy2(path, out_dir / path.name)
    rows = [json.loads(line) for line in (run_dir / LOG_FILE).read_text().splitlines()]
    for row in rows:
        extra = {k: v for k, v in row.items() if k not in ("step", "loss", "tokens", "flops")}
        log.step(step=row["step"], loss=row["loss"], tokens=row["tokens"], flops=row["flops"],
                 **extra)
    (out_dir / "rl.json").write_text(json.dumps(
        {"base": str(base), "task": options["sft_task"], "train_items": len(items),
         "dropped_as_held_out": dropped, "cpu_s": rows[-1]["cpu_s"] if rows else 0.0,
         "wall_s": rows[-1]["wall_s"] if rows else 0.0}, indent=2) + "\n")
    shutil.rmtree(run_dir, ignore_errors=True)
