"""FormulaCode: agents optimise real-world-style Python code, graded on measured speedups.

FormulaCode (formulacode.org; the ``formulacode-all`` dataset, 957 tasks mined from merged
performance PRs of scientific-Python repositories) gives an agent a repository at a PR's
base commit and the problem statement; the grader applies the agent's diff, gates it on the
repository's tests and on benchmark return values, and times the repository's asv
benchmarks against the base and the maintainers' patch. The headline metric is the
advantage over the expert (mean over tasks of G(agent speedups) - G(expert speedups)).

This task runs the project's offline pack (25 small scientific-Python packages of our own,
each with a genuine bottleneck, in the real record schema) in a docker sandbox built from
the offline base image, or a real dataset file when its images can be pulled.

    inspect eval benchmarks/formulacode --model none \\
        --solver benchmarks/formulacode/agents.py@oracle --limit 3
    inspect eval benchmarks/formulacode --model none --solver benchmarks/formulacode/agents.py@noop
    inspect eval benchmarks/formulacode --model embedded/smollm2-135m -T rounds=3
    inspect eval benchmarks/formulacode -T dataset=PATH.parquet --model openai/...   # real tasks
    inspect eval benchmarks/formulacode -T checkpoint=turns --model <local model>  # then, if
    inspect eval-retry <log>       # it dies mid-episode: each sample resumes at its last turn
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from inspect_ai import Task, task
from inspect_ai.agent import as_solver, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import bash, python, text_editor
from inspect_ai.util import SandboxEnvironmentSpec, sandbox

from benchmarks.formulacode.checkpoint import (
    SAMPLE_CHECKPOINT,
    restore_workspace,
    save_workspace,
)
from benchmarks.formulacode.prompts import render
from benchmarks.formulacode.scorer import formulacode_scorer, install_runtime
from environments.formulacode.images import (
    REPOS_IN_IMAGE,
    WORKDIR,
    ensure_family_image,
    image_available,
)
from environments.formulacode.pack import BASE_REF
from environments.formulacode.records import TaskRecord, load_records
from harness.checkpoint_option import checkpoint_config
from harness.plugins.benchmark import benchmark
from harness.tool_validity import tool_call_validity

COMPOSE = Path(__file__).parent / "compose.yaml"
DEFAULT_DATASET = "pack"
DEFAULT_ROUNDS = 5
DEFAULT_REPEAT = 3
DEFAULT_MAX_ROUNDS = 10  # calibration: extra rounds for workloads above the CV target
DEFAULT_SAMPLE_BUDGET = 1.0  # seconds per workload per round for CV-targeted repeats
DEFAULT_TIME_LIMIT = 6 * 3600  # the Harbor adapter's agent budget (spec §4)
DEFAULT_CPUS = 2.0
DEFAULT_MEMORY = "4g"
DEFAULT_CHECKPOINT = "off"
"""Off unless asked: each checkpoint costs a git diff in the sandbox plus a host restic
backup, and Inspect needs restic (see README). ``turns`` is for episodes of local models
that run for minutes or hours."""


def record_to_sample(record: TaskRecord) -> Sample:
    """One task record as a sample: rendered instruction, every record field as metadata."""
    meta: dict[str, Any] = {k: v for k, v in record.to_dict().items() if k != "extra"}
    meta.update(record.extra)
    return Sample(id=record.task_id, input=render(record.final_md), metadata=meta,
                  checkpoint=SAMPLE_CHECKPOINT)


@solver
def prepare_repo() -> Solver:
    """Put the task's repository at /workspace/repo with its base commit tagged fc-base,
    and install the benchmark runner the instructions mention."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        slug = state.metadata.get("pack_slug")
        if slug:
            done = await sandbox().exec(["cp", "-a", f"{REPOS_IN_IMAGE}/{slug}", WORKDIR])
            if not done.success:
                raise RuntimeError(f"cannot prepare {slug}: {done.stderr}")
        else:  # published images hold the repo at the base commit already
            await sandbox().exec(["git", "tag", "-f", BASE_REF, "HEAD"], cwd=WORKDIR)
        await install_runtime()
        return state

    return solve


def _compose_for_image(image: str, cpus: float, memory: str) -> str:
    """A compose file for a published task image (same policy as compose.yaml)."""
    doc = yaml.safe_load(COMPOSE.read_text())
    svc = doc["services"]["default"]
    svc.update(image=image, cpus=cpus, mem_limit=memory, working_dir=WORKDIR)
    svc.pop("x-local", None)
    path = Path(tempfile.mkdtemp(prefix="fc-compose-")) / "compose.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def default_agent() -> Solver:
    """A ReAct agent with a shell, Python and a text editor in the sandbox."""
    return as_solver(react(
        prompt="You are a performance engineer. Work in /workspace/repo with the tools.",
        tools=[bash(timeout=600), python(timeout=600), text_editor()],
    ))


@benchmark("formulacode")
@task
def formulacode(
    dataset: str = DEFAULT_DATASET,
    tasks: str | list[str] | None = None,
    rounds: int = DEFAULT_ROUNDS,
    repeat: int = DEFAULT_REPEAT,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    sample_budget: float = DEFAULT_SAMPLE_BUDGET,
    timer: str = "task",
    time_limit: int = DEFAULT_TIME_LIMIT,
    cpus: float = DEFAULT_CPUS,
    memory: str = DEFAULT_MEMORY,
    checkpoint: str | int | bool | None = DEFAULT_CHECKPOINT,
) -> Task:
    """FormulaCode performance-optimisation tasks scored by measured advantage over the expert.

    Args:
        dataset: ``pack`` (the offline pack), a local parquet/JSONL file, or a hub dataset id
            (downloads; real tasks need their published images, see README).
        tasks: Comma-separated task ids or pack slugs to keep (default: all).
        rounds: Interleaved timing rounds (baseline/expert/agent per round; spec: >= 5).
        repeat: Timing samples per workload per round.
        max_rounds: Rounds at most, counting calibration rounds (extra rounds re-time only
            the workloads whose CV is still above 2%); ``rounds`` turns calibration off.
        sample_budget: Seconds per workload per round spent on CV-targeted repeats (a
            smoke run can lower it; the default is the measurement setting).
        timer: ``task`` (each task's declared ``measure``: ``cycles`` or ``wall``; older
            records' ``timer``), ``cycles`` (callgrind-simulated cycles: deterministic
            under any load, one thread; needs valgrind in the sandbox), ``process_cpu``
            (CPU time on one pinned CPU) or ``wall`` (wall clock on the task's CPU set).
        time_limit: Agent wall-clock limit in seconds.
        cpus: CPU limit of the sandbox (pack tasks; compose.yaml carries 2.0).
        memory: Memory limit of the sandbox.
        checkpoint: Mid-sample checkpoints (Inspect's): ``off`` (default), ``turns``
            (every agent turn), ``turns:N`` or ``N`` (every N turns), ``<N>s``/``<N>m``
            (wall time). A killed run resumes each sample at its last checkpoint with
            ``inspect eval-retry``, its repository edits re-applied (``checkpoint.py``).
    """
    checkpoint_layer = checkpoint_config(checkpoint)
    records = load_records(dataset)
    if tasks:
        # Inspect splits ``-T tasks=a,b`` into a list; a Python caller may pass "a,b"
        names = tasks if isinstance(tasks, list) else tasks.split(",")
        keep = {str(t).strip() for t in names}
        records = [r for r in records if r.task_id in keep or r.extra.get("pack_slug") in keep]
    samples = [record_to_sample(r) for r in records]
    if dataset == DEFAULT_DATASET:
        os.environ["FORMULACODE_IMAGE"] = ensure_family_image()
        task_sandbox: Any = ("docker", str(COMPOSE))
    else:
        present = [s for s in samples if image_available(str((s.metadata or {})["image_name"]))]
        if not present:
            raise RuntimeError(
                f"none of the {len(samples)} task images is available locally and no registry "
                "is reachable here: `docker pull formulacode/all:<tag>` them on a connected "
                "machine (see benchmarks/formulacode/README.md), or use dataset=pack"
            )
        for s in present:
            image = str((s.metadata or {})["image_name"])
            s.sandbox = SandboxEnvironmentSpec("docker", _compose_for_image(image, cpus, memory))
        samples, task_sandbox = present, None
    return Task(
        dataset=MemoryDataset(samples, name=f"formulacode-{Path(dataset).stem}"),
        setup=prepare_repo(),
        solver=default_agent(),
        scorer=[formulacode_scorer(rounds=rounds, repeat=repeat, timer=timer,
                                   max_rounds=max_rounds, sample_budget=sample_budget),
                tool_call_validity()],
        sandbox=task_sandbox,
        time_limit=time_limit,
        checkpoint=checkpoint_layer,
        on_checkpoint=save_workspace,
        on_resume=restore_workspace,
        version="2.2.1",
        metadata={"benchmark": "formulacode"},
    )
