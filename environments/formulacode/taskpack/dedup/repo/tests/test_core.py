from dedup import count_distinct, unique_ordered


def test_order_kept():
    assert unique_ordered(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]
    assert unique_ordered([(1, 2), (0, 1), (1, 2)]) == [(1, 2), (0, 1)]


def test_count():
    assert count_distinct([1, 2, 2, 3, 1]) == 3 and count_distinct([]) == 0
