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


def primes_below(n):
    """All primes p < n, ascending."""
    return [k for k in range(n) if is_prime(k)]


def prime_count(n):
    """Number of primes below n."""
    return len(primes_below(n))
