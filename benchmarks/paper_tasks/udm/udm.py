"""UDM-GRPO vs naive per-step GRPO on a tiny uniform discrete diffusion model of strings.

Wang et al., "UDM-GRPO: Stable and Efficient Group Relative Policy Optimization for Uniform
Discrete Diffusion Models", arXiv:2604.18518. Each sample is one seeded run: a denoiser is
pretrained on strings from the seeded sparse Markov chain of ``environments/udm`` and then
fine-tuned by GRPO on the world's verifiable reward (the fraction of its seeded constraints
a final string satisfies). The method (``udm-grpo``: the final sample is the action, its
likelihood estimated by forward-process re-noising) and the baseline (``naive-grpo``: every
denoising step is an action) run from the same pretrained model with the same budget. The
``n_eval`` final samples each returns are re-scored here with the world's own verifier:
reward, solve rate, the share still inside the pretraining chain's support, diversity.

    inspect eval harness/udm_grpo --model none
    inspect eval harness/udm_grpo --model none -T method=naive-grpo -T baseline=none
    harness study run methods/studies/udm_grpo/study.yaml
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.udm import (
    StringWorld,
    constraint_reward,
    in_support,
    make_world,
    sample_corpus,
)
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 3
DEFAULT_SEED = 0
DEFAULT_WORLD = 0
DEFAULT_VOCAB = 8
DEFAULT_LENGTH = 12
DEFAULT_CONSTRAINTS = 10
DEFAULT_CORPUS = 4096
DEFAULT_RL_STEPS = 200
DEFAULT_GROUP = 32
DEFAULT_METHOD = "udm-grpo"
DEFAULT_BASELINE = "naive-grpo"
FAMILY = "udm_strings"
CORPUS_SEED_OFFSET = 1
VERSION = "1.0.0"
PASSED_THROUGH = ("train_oscillation", "train_collapse", "train_reward_first",
                  "train_reward_last", "train_reward_peak", "kl_ref_last", "kl_ref_max",
                  "grad_norm_max", "cpu_s", "train_cpu_s")
"""The method's own diagnostics of its training run, kept as scores (numbers only)."""


@functools.cache
def _world(seed: int, vocab: int, length: int, n_constraints: int) -> StringWorld:
    return make_world(seed, vocab=vocab, length=length, n_constraints=n_constraints)


def score_samples(world: StringWorld, samples: Any, prefix: str = "") -> dict[str, float]:
    """Reward, solve rate, support share and distinct share of ``samples`` (token lists)."""
    if not isinstance(samples, Sequence) or not samples:
        raise ValueError("the method returned no samples")
    rows = [list(map(int, s)) for s in samples]
    if any(len(s) != world.length or not all(0 <= v < world.vocab for v in s) for s in rows):
        raise ValueError(f"samples must be strings of {world.length} tokens in "
                         f"0..{world.vocab - 1}")
    rewards = [constraint_reward(world.constraints, s) for s in rows]
    n = len(rows)
    return {f"{prefix}reward": sum(rewards) / n,
            f"{prefix}solved": sum(r >= 1.0 for r in rewards) / n,
            f"{prefix}in_support": sum(in_support(world, s) for s in rows) / n,
            f"{prefix}unique": len({tuple(s) for s in rows}) / n}


class StringRLProblem:
    """Cells are (seed, world); the truth is the world (its verifier and chain)."""

    def __init__(self, vocab: int, length: int, n_constraints: int, n_corpus: int) -> None:
        self.vocab, self.length = vocab, length
        self.n_constraints, self.n_corpus = n_constraints, n_corpus

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        world = _world(int(cell["world"]), self.vocab, self.length, self.n_constraints)
        corpus = sample_corpus(world, self.n_corpus, world.seed + CORPUS_SEED_OFFSET)
        inputs = {"vocab": world.vocab, "length": world.length, "corpus": corpus,
                  "constraints": [dict(c) for c in world.constraints]}
        return inputs, world

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        after = score_samples(truth, outputs.get("samples"))
        before = score_samples(truth, outputs.get("samples_before"), prefix="before_")
        extra = {k: float(outputs[k]) for k in PASSED_THROUGH if k in outputs}
        return {"loss": 1.0 - after["reward"], **after, **before,
                "gain": after["reward"] - before["before_reward"], **extra}


def _options(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"options {text!r} are not JSON: {err}") from None
    if not isinstance(value, dict):
        raise ValueError(f"options {text!r} must be a JSON object")
    if {"algo", "rl_steps"} & set(value):
        raise ValueError("options may not set algo (the method does) or rl_steps (a task arg)")
    return value


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 0, "world": 0, "rl_steps": 200}``) as a sample."""
    seed, world, steps = int(record["seed"]), int(record["world"]), int(record["rl_steps"])
    return cell_sample({"seed": seed, "world": world, "config": {"rl_steps": steps}},
                       id=f"seed={seed},world={world},rl_steps={steps}")


@benchmark("udm_grpo")
@task
def udm_grpo(
    n_seeds: int = DEFAULT_N_SEEDS,
    seed: int = DEFAULT_SEED,
    world: int = DEFAULT_WORLD,
    vocab: int = DEFAULT_VOCAB,
    length: int = DEFAULT_LENGTH,
    n_constraints: int = DEFAULT_CONSTRAINTS,
    n_corpus: int = DEFAULT_CORPUS,
    rl_steps: int = DEFAULT_RL_STEPS,
    group: int = DEFAULT_GROUP,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    scale: float = 1.0,
    options: str | None = None,
    cache_dir: str | None = None,
    sandbox: str | None = None,
) -> Task:
    """UDM-GRPO vs naive per-step GRPO: reward, stability and drift after RL, over seeds.

    Args:
        n_seeds: Runs (samples); run ``i`` uses seed ``seed + i`` for pretraining and RL.
        seed: First run's seed.
        world: Seed of the world (chain, constraints, corpus), shared by all runs.
        vocab: Tokens in the alphabet.
        length: String length.
        n_constraints: Constraints in the reward.
        n_corpus: Pretraining strings drawn from the chain.
        rl_steps: GRPO steps (each one group of ``group`` samples).
        group: Samples per GRPO step (the group of the relative advantage).
        method: The plain method scored (``udm-grpo``, ``naive-grpo``, ``paper``,
            ``baseline``).
        baseline: Run on the same world and seed too (``naive-grpo``, ``udm-grpo`` or
            ``none``).
        scale: Multiplies ``rl_steps`` (the budget factor shared by method tasks).
        options: More trainer options as a JSON object (e.g. ``{"pretrain_steps": 300}``;
            the keys of ``methods.udm.train.UDMConfig``), checked by the method.
        cache_dir: Where pretrained models, checkpoints and finished runs are kept (default
            ``$EVALSUITE_CACHE/udm``).
        sandbox: ``bwrap`` to run the trainers in the bubblewrap sandbox.
    """
    if n_seeds < 1:
        raise ValueError(f"n_seeds must be at least 1, got {n_seeds}")
    steps = max(int(round(rl_steps * scale)), 1)
    records = [{"seed": seed + i, "world": world, "rl_steps": steps} for i in range(n_seeds)]
    config: dict[str, Any] = {**_options(options), "group": group}
    if cache_dir:
        config["cache_dir"] = cache_dir
    return method_task(
        name="udm_grpo", family=FAMILY,
        problem=StringRLProblem(vocab, length, n_constraints, n_corpus),
        samples=[record_to_sample(r) for r in records], method=method, baseline=baseline,
        version=VERSION, config=config, baseline_config=config, sandbox=sandbox,
        metadata={"paper": "2604.18518"},
    )
