"""The 8-puzzle: every reachable state, its exact distance to the goal, scrambles and search.

The Rubik HMM paper learns a value heuristic for the Rubik's cube from scramble
trajectories. Its claims are measured against exact cost-to-go, which the 3x3x3 cube does
not allow; the 8-puzzle does (181,440 reachable states, breadth-first search in well under
a second, numpy-vectorised) and has the same structure: a permutation puzzle whose random
scrambles overestimate the true distance more the longer they run, and whose graph is
bipartite, so every move changes the exact distance by exactly one.

A state is a length-9 tuple of tiles (0 = blank) in row-major order; ``Puzzle`` holds all
reachable states (``states``, uint8 (N, 9)), their distances (``dist``), the neighbour
table (``nbr``, -1 where a move is off the board) and an index from a state's base-9 code.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

GOAL = (1, 2, 3, 4, 5, 6, 7, 8, 0)
_MOVES = (-3, 3, -1, 1)  # blank up, down, left, right
_POW = 9 ** np.arange(8, -1, -1, dtype=np.int64)


def _legal(blank: NDArray[np.int64]) -> NDArray[np.bool_]:
    """(N, 4): which of the four blank moves stay on the 3 x 3 board."""
    col = blank % 3
    return np.column_stack([blank >= 3, blank <= 5, col > 0, col < 2])


def _apply(states: NDArray[np.uint8], move: int) -> tuple[NDArray[np.uint8], NDArray[np.bool_]]:
    """Every state with the blank moved by ``move`` (rows where it is illegal are copies)."""
    blank = np.argmax(states == 0, axis=1)
    ok = _legal(blank)[:, _MOVES.index(move)]
    out = states.copy()
    rows = np.flatnonzero(ok)
    src, dst = blank[rows], blank[rows] + move
    out[rows, src] = states[rows, dst]
    out[rows, dst] = 0
    return out, ok


def codes(states: NDArray[np.uint8]) -> NDArray[np.int64]:
    """Base-9 code of each state (unique per arrangement)."""
    return np.asarray(states, dtype=np.int64) @ _POW


@dataclass(frozen=True)
class Puzzle:
    """All reachable states, exact distances, neighbours and a code -> index lookup."""

    states: NDArray[np.uint8]
    dist: NDArray[np.int64]
    nbr: NDArray[np.int64]
    sorted_codes: NDArray[np.int64]
    order: NDArray[np.int64]

    def index(self, states: NDArray[np.uint8]) -> NDArray[np.int64]:
        """Indices of ``states`` (each must be reachable)."""
        c = codes(np.atleast_2d(states))
        pos = np.searchsorted(self.sorted_codes, c)
        return self.order[pos]


@lru_cache(maxsize=1)
def puzzle() -> Puzzle:
    """Breadth-first search from the goal over all 181,440 reachable states (vectorised by
    frontier; cached)."""
    goal = np.asarray([GOAL], dtype=np.uint8)
    levels, frontier = [goal], goal
    seen = codes(goal)
    while len(frontier):
        nxt = []
        for move in _MOVES:
            moved, ok = _apply(frontier, move)
            nxt.append(moved[ok])
        cand = np.vstack(nxt)
        c = codes(cand)
        c, first = np.unique(c, return_index=True)
        new = ~np.isin(c, seen)
        frontier = cand[first[new]]
        seen = np.concatenate([seen, c[new]])
        if len(frontier):
            levels.append(frontier)
    states = np.vstack(levels)
    dist = np.concatenate([np.full(len(lv), d) for d, lv in enumerate(levels)])
    all_codes = codes(states)
    order = np.argsort(all_codes)
    sorted_codes = all_codes[order]
    nbr = np.full((len(states), 4), -1, dtype=np.int64)
    for j, move in enumerate(_MOVES):
        moved, ok = _apply(states, move)
        nbr[ok, j] = order[np.searchsorted(sorted_codes, codes(moved[ok]))]
    return Puzzle(states, dist, nbr, sorted_codes, order)


def scramble(p: Puzzle, n_walks: int, length: int, seed: int) -> NDArray[np.int64]:
    """(n_walks, length + 1) state indices of random walks from the goal that never undo
    their previous move (the scrambles a heuristic learner trains on; step t has
    scramble depth t, an upper bound on its distance)."""
    rng = np.random.default_rng(seed)
    walks = np.empty((n_walks, length + 1), dtype=np.int64)
    walks[:, 0] = int(p.index(np.asarray(GOAL, dtype=np.uint8))[0])
    prev = np.full(n_walks, -1)
    for t in range(length):
        cur = walks[:, t]
        options = p.nbr[cur]
        allowed = (options >= 0) & (options != prev[:, None])
        pick = rng.random((n_walks, 4)) * allowed
        walks[:, t + 1] = options[np.arange(n_walks), pick.argmax(axis=1)]
        prev = cur
    return walks


def local_ranking_accuracy(p: Puzzle, h: NDArray[np.float64], sample: NDArray[np.int64]
                           ) -> float:
    """For each sampled state, every pair of its neighbours one closer and one farther
    (exactly): the share of pairs the heuristic orders right (ties count half)."""
    nb = p.nbr[sample]
    valid = nb >= 0
    d = np.where(valid, p.dist[np.maximum(nb, 0)], -1)
    hv = h[np.maximum(nb, 0)]
    here = p.dist[sample][:, None]
    closer = valid & (d == here - 1)
    farther = valid & (d == here + 1)
    pairs = closer[:, :, None] & farther[:, None, :]
    diff = hv[:, None, :] - hv[:, :, None]  # h(farther) - h(closer)
    right = np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))
    return float((right * pairs).sum() / max(pairs.sum(), 1))


def weighted_astar(p: Puzzle, h: NDArray[np.float64], start: int, weight: float,
                   budget: int) -> tuple[bool, int, int]:
    """Weighted A* (f = g + weight * h) from ``start`` to the goal, at most ``budget``
    expansions: (solved, nodes expanded, solution length or -1)."""
    goal = int(np.argmin(p.dist))
    g = {start: 0}
    heap = [(weight * float(h[start]), 0, start)]
    closed: set[int] = set()
    expanded = 0
    while heap and expanded < budget:
        _, gs, s = heapq.heappop(heap)
        if s in closed:
            continue
        if s == goal:
            return True, expanded, gs
        closed.add(s)
        expanded += 1
        for n in p.nbr[s]:
            n = int(n)
            if n < 0 or n in closed:
                continue
            if gs + 1 < g.get(n, 1 << 30):
                g[n] = gs + 1
                heapq.heappush(heap, (gs + 1 + weight * float(h[n]), gs + 1, n))
    return False, expanded, -1
