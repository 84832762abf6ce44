"""Prime sieves."""

import numpy as np


def _sieve(n):
    """Boolean array: is_prime[i] for 0 <= i <= n."""
    is_prime = np.ones(n + 1, dtype=bool)
    is_prime[:2] = False
    for p in range(2, int(n ** 0.5) + 1):
        if is_prime[p]:
            is_prime[p * p::p] = False
    return is_prime


def primes_upto(n):
    """All primes <= n (int64 array)."""
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(_sieve(n)).astype(np.int64)


def count_primes(n):
    return int(len(primes_upto(n)))


def prime_sum(n):
    return int(primes_upto(n).sum())
