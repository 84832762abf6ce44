from primekit import is_prime, prime_count, primes_below


def test_small():
    assert primes_below(20) == [2, 3, 5, 7, 11, 13, 17, 19]
    assert primes_below(2) == []


def test_count():
    assert prime_count(1000) == 168
    assert is_prime(97) and not is_prime(91)
