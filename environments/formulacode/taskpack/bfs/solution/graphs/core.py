"""Unweighted shortest paths on adjacency-list graphs."""

import random
from collections import deque


def grid_graph(rows, cols):
    """4-neighbour grid as {node: [neighbours]} with node = r * cols + c."""
    adj = {}
    for r in range(rows):
        for c in range(cols):
            nbrs = []
            if r:
                nbrs.append((r - 1) * cols + c)
            if r < rows - 1:
                nbrs.append((r + 1) * cols + c)
            if c:
                nbrs.append(r * cols + c - 1)
            if c < cols - 1:
                nbrs.append(r * cols + c + 1)
            adj[r * cols + c] = nbrs
    return adj


def random_graph(n, degree, seed=0):
    rng = random.Random(seed)
    adj = {i: [] for i in range(n)}
    for i in range(n):
        for _ in range(degree // 2):
            j = rng.randrange(n)
            if j != i:
                adj[i].append(j)
                adj[j].append(i)
    return adj


def bfs_distances(adj, source):
    """{node: hops from source} for every node reachable from ``source``."""
    dist = {source: 0}
    queue = deque([source])  # O(1) pops from the left (list.pop(0) shifts the whole list)
    popleft, push = queue.popleft, queue.append
    while queue:
        node = popleft()
        d = dist[node] + 1
        for nb in adj[node]:
            if nb not in dist:
                dist[nb] = d
                push(nb)
    return dist
