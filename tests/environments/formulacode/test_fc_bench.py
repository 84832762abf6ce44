"""asv semantics of the in-container runner on tiny suites (each a few subprocess runs)."""

from __future__ import annotations

import time
from pathlib import Path

from fcb_helpers import make_suite, run_list, run_time

LOGGED = """
    import os
    LOG = os.environ.get("FCB_LOG") or os.path.join(os.path.dirname(__file__), "log.txt")

    def log(word):
        with open(LOG, "a") as fh:
            fh.write(word + "\\n")
"""


def _log(tree: Path) -> list[str]:
    path = tree / "benchmarks" / "log.txt"
    return path.read_text().split() if path.exists() else []


def test_params_ids_setup_cache_once_and_setup_teardown_per_sample(tmp_path: Path) -> None:
    tree = make_suite(tmp_path / "t", {"bench_mod": LOGGED + """
    def setup(*args):
        log("modsetup")

    class TimeSuite:
        params = [[10, 20], ["a", "b"]]
        param_names = ["n", "s"]
        number = 2
        repeat = 3
        warmup_time = 0.0

        def setup_cache(self):
            log("cache")
            return {"k": 7}

        def setup(self, cache, n, s):
            assert cache == {"k": 7}
            log("setup")

        def teardown(self, cache, n, s):
            log("teardown")

        def time_x(self, cache, n, s):
            log("call")
            return sum(range(n))
    """})
    names = run_list(tree)
    assert "bench_mod.TimeSuite.time_x(10, 'a')" in names and len(names) == 4
    res = run_time(tree)
    assert sorted(res["samples"]) == sorted(names) and not res["errors"]
    log = _log(tree)
    assert log.count("cache") == 1  # once for the whole family, not per workload
    # per workload: 1 warm-up sample + 3 samples, each with its setup/teardown pair
    assert log.count("setup") == log.count("teardown") == 4 * 4
    assert log.count("modsetup") == 4 * 4  # the module's setup runs before the class's
    assert log.count("call") == 4 * (1 + 3 * 2)
    meta = res["meta"]["bench_mod.TimeSuite.time_x(20, 'b')"]
    assert meta["number"] == 2 and meta["n"] == 3 and meta["param_names"] == ["n", "s"]
    assert all(len(v) == 3 for v in res["samples"].values())


def test_single_param_list_function_attributes_and_skip(tmp_path: Path) -> None:
    tree = make_suite(tmp_path / "t", {"bench_f": """
    def time_f(n):
        sum(range(n))
    time_f.params = [5, 50]
    time_f.repeat = (2, 4, 0.0)  # asv's (min_repeat, max_repeat, max_time)
    time_f.number = 1

    class Skipped:
        def setup(self):
            raise NotImplementedError

        def time_never(self):
            pass
    """})
    res = run_time(tree)
    assert sorted(res["samples"]) == ["bench_f.time_f(5)", "bench_f.time_f(50)"]
    assert all(len(v) == 2 for v in res["samples"].values())  # max_time 0: stop at min
    assert not res["errors"] and res["meta"]["bench_f.Skipped.time_never"]["status"] == "skip"


def test_sample_time_calibrates_number_and_min_run_count(tmp_path: Path) -> None:
    tree = make_suite(tmp_path / "t", {"bench_cal": """
    import time

    def time_sleep():
        time.sleep(0.001)
    time_sleep.sample_time = 0.02
    time_sleep.warmup_time = 0.0
    time_sleep.repeat = 2

    def time_min_runs():
        pass
    time_min_runs.number = 1
    time_min_runs.repeat = 1
    time_min_runs.min_run_count = 5
    time_min_runs.warmup_time = 0.0
    """})
    res = run_time(tree, "--timer", "wall")
    number = res["meta"]["bench_cal.time_sleep"]["number"]
    # ~0.02 s / (1 ms + scheduler slack) calls per sample: never more than 20 (a sleep is
    # >= 1 ms), and more than one unless a loaded machine stretches 1 ms sleeps to 10 ms
    assert 2 <= number <= 20
    assert 0.0009 < min(res["samples"]["bench_cal.time_sleep"]) < 0.01
    assert len(res["samples"]["bench_cal.time_min_runs"]) == 4  # 1 warm-up + 4 >= 5


def test_timeout_kills_only_that_workload(tmp_path: Path) -> None:
    tree = make_suite(tmp_path / "t", {"bench_slow": """
    import time

    def time_hang():
        time.sleep(60)
    time_hang.timeout = 0.5

    def time_ok():
        pass
    """})
    t0 = time.monotonic()
    res = run_time(tree)
    assert time.monotonic() - t0 < 20
    assert res["errors"]["bench_slow.time_hang"].startswith("timeout")
    assert res["meta"]["bench_slow.time_hang"]["status"] == "timeout"
    assert "bench_slow.time_ok" in res["samples"]


def test_timeraw_peakmem_track_kinds(tmp_path: Path) -> None:
    tree = make_suite(tmp_path / "t", {"bench_kinds": """
    def timeraw_import():
        return "import json, decimal"
    timeraw_import.repeat = 2

    class Mem:
        params = [1, 4]

        def peakmem_buffer(self, mb):
            buf = bytearray(mb * 1_000_000)
            return len(buf)

    def track_widgets():
        return 42
    track_widgets.unit = "widgets"
    """})
    res = run_time(tree)
    assert not res["errors"], res["errors"]
    raw = res["samples"]["bench_kinds.timeraw_import"]
    assert len(raw) == 2 and all(0 < v < 5 for v in raw)
    small, large = (res["samples"][f"bench_kinds.Mem.peakmem_buffer({n})"][0] for n in (1, 4))
    assert 1_000_000 <= small < 2_000_000 and 4_000_000 <= large < 5_000_000
    assert res["samples"]["bench_kinds.track_widgets"] == [42.0]
    assert res["meta"]["bench_kinds.track_widgets"]["unit"] == "widgets"
    assert res["meta"]["bench_kinds.Mem.peakmem_buffer(1)"]["kind"] == "peakmem"


def test_repeat_calibrates_to_the_cv_target_and_records_it(tmp_path: Path) -> None:
    tree = make_suite(tmp_path / "t", {"bench_cv": """
    import random, time

    def time_jitter():
        time.sleep(random.random() * 0.002)
    time_jitter.number = 1
    time_jitter.warmup_time = 0.0
    """})
    loose = run_time(tree, "--timer", "wall", "--repeat", "2", "--cv-target", "10")
    assert loose["meta"]["bench_cv.time_jitter"]["n"] == 2  # target met at the minimum
    strict = run_time(tree, "--timer", "wall", "--repeat", "2", "--cv-target", "0",
                      "--max-repeat", "12", "--budget", "5")
    meta = strict["meta"]["bench_cv.time_jitter"]
    assert meta["n"] == 12 and meta["cv"] > 0  # never met: stops at max-repeat
    budget = run_time(tree, "--timer", "wall", "--repeat", "2", "--cv-target", "0",
                      "--max-repeat", "100000", "--budget", "0.05")
    assert 2 <= budget["meta"]["bench_cv.time_jitter"]["n"] < 1000  # stopped by the budget
