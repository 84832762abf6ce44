"""The inspect_ai entry point: tasks as harness/<name>, model APIs and sandboxes by name."""

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai._util.registry import registry_find


def test_task_runs_by_registered_name_after_install(tmp_path: Path) -> None:
    logs = inspect_eval("harness/arithmetic", model="scripted/arith-oracle",
                        task_args={"n": 3}, log_dir=str(tmp_path), display="none")
    assert logs[0].status == "success"
    assert logs[0].eval.task == "harness/arithmetic"


def test_task_runs_from_the_repo_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # as a user types it in the repo: `inspect eval benchmarks/arithmetic` (relative path)
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    logs = inspect_eval("benchmarks/arithmetic", model="scripted/arith-oracle",
                        task_args={"n": 2}, log_dir=str(tmp_path), display="none")
    assert logs[0].status == "success"


def test_sandbox_and_model_apis_are_registered() -> None:
    import harness._registry  # noqa: F401

    names = {o.__registry_info__.name for o in registry_find(
        lambda info: info.type in ("modelapi", "sandboxenv"))}
    assert {"harness/scripted", "harness/embedded", "harness/bwrap"} <= names


def test_every_listed_benchmark_folder_exists_and_holds_its_task() -> None:
    from harness.inventory import inventory
    from harness.tasks import BENCHMARKS

    repo = Path(__file__).parents[2]
    for entry in inventory()["benchmarks"]:
        folder = repo / entry["path"]
        assert folder.is_dir(), entry
        module = BENCHMARKS[entry["name"]].split(":")[0]
        assert (repo / (module.replace(".", "/") + ".py")).parent == folder
