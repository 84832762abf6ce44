import random

from dedup import count_distinct, unique_ordered


class Unique:
    params = [[300, 600]]
    param_names = ["distinct"]

    def setup(self, distinct):
        rng = random.Random(0)
        self.items = [f"label{rng.randrange(distinct)}" for _ in range(2000)]

    def time_unique_ordered(self, distinct):
        return unique_ordered(self.items)

    def time_count_distinct(self, distinct):
        return count_distinct(self.items)
