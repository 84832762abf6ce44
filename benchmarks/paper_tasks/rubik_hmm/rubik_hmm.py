"""Rubik HMM: a learned heuristic trained on HMM soft cost-to-go labels vs on scramble
depth, scored against exact distances (local ranking) and by budgeted weighted A*.

The paper (ICML 2026; abstract in the suite's papers, ``../shared/papers/``): "Heuristic
learning is cast as inference over state trajectories using an HMM-style model, where
estimated depth-change dynamics define transitions and forward-backward inference yields
soft supervision ... a large-scale local ranking metric ... On the Rubik's Cube, our
approach consistently improves local ranking accuracy and downstream search performance
under matched computational budgets." No public code or arXiv id was found offline.

On the 8-puzzle (``environments/rubik_hmm``: all 181,440 states with exact distances by
breadth-first search), each sample is a cell (seed, walks): ``walks`` random 40-move
scrambles from the goal (never undoing a move) are the training data; both arms train the
same MLP for the same epochs (``methods/rubik_hmm``). Scored on the heuristic over every
state: local ranking accuracy (5,000 random states; every pair of neighbours one move
closer / farther, exactly), Spearman correlation and mean absolute error against the exact
distances, and weighted A* from 40 random states 18-26 moves from the goal at weights 1 and
2 with ``budget`` expansions: success rate, nodes expanded, excess solution length.

    inspect eval harness/rubik_hmm --model none
    inspect eval harness/rubik_hmm --model none -T budget=1000 -T n_seeds=20
    harness method tasks --keys rank_acc,success_w1,nodes_w1,excess_w1,success_w2 logs/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from scipy.stats import spearmanr

from environments.rubik_hmm import local_ranking_accuracy, puzzle, scramble, weighted_astar
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 10
DEFAULT_WALKS = 400
DEFAULT_LENGTH = 40
DEFAULT_BUDGET = 300
DEFAULT_METHOD = "hmm-soft"
DEFAULT_BASELINE = "scramble-depth"
DEFAULT_SEED = 100  # seeds 0-1 were used while writing the methods; the report uses others
FAMILY = "search_heuristic"
VERSION = "1.1.0"  # 1.1.0: Spearman with average ranks for ties (1.0.0: ordinal)
WEIGHTS = (1.0, 2.0)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho with tied values given their average rank (exact distances are small
    integers, so most of them are tied; ordinal ranks would break the ties arbitrarily)."""
    return float(spearmanr(a, b).statistic)


class HeuristicProblem:
    """Cells are (seed, walks); the truth is the puzzle (exact distances) and the cell's
    evaluation states."""

    def __init__(self, length: int = DEFAULT_LENGTH, budget: int = DEFAULT_BUDGET,
                 n_rank: int = 5000, n_search: int = 40) -> None:
        self.length, self.budget, self.n_rank, self.n_search = length, budget, n_rank, n_search

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        p = puzzle()
        seed = int(cell["seed"])
        walks = scramble(p, int(cell["walks"]), self.length, seed)
        rng = np.random.default_rng(10_000 + seed)
        sample = rng.integers(0, len(p.dist), self.n_rank)
        pool = np.flatnonzero((p.dist >= 18) & (p.dist <= 26))
        starts = rng.choice(pool, self.n_search, replace=False)
        return {"states": p.states, "walks": walks}, (p, sample, starts)

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        p, sample, starts = truth
        h = np.asarray(outputs["h"], dtype=float)
        rank = local_ranking_accuracy(p, h, sample)
        scores = {"loss": 1.0 - rank, "rank_acc": rank,
                  "spearman": _spearman(h[sample], p.dist[sample]),
                  "mae": float(np.abs(h - p.dist).mean())}
        for w in WEIGHTS:
            runs = [weighted_astar(p, h, int(s), w, self.budget) for s in starts]
            solved = np.array([r[0] for r in runs])
            key = f"w{w:g}"
            scores[f"success_{key}"] = float(solved.mean())
            scores[f"nodes_{key}"] = float(np.mean([r[1] for r in runs]))
            if solved.any():
                excess = [r[2] - p.dist[s] for r, s in zip(runs, starts, strict=True) if r[0]]
                scores[f"excess_{key}"] = float(np.mean(excess))
        return scores


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 100, "walks": 400}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"]), "walks": int(record["walks"])})


@benchmark("rubik_hmm")
@task
def rubik_hmm(
    n_seeds: int = DEFAULT_N_SEEDS,
    walks: int = DEFAULT_WALKS,
    budget: int = DEFAULT_BUDGET,
    rounds: int = 4,
    epochs: int = 5,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """HMM soft labels vs scramble depth for a learned 8-puzzle heuristic.

    Args:
        n_seeds: Training sets (one per seed: its walks, its evaluation states).
        walks: Scramble walks per training set (40 moves each).
        budget: Node expansions weighted A* may use per start state.
        rounds: Training rounds (the HMM relabels between rounds).
        epochs: Epochs per round (both arms).
        method: The plain method scored (``hmm-soft``, ``scramble-depth``, ``paper``,
            ``baseline``).
        baseline: Run on the same walks too (or ``none``).
        seed: First training set's seed.
        scale: Multiplies ``walks`` (the data-size factor).
        sandbox: ``bwrap`` to run the methods in the bubblewrap sandbox.
    """
    n_walks = max(int(round(walks * scale)), 10)
    records = [{"seed": seed + i, "walks": n_walks} for i in range(n_seeds)]
    config = {"rounds": rounds, "epochs": epochs}
    return method_task(
        name="rubik_hmm", family=FAMILY, problem=HeuristicProblem(budget=budget),
        samples=[record_to_sample(r) for r in records], method=method, baseline=baseline,
        version=VERSION, config=config, baseline_config=config, sandbox=sandbox,
        metadata={"paper": "https://icml.cc/virtual/2026/papers.html?filter=titles&search=Rubik"},
    )
