from primekit import prime_count, primes_below


class Primes:
    params = [[3000, 6000]]
    param_names = ["n"]

    def time_primes_below(self, n):
        return primes_below(n)

    def time_prime_count(self, n):
        return prime_count(n)
