import random

from records import parse_rows


def _text(n_rows, n_fields, spacing):
    rng = random.Random(n_rows * n_fields)
    sep = "; " if spacing == "spaced" else ";"
    return "\n".join(
        sep.join([f"id{i}"] + [repr(round(rng.uniform(-1e3, 1e3), 4)) for _ in range(n_fields)])
        for i in range(n_rows))


class Parse:
    params = [[10, 300, 3_000], [1, 4, 16], ["tight", "spaced"]]
    param_names = ["n_rows", "n_fields", "spacing"]
    warmup_time = 0.02

    def setup(self, n_rows, n_fields, spacing):
        self.text = _text(n_rows, n_fields, spacing)

    def time_parse_rows(self, n_rows, n_fields, spacing):
        return parse_rows(self.text)
