"""A real Inspect eval on the bwrap sandbox: Inspect's own ``bash()`` and ``python()``
tools, sample files, a scorer reading the sandbox, a limits file, and cleanup.

The solver calls the tools directly and never ``generate``s, so ``mockllm/model`` is
never asked for a completion (offline it would need tiktoken's download).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import bash, python
from inspect_ai.util import sandbox, store

from harness.sandbox import bwrap as bwrap_module
from harness.sandbox.bwrap import bwrap_available

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot start here"),
]


@solver
def call_tools():  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        store().set("bash", await bash()("echo hi from $(id -un) in $(pwd)"))
        store().set("python", await python()("import os; print(1 + 1, os.getcwd())"))
        store().set("sample_file", await sandbox().read_file("given.txt"))
        store().set("work_dir", str(sandbox().as_type(bwrap_module.BwrapSandboxEnvironment)
                                    .work_dir))  # fmt: skip
        big = await python()("b = bytearray(300 * 2**20); print('allocated')")
        store().set("big", big)
        await bash()("echo 42 > answer.txt")
        return state

    return solve


@scorer(metrics=[accuracy()])
def answer_file():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        answer = (await sandbox().read_file("answer.txt")).strip()
        return Score(value=CORRECT if answer == target.text else INCORRECT, answer=answer)

    return score


def test_inspect_eval_with_bash_and_python_tools(tmp_path: Path) -> None:
    limits = tmp_path / "limits.yaml"
    limits.write_text("memory_bytes: 200M\ntimeout_s: 60\n")
    task = Task(
        dataset=[Sample(input="go", target="42", files={"given.txt": "from the sample"})],
        solver=call_tools(),
        scorer=answer_file(),
        sandbox=("bwrap", str(limits)),
    )
    [log] = eval(task, model="mockllm/model", log_dir=str(tmp_path / "logs"),
                 display="none", log_format="json")  # fmt: skip
    assert log.status == "success", log.error
    assert log.samples is not None
    sample = log.samples[0]
    assert sample.error is None, sample.error
    assert sample.store["bash"] == "hi from sandbox in /sandbox\n"
    assert sample.store["python"] == "2 /sandbox\n"
    assert sample.store["sample_file"] == "from the sample"
    assert "MemoryError" in sample.store["big"]  # the 200M limit from limits.yaml applied
    assert sample.scores is not None
    assert sample.scores["answer_file"].value == CORRECT
    assert not Path(sample.store["work_dir"]).exists()  # sample cleanup removed it
