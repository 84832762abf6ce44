"""The offline pack: size, labels, timers, workload counts, patches that apply, distinct ids."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from environments.formulacode.grader import RUNTIME_DIR, TIMERS
from environments.formulacode.pack import PACK_DIR, materialize, pack_records, pack_slugs
from environments.formulacode.records import CLASSIFICATIONS, load_records

# what each task's optimisation is (task.json "kind"); the issue asks for several of each
KINDS = {"parallelism", "vectorisation", "caching", "io", "algorithmic", "memory",
         "data_structure", "micro", "reduce_work", "batching", "higher_level"}


def _meta(slug: str) -> dict:
    return dict(json.loads((PACK_DIR / slug / "task.json").read_text()))


def test_twenty_five_tasks_with_valid_labels_and_unique_ids() -> None:
    records = load_records("pack")
    assert len(records) == 25
    assert len({r.task_id for r in records}) == len(records)
    assert all(r.classification in CLASSIFICATIONS and r.classification != "uncategorized"
               for r in records)
    assert len({r.classification for r in records}) >= 8
    assert [r.pr_merged_at for r in records] == sorted(r.pr_merged_at for r in records)
    assert len({r.pr_number for r in records}) == len(records)


def test_every_task_declares_its_label_kind_and_timer() -> None:
    kinds: dict[str, list[str]] = {}
    for slug in pack_slugs():
        meta = _meta(slug)
        assert meta["classification"] in CLASSIFICATIONS, slug
        assert meta["kind"] in KINDS, slug
        assert meta["timer"] in TIMERS, slug
        if meta["timer"] == "wall":
            assert isinstance(meta.get("cpus"), int) and meta["cpus"] >= 1, slug
        else:
            assert "cpus" not in meta, slug
        kinds.setdefault(meta["kind"], []).append(slug)
    for kind in ("parallelism", "vectorisation", "caching", "io", "algorithmic", "memory"):
        assert len(kinds.get(kind, [])) >= 2, kind
    # a parallel optimisation is only visible on the wall clock over more than one CPU
    assert all(_meta(s)["timer"] == "wall" and _meta(s)["cpus"] >= 2
               for s in kinds["parallelism"])
    assert all(_meta(s)["classification"] == "use_parallelization" for s in kinds["parallelism"])
    # I/O hiding (prefetch, logwrite, remotefetch): wall-timed, labelled as the paper does
    assert sorted(kinds["io"]) == ["logwrite", "prefetch", "remotefetch"]
    assert all(_meta(s)["timer"] == "wall" and _meta(s)["classification"]
               == "io_and_latency_hiding" for s in kinds["io"])
    assert {k: len(v) for k, v in kinds.items()} == {
        "parallelism": 4, "io": 3, "vectorisation": 2, "caching": 3, "algorithmic": 4,
        "memory": 2, "data_structure": 2, "micro": 2, "reduce_work": 1, "batching": 1,
        "higher_level": 1}


def test_records_carry_the_tasks_kind_and_timer() -> None:
    for record in pack_records():
        meta = _meta(record["pack_slug"])
        assert record["kind"] == meta["kind"] and record["timer"] == meta["timer"]


def _workloads(slug: str) -> list[str]:
    repo = PACK_DIR / slug / "repo"
    done = subprocess.run([sys.executable, str(RUNTIME_DIR / "fc_bench.py"), "list", str(repo)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, (slug, done.stderr[-800:])
    return list(json.loads(done.stdout))


@pytest.mark.slow
def test_every_task_has_at_least_ten_workloads_and_memory_tasks_measure_peak_memory() -> None:
    for slug in pack_slugs():
        names = _workloads(slug)
        assert len(names) >= 10, (slug, len(names))
        assert len(names) == len(set(names)), slug
        if _meta(slug)["kind"] == "memory":
            assert any(".peakmem_" in n for n in names), slug


def test_every_task_has_nested_parameterised_benchmarks_and_tests() -> None:
    for record in pack_records():
        repo = PACK_DIR / record["pack_slug"] / "repo"
        bench = list((repo / "benchmarks").glob("bench_*.py"))
        assert bench and any("params" in p.read_text() and "class " in p.read_text()
                             for p in bench)
        assert list((repo / "tests").glob("test_*.py"))


def test_expert_patches_apply_to_the_base_commit(tmp_path: Path) -> None:
    for record in pack_records():
        repo = materialize(record["pack_slug"], tmp_path / record["pack_slug"])
        patch = tmp_path / f"{record['pack_slug']}.patch"
        patch.write_text(record["patch"])
        done = subprocess.run(["git", "apply", "--check", str(patch)], cwd=repo,
                              capture_output=True, text=True)
        assert done.returncode == 0, (record["task_id"], done.stderr)
        assert "benchmarks/" not in record["patch"] and "tests/" not in record["patch"]


def test_environment_never_imports_inspect() -> None:
    root = Path(__file__).parents[3] / "environments" / "formulacode"
    for path in root.rglob("*.py"):
        if "taskpack" not in path.parts:
            assert "inspect_ai" not in path.read_text(), path
