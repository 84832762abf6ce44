from dedup import count_distinct, unique_ordered


def test_order_kept():
    assert unique_ordered(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


def test_count():
    assert count_distinct([1, 2, 2, 3, 1]) == 3
