from functools import cache


@cache
def _p(n, k):
    """Partitions of n into parts of size at most k."""
    if n == 0:
        return 1
    if n < 0 or k == 0:
        return 0
    return _p(n - k, k) + _p(n, k - 1)


def count_partitions(n):
    """Number of integer partitions of n."""
    return _p(n, n)


def partition_table(m):
    """count_partitions(0..m-1)."""
    return [count_partitions(i) for i in range(m)]
