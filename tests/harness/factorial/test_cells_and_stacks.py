"""Cells and stacks: solver levels through the registry, stacks as runners registered by name.

No model runs here: a throw-away stack records the cells it is handed, so dispatch by name,
skipping and the errors a user sees are checked without evaluating anything.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness import registry
from harness.factorial.cells import resolve_solver
from harness.factorial.run import plan, run_study
from harness.factorial.study import Cell, StudyError, load_study
from harness.plugins.stack import StackJob, StackRunner, get_stack, stack_names, stack_runner

CALLS: list[tuple[str, list[str], StackJob]] = []


def _study(tmp_path: Path, stacks: Sequence[str]) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: stacks
        response:
          tasks: [{{name: harness/arithmetic, args: {{n: 2}}}}]
        factors:
          - name: model
            binds_to: model
            levels: [scripted/arith-oracle]
          - name: stack
            binds_to: stack
            levels: [{", ".join(stacks)}]
        """))
    return path


@pytest.fixture
def recording_stack() -> Iterator[str]:
    @stack_runner("test-recorder", summary="records the cells it is handed")
    class Recorder:
        def run(self, cells: Sequence[Cell], job: StackJob) -> None:
            CALLS.append(("test-recorder", [c.id for c in cells], job))

    CALLS.clear()
    yield "test-recorder"
    registry.unregister("stack", "test-recorder")


def test_builtin_stacks_are_registered_runners() -> None:
    assert {"inspect", "lm-eval"} <= set(stack_names())
    assert isinstance(get_stack("inspect"), StackRunner)
    assert registry.get("stack", "lm-eval").extra == "lmeval"


def test_run_study_hands_each_stack_its_cells(tmp_path: Path, recording_stack: str) -> None:
    study_path = _study(tmp_path, [recording_stack])
    summary = run_study(study_path, log_dir=tmp_path / "logs", max_tasks=3, max_samples=1)
    cells = load_study(study_path).cells()
    assert [(name, ids) for name, ids, _ in CALLS] == [(recording_stack, [c.id for c in cells])]
    job = CALLS[0][2]
    assert job.log_dir == str(tmp_path / "logs") and job.max_tasks == 3
    assert job.eval_kwargs == {"max_samples": 1} and job.study.name == "stacks"
    # the recorder wrote no log, so its cell is reported as failed, not as done
    assert summary.failed == [c.id for c in cells] and not summary.success


def test_unknown_stack_is_an_error_naming_the_registered_ones(tmp_path: Path) -> None:
    study_path = _study(tmp_path, ["helm"])
    with pytest.raises(StudyError, match=r"unknown stack 'helm'; registered: .*inspect.*lm-eval"):
        run_study(study_path, log_dir=tmp_path / "logs")
    with pytest.raises(StudyError, match="unknown stack 'helm'"):
        plan(load_study(study_path), tmp_path / "logs")
    assert not (tmp_path / "logs").exists()


def test_missing_lmeval_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.EXTRAS, "lmeval", ("no_such_module_for_this_test",))
    with pytest.raises(registry.MissingExtraError, match=r"pip install 'harness\[lmeval\]'"):
        get_stack("lm-eval")
    study_path = _study(tmp_path, ["lm-eval"])
    with pytest.raises(registry.MissingExtraError, match=r"pip install 'harness\[lmeval\]'"):
        run_study(study_path, log_dir=tmp_path / "logs")


def _factory(**kwargs: Any) -> dict[str, Any]:
    return {"built_with": kwargs}


def test_solver_levels_resolve_by_registered_name_or_import_path() -> None:
    registry.register("agent", "test-throwaway-agent", _factory)
    try:
        built = resolve_solver({"name": "test-throwaway-agent", "args": {"k": 2}})
        assert built == {"built_with": {"k": 2}}
    finally:
        registry.unregister("agent", "test-throwaway-agent")
    target = f"{__name__}:_factory"
    assert resolve_solver({"name": target, "args": {"k": 3}}) == {"built_with": {"k": 3}}
    with pytest.raises(registry.RegistryError, match="unknown agent 'no-such-agent'"):
        resolve_solver("no-such-agent")
