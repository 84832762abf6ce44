import numpy as np
from matchain import apply_chain, chain_norms


class Chain:
    params = [[60, 120], [3]]
    param_names = ["n", "length"]

    def setup(self, n, length):
        rng = np.random.default_rng(0)
        self.mats = [rng.normal(size=(n, n)) / np.sqrt(n) for _ in range(length)]
        self.v = rng.normal(size=n)
        self.vs = [rng.normal(size=n) for _ in range(3)]

    def time_apply(self, n, length):
        return apply_chain(self.mats, self.v)

    def time_norms(self, n, length):
        return chain_norms(self.mats, self.vs)
