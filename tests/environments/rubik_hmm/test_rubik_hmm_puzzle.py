"""The 8-puzzle: BFS is complete and exact, scrambles bound the distance, ranking and A*
measure what they say."""

from __future__ import annotations

import numpy as np

from environments.rubik_hmm import local_ranking_accuracy, puzzle, scramble, weighted_astar


def test_bfs_reaches_half_the_permutations_with_exact_distances() -> None:
    p = puzzle()
    assert len(p.states) == 181_440 and int(p.dist.max()) == 31
    assert int((p.dist == 31).sum()) == 2  # the two hardest 8-puzzle positions
    ok = p.nbr >= 0
    steps = np.abs(p.dist[np.maximum(p.nbr, 0)] - p.dist[:, None])[ok]
    assert set(steps.tolist()) == {1}  # bipartite: every move changes the distance by one
    assert np.array_equal(p.index(p.states[[5, 77, 1000]]), [5, 77, 1000])


def test_scramble_depth_bounds_and_overestimates_distance() -> None:
    p = puzzle()
    walks = scramble(p, 200, 40, seed=0)
    d = p.dist[walks]
    assert (d <= np.arange(41)).all() and (d[:, 0] == 0).all()
    assert d[:, -1].mean() < 32 and np.array_equal(walks, scramble(p, 200, 40, seed=0))


def test_ranking_and_search_measure_the_heuristic() -> None:
    p = puzzle()
    sample = np.random.default_rng(0).integers(0, len(p.dist), 2000)
    exact = p.dist.astype(float)
    assert local_ranking_accuracy(p, exact, sample) == 1.0
    assert local_ranking_accuracy(p, -exact, sample) == 0.0
    assert local_ranking_accuracy(p, np.zeros(len(exact)), sample) == 0.5
    start = int(np.flatnonzero(p.dist == 20)[0])
    solved, nodes, length = weighted_astar(p, exact, start, 1.0, 1000)
    assert solved and length == 20 and nodes == 20  # a perfect heuristic walks straight in
    assert weighted_astar(p, np.zeros(len(exact)), start, 1.0, 50) == (False, 50, -1)
