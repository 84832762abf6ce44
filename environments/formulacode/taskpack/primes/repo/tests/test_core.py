from sieve import count_primes, prime_sum, primes_upto


def test_small_values():
    assert primes_upto(1).tolist() == [] and primes_upto(2).tolist() == [2]
    assert primes_upto(30).tolist() == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
    assert primes_upto(49).tolist()[-1] == 47 and primes_upto(9).tolist() == [2, 3, 5, 7]


def test_counts_and_sums():
    assert count_primes(10 ** 5) == 9592 and prime_sum(100) == 1060
    assert count_primes(121) == 30 and count_primes(120) == 30
