import numpy as np


def is_prime(k):
    """Trial division primality test."""
    if k < 2:
        return False
    d = 2
    while d * d <= k:
        if k % d == 0:
            return False
        d += 1
    return True


def _sieve(n):
    flags = np.ones(max(n, 2), dtype=bool)
    flags[:2] = False
    for p in range(2, int(n**0.5) + 1):
        if flags[p]:
            flags[p * p::p] = False
    return flags[:n]


def primes_below(n):
    """All primes p < n, ascending."""
    return [int(p) for p in np.flatnonzero(_sieve(n))]


def prime_count(n):
    """Number of primes below n."""
    return int(_sieve(n).sum())
