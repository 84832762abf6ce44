"""The snapshot gate as specified: trailing-expression rewrite, shallowest traced return,
per-workload timeout, every RNG seeded (item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fcb_helpers import load_runtime, make_suite, run_snapshot

fc_grade = load_runtime("fc_grade")

PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/core.py": """
        import json

        def helper(n):
            return [i * i for i in range(n)]

        def run(n):
            out = helper(n)
            json.dumps(out)  # stdlib returns are never the result

        def total(n):
            return sum(helper(n))
    """,
}

BENCH = """
    import json
    import time

    from pkg import core

    class Suite:
        def setup(self):
            self.n = 6

        def time_trailing(self):
            core.total(self.n)

        def time_traced(self):
            for _ in range(2):
                core.run(self.n)

        def time_stdlib_only(self):
            for _ in range(2):
                json.dumps([1, 2])

    def time_hang():
        time.sleep(60)
"""


def _suite(root: Path, core_total: str | None = None) -> Path:
    package = dict(PACKAGE)
    if core_total:
        package["pkg/core.py"] = package["pkg/core.py"].replace("return sum(helper(n))",
                                                                core_total)
    return make_suite(root, {"bench_snap": BENCH}, package)


def test_trailing_expression_traced_return_and_timeout(tmp_path: Path) -> None:
    snap = run_snapshot(_suite(tmp_path / "t"), "--timeout", "1")
    assert snap["bench_snap.Suite.time_trailing"] == {"status": "ok", "value": 55}
    # no trailing expression, the call returns None: the shallowest non-trivial return of
    # repository code inside it (helper's list; run's None and json's str are skipped)
    assert snap["bench_snap.Suite.time_traced"]["value"] == [0, 1, 4, 9, 16, 25]
    assert snap["bench_snap.Suite.time_stdlib_only"]["value"] is None
    hang = snap["bench_snap.time_hang"]
    assert hang["status"] == "error" and hang["error"].startswith("timeout")


@pytest.mark.slow
def test_a_changed_result_fails_the_gate_that_explicit_returns_missed(tmp_path: Path) -> None:
    base = run_snapshot(_suite(tmp_path / "base"), "--timeout", "1")
    wrong = run_snapshot(_suite(tmp_path / "wrong", "return sum(helper(n)) + 1"),
                         "--timeout", "1")
    summary = fc_grade.verify(base, wrong)
    assert summary["status"] == "failed" and summary["transitions"]["pass-to-fail"] == 1
    same = run_snapshot(_suite(tmp_path / "same", "return sum(i * i for i in range(n))"),
                        "--timeout", "1")
    assert fc_grade.verify(base, same)["status"] == "passed"


SEEDED = """
    import random

    import numpy as np
    import torch  # the stand-in below: seeded because the suite loaded it

    def time_rngs():
        rng = np.random.default_rng()
        fixed = np.random.default_rng(5)
        return (random.random(), float(np.random.rand()), float(rng.random()),
                float(fixed.random()), torch.SEEDS[-1])
"""

FAKE_TORCH = {"torch/__init__.py": """
    SEEDS = []

    def manual_seed(seed):
        SEEDS.append(seed)
"""}


def test_every_rng_is_seeded_before_the_call(tmp_path: Path) -> None:
    import numpy as np

    tree = make_suite(tmp_path / "t", {"bench_rng": SEEDED}, FAKE_TORCH)
    first = run_snapshot(tree)["bench_rng.time_rngs"]["value"]
    again = run_snapshot(tree)["bench_rng.time_rngs"]["value"]
    assert first == again  # unseeded default_rng() included
    assert first[3] == float(np.random.default_rng(5).random())  # explicit seeds untouched
    assert first[4] == 42
