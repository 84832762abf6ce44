"""primekit: a small scientific-Python package of the FormulaCode offline pack."""

from primekit.sieve import is_prime, prime_count, primes_below

__all__ = ['is_prime', 'primes_below', 'prime_count']
