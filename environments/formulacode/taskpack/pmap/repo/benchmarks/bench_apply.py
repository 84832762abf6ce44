import numpy as np
from actfn import apply

_DATA: dict = {}


def _data(n):
    if n not in _DATA:
        _DATA[n] = np.random.default_rng(n).standard_normal(n) * 3.0
    return _DATA[n]


class Activations:
    params = [[2_000, 20_000, 200_000, 1_000_000], ["gelu", "softplus", "swish", "mish"]]
    param_names = ["n", "kind"]
    warmup_time = 0.02

    def setup(self, n, kind):
        self.x = _data(n)

    def time_apply(self, n, kind):
        return apply(self.x, kind)
