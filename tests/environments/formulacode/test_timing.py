"""Timers, CPU sets and CV calibration of the grader (item 3 mechanism)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from fcb_helpers import git_repo, load_runtime, make_suite, run_time

from environments.formulacode.grader import GradeSettings, grade_local
from environments.formulacode.pack import pack_record

fc_grade = load_runtime("fc_grade")


def test_cpu_plan_pins_cpu_time_to_one_cpu_and_gives_wall_the_declared_set() -> None:
    allowed = [0, 1, 2, 3]
    cpu = fc_grade.cpu_plan("process_cpu", 4, None, allowed)
    assert cpu["cpus"] == [3] and cpu["threads"] == 1  # declared cpus ignored by CPU time
    wall = fc_grade.cpu_plan("wall", 2, None, allowed)
    assert wall["cpus"] == [2, 3] and wall["threads"] == 2
    assert fc_grade.cpu_plan("wall", "0-1", None, allowed)["cpus"] == [0, 1]
    assert fc_grade.cpu_plan("wall", [1, 3], None, allowed)["cpus"] == [1, 3]
    short = fc_grade.cpu_plan("wall", 8, None, allowed)
    assert short["cpus"] == allowed and "8 cpus" in short["note"]
    assert fc_grade.cpu_plan("wall", None, None, allowed)["threads"] == 1  # undeclared
    assert fc_grade.thread_env(2)["OPENBLAS_NUM_THREADS"] == "2"


def test_settings_take_the_tasks_declared_timer() -> None:
    meta = {"timer": "wall", "cpus": 2}
    assert GradeSettings(timer="task").for_task(meta).timer == "wall"
    assert GradeSettings(timer="task").for_task(meta).cpus == 2
    assert GradeSettings(timer="task").for_task({}).timer == "process_cpu"
    assert GradeSettings(timer="process").for_task(meta).timer == "process_cpu"  # override
    with pytest.raises(ValueError):
        GradeSettings(timer="gpu").for_task({})


def test_pack_record_carries_declared_timing(tmp_path: Path) -> None:
    src = Path(__file__).parents[3] / "environments" / "formulacode" / "taskpack" / "dedup"
    shutil.copytree(src, tmp_path / "dedup")
    task_json = tmp_path / "dedup" / "task.json"
    meta = json.loads(task_json.read_text())
    task_json.write_text(json.dumps({**meta, "timer": "wall", "cpus": 2}))
    record = pack_record("dedup", 1, tmp_path)
    assert record["timer"] == "wall" and record["cpus"] == 2
    undeclared = {k: v for k, v in meta.items() if k not in ("timer", "cpus")}
    task_json.write_text(json.dumps(undeclared))
    assert "timer" not in pack_record("dedup", 1, tmp_path)  # undeclared: nothing added


def test_wall_timer_sees_waiting_that_cpu_time_cannot(tmp_path: Path) -> None:
    tree = make_suite(tmp_path / "t", {"bench_io": """
    import time

    def time_wait():
        time.sleep(0.005)
    time_wait.number = 1
    time_wait.repeat = 2
    time_wait.warmup_time = 0.0
    """})
    wall = min(run_time(tree, "--timer", "wall")["samples"]["bench_io.time_wait"])
    cpu = min(run_time(tree, "--timer", "process_cpu")["samples"]["bench_io.time_wait"])
    assert wall >= 0.005 and cpu < 0.002


AFFINITY = """
import os

def track_cpus():
    return len(os.sched_getaffinity(0))

def track_blas_threads():
    return int(os.environ.get("OPENBLAS_NUM_THREADS", "0"))

class Work:
    params = [1, 2]
    number = 1
    repeat = 1
    warmup_time = 0.0

    def time_sum(self, n):
        sum(range(1000 * n))
"""


def _grade(tmp_path: Path, settings: GradeSettings) -> dict:
    tree = git_repo(make_suite(tmp_path / "repo", {"bench_env": AFFINITY}))
    return grade_local(tree, "", {}, settings, tmp_path / "work")


@pytest.mark.skipif(shutil.which("taskset") is None or len(os.sched_getaffinity(0)) < 2,
                    reason="needs taskset and two CPUs")
@pytest.mark.slow
def test_wall_timer_runs_on_the_declared_cpu_set_with_that_many_threads(tmp_path: Path) -> None:
    wall = _grade(tmp_path / "w", GradeSettings(rounds=1, repeat=1, timer="wall", cpus=2))
    base = wall["trees"]["baseline"]["samples"]
    assert base["bench_env.track_cpus"] == [2.0] and base["bench_env.track_blas_threads"] == [2.0]
    assert wall["cpu_plan"]["threads"] == 2
    cpu = _grade(tmp_path / "c", GradeSettings(rounds=1, repeat=1, timer="process_cpu",
                                               cpus=2))
    base = cpu["trees"]["baseline"]["samples"]
    assert base["bench_env.track_cpus"] == [1.0] and base["bench_env.track_blas_threads"] == [1.0]


@pytest.mark.slow
def test_rounds_calibrate_until_the_cv_target_and_record_it(tmp_path: Path) -> None:
    never = _grade(tmp_path / "n", GradeSettings(rounds=2, repeat=1, max_rounds=4,
                                                 cv_target=0.0))
    assert never["rounds"] == 4 and never["min_rounds"] == 2
    base = never["trees"]["baseline"]
    timed = [wl for wl in base["round_medians"] if ".time_" in wl]
    assert timed and all(len(base["round_medians"][wl]) == 4 for wl in timed)
    assert all(base["cv"][wl] >= 0 for wl in timed)  # achieved CV recorded per workload
    # track values never vary: their CV is 0, so no calibration round re-timed them
    assert base["round_medians"]["bench_env.track_cpus"][2:] == [None, None]
    met = _grade(tmp_path / "m", GradeSettings(rounds=2, repeat=1, max_rounds=4,
                                               cv_target=10.0))
    assert met["rounds"] == 2
    assert all(base["dispersion"][wl] == pytest.approx(base["cv"][wl] * 2) for wl in timed
               if base["cv"][wl] > 0)  # the value's CV: dispersion / sqrt(4 rounds)


def test_every_timing_run_gets_a_seeded_layout_of_its_own() -> None:
    env = {"A": "1"}
    one = fc_grade.layout_env(env, 0, 3, "expert")
    assert one == fc_grade.layout_env(env, 0, 3, "expert")  # a rerun repeats it
    assert one["A"] == "1" and set(one) == {"A", "FC_LAYOUT_SEED", "FC_ENV_PAD"}
    draws = [fc_grade.layout_env(env, 0, r, name) for r in range(8)
             for name in ("baseline", "expert")]
    pads = {len(d["FC_ENV_PAD"]) for d in draws}
    assert len({d["FC_LAYOUT_SEED"] for d in draws}) == 16 and len(pads) > 8
    assert all(0 <= n < 4096 for n in pads)
    assert fc_grade.layout_env(env, 1, 3, "expert") != one  # another run seed, other layouts


def test_heap_padding_is_seeded() -> None:
    fc_bench = load_runtime("fc_bench")
    kept = [fc_bench.shift_layout(s) for s in (1, 1, 2)]
    assert kept[0] == kept[1] != kept[2] and kept[0] > 0


@pytest.mark.slow
def test_trees_are_timed_at_equal_length_paths_with_layout_seeds(tmp_path: Path) -> None:
    out = _grade(tmp_path, GradeSettings(rounds=1, repeat=1))
    assert out["layout_seed"] == 0
    timed = tmp_path / "work" / "trees" / "trees"  # grade_local's work dir, then the runtime's
    trees = sorted(p.name for p in timed.iterdir() if p.is_dir())
    assert len(trees) == len(out["trees"]) and {len(t) for t in trees} == {2}


def test_workload_cv_is_the_relative_standard_error_of_its_rounds() -> None:
    from environments.formulacode import metrics

    tree = {"round_medians": {"a": [1.0, 1.1, 0.9, 1.0], "b": [2.0, None, 2.0], "c": [1.0]}}
    disp = metrics.workload_dispersions(tree)
    assert disp["a"] == pytest.approx(0.0816496580927726) and disp["b"] == 0.0
    assert "c" not in disp  # one round: no dispersion
    cvs = metrics.workload_cvs(tree)
    assert cvs["a"] == pytest.approx(disp["a"] / 2) and cvs["b"] == 0.0
    assert metrics.round_cv(tree) == pytest.approx(disp["a"] / 2)  # median of a and b
