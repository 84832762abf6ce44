"""Tabular Q vs the 128-unit MLP DQN scout on the same game instances, measured.

Why: SCOUT's scouts are small neural nets (DQN/PPO); the suite's SFT data come from
tabular Q-learning (:mod:`methods.scout.qlearning`). This runs both on every instance of
a task (default the scored ``test`` split, 4 per game) with the same seeds, and reports per
game and in total the solved share, the moves of the greedy trajectories against the BFS
optimum when the task gives one, environment transitions and CPU seconds (one thread),
so the choice of scout is a measured one.

    OMP_NUM_THREADS=1 python -m methods.scout.compare --out methods/studies/scout/dqn.json
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from methods.scout.data import load_game_task
from methods.scout.dqn import DQNConfig, train_dqn
from methods.scout.qlearning import QConfig, train_scout

__all__ = ["compare", "main"]

_KEYS = ("instances", "solved", "moves", "transitions", "cpu_s")


def _add(table: dict[str, dict[str, float]], game: str, solved: bool, moves: int,
         transitions: int, cpu: float) -> None:
    row = table.setdefault(game, dict.fromkeys(_KEYS, 0.0))
    row["instances"] += 1
    row["solved"] += int(solved)
    row["moves"] += moves if solved else 0
    row["transitions"] += transitions
    row["cpu_s"] += cpu


def _finish(table: dict[str, dict[str, float]]) -> dict[str, Any]:
    total = {k: sum(r[k] for r in table.values()) for k in _KEYS}
    for row in [*table.values(), total]:
        row["solved_share"] = row["solved"] / max(row["instances"], 1)
        row["cpu_s_per_transition"] = row["cpu_s"] / max(row["transitions"], 1)
    return {"games": table, "total": total}


def compare(task: str, task_args: str, qcfg: QConfig, dcfg: DQNConfig,
            seed: int = 0) -> dict[str, Any]:
    """Both scouts on every sample of the task; instance ``k`` gets seed
    ``seed * 100_003 + k`` for both (as :func:`methods.scout.cost.scout_cost`)."""
    built, simulator, _ = load_game_task(task, task_args)
    tab: dict[str, dict[str, float]] = {}
    dqn: dict[str, dict[str, float]] = {}
    for k, sample in enumerate(built.dataset):
        game = simulator(sample.metadata["spec"])
        s = seed * 100_003 + k
        started = time.process_time()
        run = train_scout(game, qcfg, s)
        _add(tab, game.name, run.trajectory.solved, len(run.trajectory.actions),
             run.transitions, time.process_time() - started)
        started = time.process_time()
        drun = train_dqn(game, dcfg, s)
        _add(dqn, game.name, drun.trajectory.solved, len(drun.trajectory.actions),
             drun.transitions, time.process_time() - started)
    return {"tabular_q": _finish(tab), "dqn_mlp128": _finish(dqn)}


def main(argv: list[str] | None = None) -> None:
    """Run :func:`compare` and write the JSON to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="harness/scout")
    parser.add_argument("--task-args", default='{"split": "test", "n": 4}')
    parser.add_argument("--q-episodes", type=int, default=800)
    parser.add_argument("--dqn-episodes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    qcfg, dcfg = QConfig(episodes=args.q_episodes), DQNConfig(episodes=args.dqn_episodes)
    result = compare(args.task, args.task_args, qcfg, dcfg, args.seed)
    result.update({"task": args.task, "task_args": json.loads(args.task_args),
                   "seed": args.seed, "q_config": asdict(qcfg), "dqn_config": asdict(dcfg),
                   "threads": "run with OMP_NUM_THREADS=1 (numpy's BLAS, one thread)"})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    from harness.errors import guarded

    guarded(main)
