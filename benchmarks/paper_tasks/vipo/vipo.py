"""VIPO: uncertainty-penalised model-based offline RL with vs without the value-inconsistency
term in model training; normalised return and model error on a pendulum.

VIPO (ICML 2026), code https://anonymous.4open.science/r/vipo2025-8FD4; abstract in the
suite's papers (``../shared/papers/``): "the model is learned by additionally minimizing
the inconsistency between the value learned directly from the offline data and the value
estimated from the model ... VIPO can learn a highly accurate model efficiently and
consistently outperform existing methods". Each sample is a cell (seed, quality): an
offline dataset of 10 pendulum episodes (2,000 transitions, ``environments/vipo``) of
``random`` or ``medium`` quality. A method sees the transitions and returns a grid policy and
its model's predictions on query transitions; it is scored by the policy's normalised
return on the true pendulum (0 = uniform random actions, 100 = value iteration on the true
dynamics over the same grid; 20 seeded episodes), and by its model's one-step and 10-step
open-loop squared error on transitions of the near-optimal policy (where a good policy
goes). The baseline (MOPO-style, no inconsistency term) runs on the same data.

    inspect eval harness/vipo --model none
    inspect eval harness/vipo --model none -T qualities=medium -T n_seeds=10
    harness method tasks --by quality --keys norm_return,model_error,rollout_error logs/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.vipo import (
    ACTIONS,
    Grid,
    evaluate,
    make_dataset,
    obs,
    oracle_policy,
    random_return,
    trajectories,
)
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 5
DEFAULT_QUALITIES = "random,medium"
DEFAULT_EPISODES = 10
DEFAULT_METHOD = "vipo"
DEFAULT_BASELINE = "mopo"
DEFAULT_SEED = 100  # seeds 0-2 were used while writing the methods; the report uses others
FAMILY = "offline_mbrl"
VERSION = "1.0.0"
EVAL_EPISODES = 20
HORIZON = 10


class OfflineProblem:
    """Cells are (seed, quality); the truth is the evaluation seed and the query answers."""

    def __init__(self, episodes: int = DEFAULT_EPISODES) -> None:
        self.episodes = episodes

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        seed = int(cell["seed"])
        data = make_dataset(str(cell["quality"]), self.episodes, seed)
        o, a, r, o2 = data.transitions()
        steps = data.th.shape[1] - 1
        episode = np.repeat(np.arange(data.th.shape[0]), steps)
        t = np.tile(np.arange(steps), data.th.shape[0])
        good = trajectories(oracle_policy(), 10, 20_000 + seed, eps=0.1)
        qo, qa, qr, qo2 = good.transitions()
        pick = np.random.default_rng(20_000 + seed).choice(len(qo), 1000, replace=False)
        starts = np.random.default_rng(21_000 + seed).integers(0, good.th.shape[1] - HORIZON,
                                                               (good.th.shape[0], 5))
        rows = np.repeat(np.arange(good.th.shape[0]), 5)
        cols = starts.ravel()
        start = obs(good.th[rows, cols], good.thdot[rows, cols])
        seq = np.stack([good.action[rows, cols + j] for j in range(HORIZON)], 1)
        target = np.stack([obs(good.th[rows, cols + j + 1], good.thdot[rows, cols + j + 1])
                           for j in range(HORIZON)], 1)
        grid = Grid()
        inputs = {"obs": o, "action": a, "reward": r, "next_obs": o2, "episode": episode,
                  "t": t, "grid": {"n_th": grid.n_th, "n_dot": grid.n_dot},
                  "actions": ACTIONS, "query_obs": qo[pick], "query_action": qa[pick],
                  "query_start": start, "query_actions": seq}
        truth = {"next": qo2[pick], "reward": qr[pick], "rollout": target, "seed": 30_000 + seed}
        return inputs, truth

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        seed = int(truth["seed"])
        ret = evaluate(np.asarray(outputs["policy"], dtype=np.int64), EVAL_EPISODES, seed)
        best = evaluate(oracle_policy(), EVAL_EPISODES, seed)
        worst = random_return(EVAL_EPISODES, seed)
        norm = 100.0 * (ret - worst) / (best - worst)
        one = np.asarray(outputs["pred_next"], dtype=float) - truth["next"]
        roll = np.asarray(outputs["pred_rollout"], dtype=float) - truth["rollout"]
        return {"loss": 100.0 - norm, "norm_return": norm, "return": ret,
                "model_error": float((one**2).sum(-1).mean()),
                "reward_error": float(((np.asarray(outputs["pred_reward"], dtype=float)
                                        - truth["reward"]) ** 2).mean()),
                "penalty": float(outputs["mean_penalty"]),
                "value_inconsistency": float(outputs["value_inconsistency"]),
                "rollout_error": float((roll[:, -1] ** 2).sum(-1).mean())}


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 100, "quality": "random"}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"]), "quality": str(record["quality"])})


def _list(values: str | list[str]) -> list[str]:
    return [v.strip() for v in values.split(",") if v.strip()] if isinstance(values, str) \
        else [str(v) for v in values]


@benchmark("vipo")
@task
def vipo(
    n_seeds: int = DEFAULT_N_SEEDS,
    qualities: str | list[str] = DEFAULT_QUALITIES,
    episodes: int = DEFAULT_EPISODES,
    alpha: float = 0.1,
    penalty: float = 1.0,
    model_steps: int = 500,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """VIPO vs MOPO-style offline model-based RL on pendulum datasets of two qualities.

    Args:
        n_seeds: Datasets per quality.
        qualities: ``random``, ``medium`` (comma-separated).
        episodes: Episodes (200 steps) per dataset.
        alpha: Weight of VIPO's value-inconsistency term.
        penalty: MOPO's uncertainty penalty (both methods).
        model_steps: Adam steps of the ensemble (both methods).
        method: The plain method scored (``vipo``, ``mopo``, ``paper``, ``baseline``).
        baseline: Run on the same data too (or ``none``).
        seed: First dataset's seed.
        scale: Multiplies ``episodes`` (the data-size factor).
        sandbox: ``bwrap`` to run the methods in the bubblewrap sandbox.
    """
    records = [{"seed": seed + i, "quality": q} for q in _list(qualities)
               for i in range(n_seeds)]
    config = {"alpha": alpha, "penalty": penalty, "model_steps": model_steps}
    return method_task(
        name="vipo", family=FAMILY,
        problem=OfflineProblem(episodes=max(int(round(episodes * scale)), 2)),
        samples=[record_to_sample(r) for r in records], method=method, baseline=baseline,
        version=VERSION, config=config, baseline_config=config, sandbox=sandbox,
        metadata={"paper": "https://anonymous.4open.science/r/vipo2025-8FD4"},
    )
