import numpy as np
from scorer import MLP, score_all

_DATA: dict = {}


def _items(n, n_in):
    if (n, n_in) not in _DATA:
        _DATA[n, n_in] = list(np.random.default_rng(n + n_in).standard_normal((n, n_in)))
    return _DATA[n, n_in]


class Score:
    params = [[2, 8, 40], [32, 128], [64, 512]]
    param_names = ["n_items", "n_in", "n_hidden"]
    warmup_time = 0.02

    def setup(self, n_items, n_in, n_hidden):
        self.model = MLP(n_in, n_hidden)
        self.items = _items(n_items, n_in)

    def time_score_all(self, n_items, n_in, n_hidden):
        return score_all(self.model, self.items)
