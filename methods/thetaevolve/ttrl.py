"""Test-time RL for ThetaEvolve: the policy that writes the responses learns from them
between evolution steps (Wang et al., arXiv 2511.23473, section "RL at test time").

:class:`TestTimeRL` owns a private copy of a ``whitebox/`` model's weights (the Inspect
model is only used to find the folder, so other samples sharing it are never trained by
accident). ThetaEvolve (``thetaevolve(rl=True)``) calls it twice per step:

1. :meth:`TestTimeRL.generate` samples the step's responses with the current weights (one
   left-padded batch, one seed per response, as ``whitebox/`` decodes);
2. after the children are scored, :meth:`TestTimeRL.update` turns the step's
   :class:`~methods.thetaevolve.thetaevolve.Rollout` list into a batch through
   :class:`~methods.rl.rollouts.RecordedRollouts` (grouped by ``(step, parent)``: the
   responses to one prompt; ``pi_old`` = the weights that generated them, so the first
   update is exactly on-policy) and takes ``updates_per_step`` optimizer steps of GRPO or
   PMD-mean (:mod:`methods.rl.losses`) on it. The reward is ThetaEvolve's: the lazy
   penalties and the child's fitness, shaped by the paper's ``5 * x^3`` when the solver's
   ``reward_shaping`` is on. Groups of unequal size are fine: the loss is computed per
   group and averaged over responses.

Checkpoints: after every update the weights are a model folder ``run_dir/ckpt-<step>/``
(``save_pretrained`` + tokenizer; ``whitebox/ -M model_path=`` loads it) with the optimizer
state beside them, written to a temporary folder and renamed; only the latest is kept.
:meth:`restore` loads the newest checkpoint at or before the run's last finished step and
redoes the missing updates from the journal's rollouts. One line per update goes to
``run_dir/ttrl_log.jsonl`` (reward mean/std, loss, KL, tokens, CPU and wall seconds, the
mean |advantage| of the batch, and how far the update moved the trainable weights:
``delta_norm`` for this update, ``drift_norm`` since the weights were loaded, both L2 over
all trainable tensors), so a run can show it received gradient at all: a step whose
groups all tie has advantages 0 and leaves the weights exactly where they were.

A tiny model's no-diff replies all earn the same -0.4, so its groups tie; the solver's
``reward_format`` (graded format credit, :mod:`methods.thetaevolve.evolve.format_credit`, not
in the paper) breaks those ties.

Scale: the suite runs this with SmolLM2-135M on a CPU for a few steps of a few responses:
thousands of times fewer samples than the paper (8B models, 32 x 16 responses per step,
hundreds of steps on GPUs); it shows the machinery works and what it does at that scale.

Transfer (the paper's claim that a checkpoint trained on one problem evolves faster on an
unseen one), as a command that evaluates the base and a trained checkpoint with
inference-only ThetaEvolve on another task and writes one JSON::

    harness method ttrl transfer --checkpoint CKPT_DIR \\
        --task harness/first_autocorrelation --out transfer.json --steps 3
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from methods.rl.losses import (
    LossOut,
    grpo_advantages,
    grpo_loss,
    loo_advantages,
    pmd_mean_loss,
)
from methods.rl.policy import Policy
from methods.rl.rollouts import Batch, Group, RecordedRollouts
from methods.rl.trainer import (
    ALGOS,
    STATE_FILE,
    _save_checkpoint,
    _select_trainable,
    latest_checkpoint,
    load_policy,
)
from methods.thetaevolve.evolve.learner import RLSettings, Rollout

__all__ = ["LOG_FILE", "TestTimeRL", "base_folder", "group_loss"]

LOG_FILE = "ttrl_log.jsonl"


def base_folder(model: Any) -> Path:
    """The HF folder behind an Inspect ``whitebox/`` model (what test-time RL copies)."""
    lm = getattr(getattr(model, "api", None), "lm", None)
    inner = getattr(lm, "model", None)
    path = getattr(inner, "name_or_path", None)
    if not path or not Path(str(path)).is_dir():
        raise ValueError(f"thetaevolve rl=True needs a whitebox/ model with its weights in a "
                         f"folder (trainable torch weights); got {model}")
    return Path(str(path))


def _group_of(rollout: Rollout) -> tuple[int, str]:
    return rollout.step, rollout.parent_id


def group_loss(algo: str, policy: Policy, group: Group, ref: Any, clip_eps: float, tau: float,
               kl_coef: float) -> LossOut:
    """GRPO or PMD-mean of one group (its ``K`` responses to one prompt)."""
    if group.old_logp is None:
        raise ValueError("a group without behaviour log-probs")
    logp = policy.logprobs(group.prompt_ids, group.tokens)
    refp = None
    if ref is not None:
        with torch.no_grad():
            refp = policy.logprobs(group.prompt_ids, group.tokens, model=ref)
    rewards = group.rewards[None, :]
    if algo == "grpo":
        return grpo_loss(logp, group.old_logp, refp, group.mask, rewards, clip_eps, kl_coef)
    return pmd_mean_loss(logp, group.old_logp, refp, group.mask, rewards, tau, kl_coef)


class TestTimeRL:
    """The trainable copy of the policy, its optimizer, and its checkpoints."""

    __test__ = False  # a class, not a pytest test class, despite its name

    def __init__(self, base: Path, settings: RLSettings, run_dir: Path, seed: int = 0,
                 reset: bool = False) -> None:
        if settings.algo not in ALGOS:
            raise ValueError(f"rl_algo must be one of {', '.join(ALGOS)}, got {settings.algo!r}")
        if settings.updates_per_step < 1 or not settings.lr > 0:
            raise ValueError("rl_updates_per_step must be >= 1 and rl_lr > 0")
        self.base = base
        self.settings = settings
        self.run_dir = run_dir
        self.seed = seed
        if reset:
            shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = run_dir / LOG_FILE
        self.policy: Policy | None = None
        self.ref: Any = None
        self.params: list[torch.nn.Parameter] = []
        self.opt: torch.optim.Optimizer | None = None
        self.start: list[torch.Tensor] | None = None
        self.start_is_base = True
        self.step = 0

    @classmethod
    def for_model(cls, model: Any, settings: RLSettings, run_dir: Path, seed: int = 0,
                  reset: bool = False) -> TestTimeRL:
        """A learner starting from the weights of the Inspect ``whitebox/`` model ``model``."""
        return cls(base_folder(model), settings, run_dir, seed, reset)

    # ------------------------------------------------------------------ state

    def _load(self, folder: Path) -> None:
        from methods.recipes.tinylm import deterministic

        with deterministic(self.settings.threads):
            torch.manual_seed(self.seed)
            self.policy = load_policy(folder)
            self.params = _select_trainable(self.policy.model, self.settings.trainable)
            self.opt = torch.optim.AdamW(self.params, lr=self.settings.lr, betas=(0.9, 0.99),
                                         weight_decay=0.0)
            # the trainable weights as loaded: the drift of later updates is measured from
            # here (from the base only when the run did not resume from a checkpoint)
            self.start = [p.detach().clone() for p in self.params]
            self.start_is_base = folder == self.base
            if self.settings.kl_coef > 0 and self.ref is None:
                self.ref = load_policy(self.base).model
                self.ref.requires_grad_(False)
                self.ref.eval()

    def restore(self, done_step: int, rollouts: dict[int, list[Rollout]]) -> list[dict[str, Any]]:
        """Load the newest checkpoint at or before ``done_step`` (else the base weights) and
        redo the updates of the steps after it from their ``rollouts``; returns their rows."""
        ckpt = latest_checkpoint(self.run_dir)
        if ckpt is not None and int(ckpt.name.split("-")[1]) > done_step:
            shutil.rmtree(ckpt)  # weights from a step the journal does not have: drop them
            ckpt = None
        self._load(ckpt if ckpt is not None else self.base)
        self.step = 0
        if ckpt is not None:
            state = torch.load(ckpt / STATE_FILE, weights_only=False)
            assert self.opt is not None
            self.opt.load_state_dict(state["optimizer"])
            self.step = int(state["step"])
        self._truncate_log(self.step)
        return [self.update(s, rollouts.get(s, [])) for s in range(self.step + 1, done_step + 1)]

    def _truncate_log(self, step: int) -> None:
        if not self.log_path.is_file():
            return
        kept = [line for line in self.log_path.read_text().splitlines()
                if line.strip() and json.loads(line)["step"] <= step]
        self.log_path.write_text("".join(f"{line}\n" for line in kept))

    def _ready(self) -> Policy:
        if self.policy is None:
            self._load(self.base)
        assert self.policy is not None
        return self.policy

    # ------------------------------------------------------------------ the two calls

    def generate(self, prompts: list[list[dict[str, str]]], seeds: list[int],
                 temperature: float, max_tokens: int) -> list[tuple[str, int, int]]:
        """``(text, prompt tokens, response tokens)`` per prompt, sampled by the current
        weights in one batch (each row from its own seeded generator). Prompts, seeds and
        top-p are those ``whitebox/`` uses for the same request, so before the first update
        the responses are the ones the inference-only run gets."""
        from harness.models._common import DEFAULT_TOP_P, call_seed
        from harness.models.whitebox import WhiteBoxLM
        from methods.recipes.tinylm import deterministic

        policy = self._ready()
        lm = WhiteBoxLM(policy.model, policy.tokenizer)
        texts = [lm.chat_prompt(list(chat)) for chat in prompts]
        was_training = policy.model.training
        policy.model.eval()
        with deterministic(self.settings.threads):
            gens = lm.generate_batch(texts, max_new_tokens=max_tokens, temperature=temperature,
                                     top_p=DEFAULT_TOP_P,
                                     seeds=[call_seed(t, s) for t, s in zip(texts, seeds,
                                                                            strict=True)])
        policy.model.train(was_training)
        return [(g.text, g.prompt_tokens, g.output_tokens) for g in gens]

    def update(self, step: int, rollouts: Sequence[Rollout]) -> dict[str, Any]:
        """Train on one step's rollouts, checkpoint, and return the log row."""
        from methods.recipes.tinylm import deterministic

        policy = self._ready()
        assert self.opt is not None
        t_wall, t_cpu = time.perf_counter(), time.process_time()
        rewards = [float(r.reward) for r in rollouts]
        row: dict[str, Any] = {
            "step": step, "algo": self.settings.algo, "responses": len(rollouts),
            "reward_mean": sum(rewards) / len(rewards) if rewards else None,
            "reward_std": float(torch.tensor(rewards).std(unbiased=False)) if rewards else None,
        }
        try:
            source = RecordedRollouts(list(rollouts), _group_of, groups_per_batch=len(rollouts),
                                      max_tokens=self.settings.max_response_tokens + 1)
        except ValueError as err:  # no group of two: nothing to compare within
            row.update(skipped=str(err), groups=0, updates=0)
        else:
            with deterministic(self.settings.threads):
                policy.model.train()
                batch: Batch = source.collect(policy, 1, step - 1)
                row.update(self._optimise(policy, batch))
        self.step = step
        row.update(wall_s=round(time.perf_counter() - t_wall, 3),
                   cpu_s=round(time.process_time() - t_cpu, 3))
        state = {"step": step, "optimizer": self.opt.state_dict(), "row": row}
        _save_checkpoint(self.run_dir, step, policy, self.base, state, keep=1)
        with self.log_path.open("a") as log:
            log.write(json.dumps(row) + "\n")
        return row

    def _optimise(self, policy: Policy, batch: Batch) -> dict[str, Any]:
        assert self.opt is not None
        s = self.settings
        n = sum(g.tokens.shape[0] for g in batch.groups)
        flat = [float(g.rewards.std(unbiased=False)) == 0.0 for g in batch.groups]
        advantage = grpo_advantages if s.algo == "grpo" else loo_advantages
        adv_abs = torch.cat([advantage(g.rewards[None, :]).reshape(-1).abs()
                             for g in batch.groups])
        before = [p.detach().clone() for p in self.params]
        losses: list[float] = []
        last: list[LossOut] = []
        for _ in range(s.updates_per_step):
            self.opt.zero_grad(set_to_none=True)
            last = []
            total = 0.0
            for group in batch.groups:
                out = group_loss(s.algo, policy, group, self.ref, s.clip_eps, s.tau, s.kl_coef)
                (out.loss * (group.tokens.shape[0] / n)).backward()
                total += float(out.loss.detach()) * group.tokens.shape[0] / n
                last.append(out)
            torch.nn.utils.clip_grad_norm_(self.params, 1.0)
            self.opt.step()
            losses.append(total)
        return {"groups": len(batch.groups), "flat_groups": sum(flat), "updates": len(losses),
                "loss": losses[-1], "tokens": batch.tokens,
                "mean_abs_advantage": float(adv_abs.mean()),
                "delta_norm": _norm_diff(self.params, before),
                "drift_norm": _norm_diff(self.params, self.start) if self.start else None,
                "drift_from": "base" if self.start_is_base else "resumed checkpoint",
                "kl": sum(o.kl for o in last) / len(last),
                "log_ratio": sum(o.log_ratio for o in last) / len(last)}

    def summary(self) -> dict[str, Any]:
        """Where the trained weights are and the update log of the run so far."""
        rows = []
        if self.log_path.is_file():
            rows = [json.loads(line) for line in self.log_path.read_text().splitlines() if line]
        ckpt = latest_checkpoint(self.run_dir)
        return {"base": str(self.base), "checkpoint": str(ckpt) if ckpt else None,
                "updates": rows, "settings": asdict(self.settings)}


def _norm_diff(params: Sequence[torch.Tensor], ref: Sequence[torch.Tensor]) -> float:
    """L2 norm of ``params - ref`` over all tensors (how far an update moved the weights)."""
    with torch.no_grad():
        total = sum(float((p.detach().float() - r.float()).pow(2).sum())
                    for p, r in zip(params, ref, strict=True))
    return total ** 0.5


# ----------------------------------------------------------------------------- transfer
