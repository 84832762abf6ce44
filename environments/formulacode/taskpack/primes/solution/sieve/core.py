"""Prime sieves."""

import numpy as np


def _odd_sieve(n):
    """Odd-only sieve: flag[i] says whether 2*i + 1 is prime (half the memory and work)."""
    size = (n + 1) // 2
    flag = np.ones(size, dtype=bool)
    flag[0] = False  # 1 is not prime
    for i in range(1, (int(n ** 0.5) - 1) // 2 + 1):
        if flag[i]:
            p = 2 * i + 1
            flag[p * p // 2::p] = False
    return flag


def primes_upto(n):
    """All primes <= n (int64 array)."""
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    odd = 2 * np.flatnonzero(_odd_sieve(n)).astype(np.int64) + 1
    return np.concatenate([np.array([2], dtype=np.int64), odd])


def count_primes(n):
    return int(len(primes_upto(n)))


def prime_sum(n):
    return int(primes_upto(n).sum())
