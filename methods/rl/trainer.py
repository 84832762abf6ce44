"""The RL trainer: GRPO or PMD-mean on a causal LM, on CPU, seeded, resumable after a kill.

One step ``t`` (1-based) of ``steps``:

1. when ``t + staleness <= steps``, the rollout source makes batch ``t`` with the current
   weights ``theta_{t-1}`` (``K`` responses to each of ``prompts_per_step`` prompts, their
   rewards, and ``log pi_old`` by one forward pass) and queues it;
2. the update uses batch ``t - staleness``, made by ``theta_{max(t-s-1, 0)}`` (batches
   ``1-s .. 0`` are made by the initial weights before step 1), so every step trains on the
   same number of rollouts whatever the staleness, and ``pi_old`` is the policy that
   generated them: their stored log-probs;
3. the loss (:mod:`methods.rl.losses`): ``grpo`` or ``pmd-mean``, with ``beta`` (``kl_coef``)
   times the k3 KL against the frozen initial policy, one AdamW step on the trainable
   parameters (constant lr, gradient norm clipped), one line in ``train_log.jsonl``.

Updates: ``trainable="all"`` (full fine-tuning) or ``"top:N"`` (full fine-tuning of the
last ``N`` decoder layers and the final norm; embeddings and lower layers frozen, so the
backward pass stops early). No LoRA: a product is then always a plain model folder, with
no adapter to merge before ``whitebox/`` loads it.

Checkpoints every ``ckpt_every`` steps and at the end: ``run_dir/ckpt-000012/`` holds the
weights as a model folder (``save_pretrained`` + tokenizer, loadable by ``whitebox/ -M
model_path=``) and ``trainer_state.pt`` (optimizer state, the queue of not-yet-used batches,
the clocks), written to a temporary folder and renamed, so a kill never leaves a half
checkpoint. A rerun with the same ``run_dir`` resumes from the last one; since batch ``i``
is seeded by ``i`` alone and torch runs deterministic algorithms on a fixed number of
threads, the resumed run ends with the same weights, bit for bit, as one never interrupted
(``tests/methods/rl/test_trainer.py`` kills a run with SIGKILL to check).

The log (``train_log.jsonl``, one line per step, read by ``harness.results
.read_training_log`` once a recipe copies it into its product): ``step``, ``loss``,
``reward`` (mean reward of the batch trained on), ``reward_fresh`` (of the batch made this
step, by the current weights), ``batch_policy_step``, ``kl``, ``clip_frac``, ``log_ratio``,
``tokens`` (response tokens trained on), ``flops`` (the dense approximation with N = all
parameters: 6 N per token of the trained forward + backward, 2 N per token of the reference
forward, 4 N per token of the rollouts made this step: sampling and the pi_old forward),
``wall_s`` and ``cpu_s`` (process CPU seconds), both cumulative over resumes (steps redone
after a kill are counted once).

    python -m methods.rl.trainer SPEC.json      # {"base":, "run_dir":, "config": {...},
                                                #  "task":, "task_args":, "score_key":}
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from methods.rl.losses import LossOut, grpo_loss, pmd_mean_loss
from methods.rl.policy import Policy
from methods.rl.rollouts import Batch, RolloutSource

__all__ = ["ALGOS", "RLConfig", "latest_checkpoint", "load_policy", "main", "train"]

ALGOS = ("grpo", "pmd-mean")
LOG_FILE = "train_log.jsonl"
STATE_FILE = "trainer_state.pt"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                   "chat_template.jinja", "generation_config.json", "vocab.json", "merges.txt",
                   "tokenizer.model", "added_tokens.json", "tinylm.json")


@dataclass(frozen=True)
class RLConfig:
    """Everything that defines a run (and so its product)."""

    algo: str = "pmd-mean"
    steps: int = 100
    prompts_per_step: int = 8
    k: int = 8
    max_new_tokens: int = 8
    temperature: float = 1.0
    lr: float = 1e-4
    staleness: int = 0
    tau: float = 1.0
    clip_eps: float = 0.2
    kl_coef: float = 0.0
    trainable: str = "all"
    grad_clip: float = 1.0
    ckpt_every: int = 25
    threads: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        if self.algo not in ALGOS:
            raise ValueError(f"algo must be one of {', '.join(ALGOS)}, got {self.algo!r}")
        if self.steps < 1 or self.ckpt_every < 1 or self.staleness < 0:
            raise ValueError("steps and ckpt_every must be >= 1, staleness >= 0")
        if self.k < 2:
            raise ValueError("k must be >= 2: both losses compare responses within a group")
        if not (self.trainable == "all" or (self.trainable.startswith("top:")
                                            and self.trainable[4:].isdigit())):
            raise ValueError(f"trainable must be 'all' or 'top:N', got {self.trainable!r}")


def load_policy(folder: Path) -> Policy:
    """A model folder as a float32 :class:`Policy` (offline)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True,
                                                 dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    return Policy(model, tokenizer)


def _select_trainable(model: Any, spec: str) -> list[torch.nn.Parameter]:
    if spec == "all":
        return [p for p in model.parameters()]
    n = int(spec[4:])
    layers = model.model.layers
    if not 1 <= n <= len(layers):
        raise ValueError(f"trainable top:{n}: the model has {len(layers)} layers")
    for p in model.parameters():
        p.requires_grad_(False)
    chosen = [*layers[len(layers) - n:], model.model.norm]
    params = [p for module in chosen for p in module.parameters()]
    for p in params:
        p.requires_grad_(True)
    return params


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The last complete checkpoint folder of a run, or None."""
    done = sorted(p for p in run_dir.glob("ckpt-*") if (p / STATE_FILE).is_file())
    return done[-1] if done else None


def _copy_tokenizer(src: Path, out: Path) -> None:
    for name in TOKENIZER_FILES:
        if (src / name).is_file() and not (out / name).exists():
            shutil.copy2(src / name, out / name)


def _save_checkpoint(run_dir: Path, step: int, policy: Policy, base: Path,
                     state: dict[str, Any], keep: int = 2) -> Path:
    final = run_dir / f"ckpt-{step:06d}"
    staging = run_dir / f".ckpt-{step:06d}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    policy.model.save_pretrained(str(staging))
    _copy_tokenizer(base, staging)
    torch.save(state, staging / STATE_FILE)
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)
    older = sorted(p for p in run_dir.glob("ckpt-*") if p != final)
    for old in older[:max(len(older) - (keep - 1), 0)]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def _loss(cfg: RLConfig, policy: Policy, ref: Any, batch: Batch) -> tuple[LossOut, int]:
    logp, old, refp, mask = [], [], [], []
    for g in batch.groups:
        if g.old_logp is None:
            raise ValueError("a batch without behaviour log-probs (fill_behaviour_logprobs)")
        logp.append(policy.logprobs(g.prompt_ids, g.tokens))
        old.append(g.old_logp)
        with torch.no_grad():
            refp.append(policy.logprobs(g.prompt_ids, g.tokens, model=ref))
        mask.append(g.mask)
    cat = [torch.cat(x) for x in (logp, old, refp, mask)]
    rewards = batch.rewards
    if cfg.algo == "grpo":
        out = grpo_loss(cat[0], cat[1], cat[2], cat[3], rewards, cfg.clip_eps, cfg.kl_coef)
    else:
        out = pmd_mean_loss(cat[0], cat[1], cat[2], cat[3], rewards, cfg.tau, cfg.kl_coef)
    prompt_tokens = sum(len(g.prompt_ids) * g.tokens.shape[0] for g in batch.groups)
    return out, prompt_tokens


def _truncate_log(path: Path, step: int) -> None:
    if not path.is_file():
        return
    kept = [line for line in path.read_text().splitlines()
            if line.strip() and json.loads(line)["step"] <= step]
    path.write_text("".join(f"{line}\n" for line in kept))


def train(cfg: RLConfig, base: Path, run_dir: Path, source: RolloutSource,
          on_step: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """Train from the model folder ``base`` (resuming ``run_dir`` if it has a checkpoint);
    returns the final checkpoint's folder (a loadable model directory)."""
    from methods.recipes.tinylm import deterministic

    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(asdict(cfg), indent=2) + "\n")
    log_path = run_dir / LOG_FILE
    with deterministic(cfg.threads):
        torch.manual_seed(cfg.seed)
        ckpt = latest_checkpoint(run_dir)
        policy = load_policy(ckpt if ckpt is not None else base)
        ref = load_policy(base).model
        ref.requires_grad_(False)
        ref.eval()
        params = _select_trainable(policy.model, cfg.trainable)
        opt = torch.optim.AdamW(params, lr=cfg.lr, betas=(0.9, 0.99), weight_decay=0.0)
        n_params = sum(p.numel() for p in policy.model.parameters())
        queue: dict[int, Batch] = {}
        start, wall0, cpu0 = 0, 0.0, 0.0
        if ckpt is not None:
            state = torch.load(ckpt / STATE_FILE, weights_only=False)
            opt.load_state_dict(state["optimizer"])
            queue = state["queue"]
            start, wall0, cpu0 = int(state["step"]), float(state["wall_s"]), float(
                state["cpu_s"])
            _truncate_log(log_path, start)
        elif log_path.exists():
            log_path.unlink()
        if start >= cfg.steps:
            return ckpt if ckpt is not None else base
        t_wall, t_cpu = time.perf_counter(), time.process_time()
        policy.model.train()
        if start == 0:
            for j in range(1 - cfg.staleness, 1):
                queue[j] = source.collect(policy, j, 0)
        final = run_dir
        with log_path.open("a") as log:
            for step in range(start + 1, cfg.steps + 1):
                fresh: float | None = None
                gen_tokens = 0
                if step + cfg.staleness <= cfg.steps:
                    made = source.collect(policy, step, step - 1)
                    queue[step] = made
                    fresh = float(made.rewards.mean())
                    gen_tokens = made.tokens + sum(len(g.prompt_ids) * g.tokens.shape[0]
                                                   for g in made.groups)
                batch = queue.pop(step - cfg.staleness)
                out, prompt_tokens = _loss(cfg, policy, ref, batch)
                opt.zero_grad(set_to_none=True)
                out.loss.backward()
                torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
                opt.step()
                trained = batch.tokens
                seen = trained + prompt_tokens
                row = {"step": step, "loss": float(out.loss.detach()),
                       "reward": float(batch.rewards.mean()), "reward_fresh": fresh,
                       "batch_policy_step": batch.policy_step, "kl": out.kl,
                       "clip_frac": out.clip_frac, "log_ratio": out.log_ratio,
                       "tokens": trained,
                       "flops": 8 * n_params * seen + 4 * n_params * gen_tokens,
                       "lr": cfg.lr, "algo": cfg.algo, "staleness": cfg.staleness,
                       "wall_s": round(wall0 + time.perf_counter() - t_wall, 4),
                       "cpu_s": round(cpu0 + time.process_time() - t_cpu, 4)}
                log.write(json.dumps(row) + "\n")
                log.flush()
                if on_step is not None:
                    on_step(row)
                if step % cfg.ckpt_every == 0 or step == cfg.steps:
                    state = {"step": step, "optimizer": opt.state_dict(), "queue": queue,
                             "wall_s": row["wall_s"], "cpu_s": row["cpu_s"],
                             "config": asdict(cfg)}
                    final = _save_checkpoint(run_dir, step, policy, base, state)
    return final


def main(argv: list[str] | None = None) -> int:
    """``python -m methods.rl.trainer SPEC.json``: a run from a JSON spec (see the module
    docstring); the rewards come from a suite task (``task``) or an import path
    (``reward: "module:attr"``, a :class:`~methods.rl.rollouts.RewardFn`, with ``items``)."""
    parser = argparse.ArgumentParser(prog="python -m methods.rl.trainer")
    parser.add_argument("spec", type=Path)
    args = parser.parse_args(argv)
    spec = json.loads(args.spec.read_text())
    cfg = RLConfig(**spec.get("config", {}))
    from methods.rl.rollouts import Item, SampledGroups, TaskReward

    if "task" in spec:
        reward = TaskReward(spec["task"], spec.get("task_args"), spec.get("score_key"))
        items = reward.items
    else:
        from harness.registry import resolve_target

        reward = resolve_target(spec["reward"])
        items = [Item(**it) for it in spec["items"]]
    source = SampledGroups(items, reward, cfg.prompts_per_step, cfg.k, cfg.max_new_tokens,
                           cfg.seed, cfg.temperature)
    out = train(cfg, Path(spec["base"]), Path(spec["run_dir"]), source)
    print(out)
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(guarded(main))
