from graphs import bfs_distances, grid_graph, random_graph


def test_grid_distances_are_manhattan():
    dist = bfs_distances(grid_graph(5, 7), 0)
    assert all(dist[r * 7 + c] == r + c for r in range(5) for c in range(7))


def test_unreachable_left_out_and_random_symmetric():
    adj = {0: [1], 1: [0], 2: []}
    assert bfs_distances(adj, 0) == {0: 0, 1: 1}
    g = random_graph(200, 4)
    d = bfs_distances(g, 0)
    assert all(abs(d[u] - d[v]) <= 1 for u in d for v in g[u])
