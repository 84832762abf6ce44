from sieve.core import count_primes, prime_sum, primes_upto

__all__ = ["count_primes", "prime_sum", "primes_upto"]
