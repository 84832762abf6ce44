"""The offline pack: size, labels, patches that apply, distinct ids."""

from __future__ import annotations

import subprocess
from pathlib import Path

from environments.formulacode.pack import PACK_DIR, materialize, pack_records
from environments.formulacode.records import CLASSIFICATIONS, load_records


def test_at_least_twenty_tasks_with_valid_labels_and_unique_ids() -> None:
    records = load_records("pack")
    assert len(records) >= 20
    assert len({r.task_id for r in records}) == len(records)
    assert all(r.classification in CLASSIFICATIONS and r.classification != "uncategorized"
               for r in records)
    assert len({r.classification for r in records}) >= 6
    assert [r.pr_merged_at for r in records] == sorted(r.pr_merged_at for r in records)


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
