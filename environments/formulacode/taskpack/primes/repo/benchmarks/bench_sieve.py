from sieve import count_primes, prime_sum, primes_upto


class Sieve:
    params = [[100, 5_000, 200_000, 2_000_000]]
    param_names = ["n"]
    warmup_time = 0.02

    def time_primes_upto(self, n):
        return primes_upto(n)

    def time_count_primes(self, n):
        return count_primes(n)

    def time_prime_sum(self, n):
        return prime_sum(n)


class Ranges:
    params = [[10, 1_000], [3, 30]]
    param_names = ["start", "n_ranges"]
    warmup_time = 0.02

    def time_counts_over_ranges(self, start, n_ranges):
        return [count_primes(start * (i + 1)) for i in range(n_ranges)]
