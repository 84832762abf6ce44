from graphlite import bfs_distances, eccentricity


def test_path():
    edges = [(0, 1), (1, 2), (2, 3)]
    assert bfs_distances(5, edges, 0) == [0, 1, 2, 3, -1]
    assert eccentricity(5, edges, 1) == 2
