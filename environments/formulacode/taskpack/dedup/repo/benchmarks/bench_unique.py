import random

from dedup import count_distinct, unique_ordered


def _items(n, distinct, kind):
    rng = random.Random(n + distinct)
    keys = [rng.randrange(max(1, int(n * distinct))) for _ in range(n)]
    if kind == "str":
        return [f"label{k:07d}" for k in keys]
    if kind == "tuple":
        return [(k % 97, k // 97) for k in keys]
    return keys


class Unique:
    params = [[50, 1_000, 20_000], [0.05, 1.0], ["int", "str", "tuple"]]
    param_names = ["n", "distinct", "kind"]
    warmup_time = 0.02

    def setup(self, n, distinct, kind):
        self.items = _items(n, distinct, kind)

    def time_unique_ordered(self, n, distinct, kind):
        return unique_ordered(self.items)


class Count:
    params = [[1_000, 20_000]]
    param_names = ["n"]
    warmup_time = 0.02

    def setup(self, n):
        self.items = _items(n, 0.5, "str")

    def time_count_distinct(self, n):
        return count_distinct(self.items)
