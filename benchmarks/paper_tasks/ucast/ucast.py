"""U-Cast: a tiny U-Net forecaster of Lorenz-96, MAE pre-training then CRPS fine-tuning
through Monte Carlo dropout, against MAE only; fair CRPS and spread-skill ratio.

Rühling Cachay, Watson-Parris and Yu, "U-Cast: A Surprisingly Simple and Efficient
Frontier Probabilistic AI Weather Forecaster" (arXiv:2604.09041: a standard U-Net,
deterministic MAE pre-training, short probabilistic fine-tuning on the CRPS with MC dropout
as the only source of spread). Each sample is a cell (seed): ``environments/ucast``
simulates seeded Lorenz-96 trajectories (40 variables, F = 8, RK4 with dt = 0.05) and cuts
them into pairs (noisy observed state -> true state one lead, 0.2 time units, later); the
methods see the training pairs and the noisy test observations, and return an ensemble of
``members`` forecasts rolled out to ``rollout`` leads. Scored by the fair ensemble CRPS,
the ensemble-mean RMSE, the spread and the spread-skill ratio at each lead, on the
standardised scale. The baseline trains on the same data with the same seed.

    inspect eval harness/ucast --model none
    inspect eval harness/ucast --model none -T n_seeds=10 -T dropout=0.2
    python -m harness.method_tasks --keys crps,rmse,ssr,ssr_gap logs/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.ucast import ensemble_scores, make_data
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 5
DEFAULT_METHOD = "u-cast"
DEFAULT_BASELINE = "mae-only"
DEFAULT_SEED = 100  # seeds 0-1 were looked at while writing the methods
FAMILY = "probabilistic_forecasting"
VERSION = "1.0.0"
PAPER = "2604.09041"


class EnsembleProblem:
    """Cells are seeds; the truth is the true test states at leads ``1..rollout``."""

    def __init__(self, n_train: int, n_test: int, rollout: int, members: int,
                 obs_noise: float, lead_steps: int) -> None:
        self.n_train, self.n_test, self.rollout = n_train, n_test, rollout
        self.members, self.obs_noise, self.lead_steps = members, obs_noise, lead_steps

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        data = make_data(int(cell["seed"]), n_train=self.n_train, n_test=self.n_test,
                         rollout=self.rollout, obs_noise=self.obs_noise,
                         lead_steps=self.lead_steps)
        inputs = {"train_inputs": data.train_inputs, "train_targets": data.train_targets,
                  "test_inputs": data.test_inputs, "rollout": self.rollout,
                  "members": self.members}
        return inputs, {"targets": data.test_targets}

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        ensemble = np.asarray(outputs["ensemble"], dtype=float)
        targets = truth["targets"]
        if ensemble.shape != (self.rollout, self.members, *targets.shape[1:]):
            raise ValueError(f"ensemble of shape {ensemble.shape}, expected "
                             f"{(self.rollout, self.members, *targets.shape[1:])}")
        per_lead = [ensemble_scores(ensemble[k], targets[k]) for k in range(self.rollout)]
        out: dict[str, float] = {}
        for key in ("crps", "rmse", "spread", "ssr"):
            out[key] = float(np.mean([s[key] for s in per_lead]))
        out["ssr_gap"] = float(np.mean([abs(1.0 - s["ssr"]) for s in per_lead]))
        for k, s in enumerate(per_lead, start=1):
            out.update({f"crps_lead{k}": s["crps"], f"rmse_lead{k}": s["rmse"],
                        f"ssr_lead{k}": s["ssr"]})
        out["loss"] = out["crps"]
        if "train_crps" in outputs:
            out["train_crps"] = float(outputs["train_crps"])
        return out


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 100}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"])})


@benchmark("ucast", extra="cpu")
@task
def ucast(
    n_seeds: int = DEFAULT_N_SEEDS,
    n_train: int = 4000,
    n_test: int = 256,
    rollout: int = 2,
    members: int = 16,
    obs_noise: float = 0.3,
    lead_steps: int = 4,
    channels: int = 8,
    dropout: float = 0.1,
    pretrain_steps: int = 600,
    finetune_steps: int = 120,
    train_members: int = 4,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """U-Cast (MAE then CRPS) vs MAE only: fair CRPS and spread-skill of MC-dropout ensembles.

    Args:
        n_seeds: Cells (independent simulations and trainings).
        n_train: Training pairs (before ``scale``).
        n_test: Test initial conditions.
        rollout: Leads forecast autoregressively and scored.
        members: Ensemble members at inference (MC-dropout passes).
        obs_noise: Standard deviation of the observation noise on the inputs
            (standardised units).
        lead_steps: RK4 steps of dt = 0.05 per lead.
        channels: U-Net width at the finest level (``c, 2c, 4c``).
        dropout: Dropout rate of every block (training and inference).
        pretrain_steps: U-Cast's MAE steps.
        finetune_steps: U-Cast's CRPS steps (MAE only trains ``pretrain_steps +
            finetune_steps`` MAE steps).
        train_members: Dropout members per case in the CRPS loss.
        method: The plain method scored (``u-cast``, ``mae-only`` or ``persistence``).
        baseline: Run on the same data too (or ``none``).
        seed: First cell's seed.
        scale: Multiplies the training pairs (the size factor shared by method tasks).
        sandbox: ``bwrap`` to run the methods in the bubblewrap sandbox.
    """
    n_train = max(int(round(n_train * scale)), 64)
    records = [{"seed": seed + i} for i in range(n_seeds)]
    config = {"channels": channels, "dropout": dropout, "pretrain_steps": pretrain_steps,
              "finetune_steps": finetune_steps, "train_members": train_members}
    problem = EnsembleProblem(n_train, n_test, rollout, members, obs_noise, lead_steps)
    return method_task(
        name="ucast", family=FAMILY, problem=problem,
        samples=[record_to_sample(r) for r in records], method=method, baseline=baseline,
        version=VERSION, config=config, baseline_config=config, sandbox=sandbox,
        metadata={"paper": PAPER},
    )
