"""The inspect_ai entry point: tasks as harness/<name>, model APIs and sandboxes by name."""

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from harness import registry
from harness.inspect_compat import registry_names


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

    names = set(registry_names("modelapi")) | set(registry_names("sandboxenv"))
    assert {"harness/scripted", "harness/embedded", "harness/bwrap"} <= names


def test_every_listed_benchmark_folder_exists_and_holds_its_task() -> None:
    from harness.inventory import inventory

    repo = Path(__file__).parents[2]
    listed = inventory()["benchmarks"]
    assert {row["name"] for row in listed} >= {
        "arithmetic", "causalgame", "worldtravel", "worldtravel_webscape", "formulacode",
        "medversa", "passkey", "circle_packing", "first_autocorrelation"}
    for row in listed:
        folder = repo / row["path"]
        assert folder.is_dir(), row
        assert registry.get("benchmark", row["name"]).meta["folder"] == folder.resolve()
        assert row["task"] == f"harness/{row['name']}"


def test_every_benchmark_is_a_harness_task_inspect_can_list() -> None:
    import harness._registry  # noqa: F401

    tasks = set(registry_names("task"))
    for name in registry.names("benchmark"):
        assert f"harness/{name}" in tasks or name in tasks, name


def test_methods_and_editors_resolve_through_the_one_registry() -> None:
    from harness.plugins.editor import make_editor
    from harness.plugins.whitebox_method import resolve_method

    assert {"react", "react-memory", "lightwm", "thetaevolve"} <= set(registry.names("agent"))
    assert {"none", "ike", "retrieval", "medrek"} <= set(registry.names("editor"))
    assert {"esamp", "xkv", "arborkv", "scd"} <= set(registry.names("whitebox_method"))
    assert make_editor("ike").retrieve(["q"]) == [None]
    assert type(resolve_method("esamp")).__name__ == "ESamp"
    with pytest.raises(ValueError, match="registered: .*ike"):
        make_editor("no-such-editor")


# ---------------------------------------------------------------- adding one of each kind


def test_a_throwaway_benchmark_agent_method_and_editor_are_one_decorator_each(
    tmp_path: Path,
) -> None:
    """Adding a benchmark, an agent, a model method and an editor is one module with one
    decorator each: the module below is all it takes for harness list, the study runner's
    solver lookup, -M method= and -T editor= to find them, and for Inspect to run the task."""
    module = tmp_path / "throwaway_plugin.py"
    module.write_text(
        '"""A throw-away plugin."""\n'
        "from inspect_ai import Task, task\n"
        "from inspect_ai.dataset import Sample\n"
        "from inspect_ai.scorer import match\n"
        "from inspect_ai.solver import generate, solver\n"
        "from harness.plugins.editor import Editor, editor\n"
        "from harness.plugins.whitebox_method import Method, whitebox_method\n"
        "from harness.registry import agent_method\n"
        "from harness.plugins.benchmark import benchmark\n\n"
        '@benchmark("throwaway_bench")\n'
        "@task\n"
        "def throwaway_bench() -> Task:\n"
        '    """Answer 4."""\n'
        '    return Task(dataset=[Sample(input="2+2?", target="4")], scorer=match())\n\n'
        '@agent_method("throwaway-agent")\n'
        "@solver\n"
        "def throwaway_agent():\n"
        '    """Just generate."""\n'
        "    return generate()\n\n"
        '@whitebox_method("throwaway-method", extra=None)\n'
        "class ThrowawayMethod(Method):\n"
        '    """Changes nothing."""\n\n'
        '@editor("throwaway-editor")\n'
        "class ThrowawayEditor(Editor):\n"
        '    """Never retrieves."""\n'
        "    def retrieve(self, queries):\n"
        "        return [None for _ in queries]\n"
    )
    import importlib
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        importlib.import_module("throwaway_plugin")
        from inspect_ai import eval as run_eval

        from harness.factorial.cells import resolve_solver
        from harness.inventory import inventory
        from harness.plugins.editor import make_editor
        from harness.plugins.whitebox_method import resolve_method

        inv = inventory()
        assert "throwaway_bench" in {r["name"] for r in inv["benchmarks"]}
        assert {"throwaway-agent", "throwaway-method", "throwaway-editor"} <= {
            r["name"] for r in inv["methods"]}
        assert type(resolve_method("throwaway-method")).__name__ == "ThrowawayMethod"
        assert make_editor("throwaway-editor").retrieve(["q"]) == [None]
        assert resolve_solver("throwaway-agent") is not None
        logs = run_eval("harness/throwaway_bench", model="scripted/fixed",
                        model_args={"answer": "4"}, log_dir=str(tmp_path / "logs"),
                        display="none")
        assert logs[0].status == "success"
        assert logs[0].results is not None
        assert logs[0].results.scores[0].metrics["accuracy"].value == 1.0
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("throwaway_plugin", None)
        for kind, name in [("benchmark", "throwaway_bench"), ("agent", "throwaway-agent"),
                           ("whitebox_method", "throwaway-method"),
                           ("editor", "throwaway-editor")]:
            registry.unregister(kind, name)  # type: ignore[arg-type]


def test_a_name_taken_by_another_module_is_an_error() -> None:
    def impostor() -> None:
        """Not the arithmetic benchmark."""

    with pytest.raises(registry.RegistryError, match="registered twice"):
        registry.register("benchmark", "arithmetic", impostor)


def test_a_missing_extra_names_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.EXTRAS, "web", ("surely_not_an_installed_module",))
    with pytest.raises(registry.MissingExtraError, match=r"pip install 'harness\[web\]'"):
        registry.require_extra("web", "the Webscape browser")
    entry = registry.get("benchmark", "worldtravel_webscape")
    assert entry.status == "needs pip install 'harness[web]'"
