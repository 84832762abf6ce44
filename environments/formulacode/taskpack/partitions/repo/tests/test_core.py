from partitions import count_partitions, partition_table


def test_known_values():
    assert [count_partitions(n) for n in range(8)] == [1, 1, 2, 3, 5, 7, 11, 15]
    assert count_partitions(20) == 627


def test_table():
    assert partition_table(5) == [1, 1, 2, 3, 5]
