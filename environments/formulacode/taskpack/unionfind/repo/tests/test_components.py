import random

from clusterlite import component_sizes, connected_components


def test_labels():
    assert connected_components(6, [(4, 1), (1, 3), (5, 2)]) == [0, 1, 2, 1, 1, 2]
    assert component_sizes(6, [(4, 1), (1, 3), (5, 2)]) == [3, 2, 1]


def test_chain_relabels_to_minimum():
    rng = random.Random(2)
    edges = [(rng.randrange(50), rng.randrange(50)) for _ in range(40)]
    labels = connected_components(50, edges)
    for a, b in edges:
        assert labels[a] == labels[b]
    assert all(labels[i] <= i for i in range(50))
