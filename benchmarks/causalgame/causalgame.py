"""CausalGame: can an agent find the cause of drone losses by experiment, past the traps?

Re-implementation of the CausalGame benchmark (drone design under hidden confounders,
selection bias, Simpson's paradox, environment shift and noise; 14 scenarios). The agent
explores with up to 200 Stage-1 drones in <= 10 deploys, then submits one design that
1,000 fresh drones fly (Stage 2); it wins at the scenario's survival threshold.
Spec and published numbers: see this folder's README.md.

    inspect eval benchmarks/causalgame/causalgame.py@causalgame_all --model embedded/smollm2-135m
    inspect eval benchmarks/causalgame/causalgame.py@antenna_trap --model none \\
        --solver benchmarks/causalgame/agents.py@oracle
    inspect eval harness/causalgame --model scripted/causalgame-experimenter -T compat=original
"""

from __future__ import annotations

import functools
import json
import tempfile
import zlib
from pathlib import Path
from typing import Any, Literal

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from benchmarks.causalgame.agent import causalgame_agent
from benchmarks.causalgame.scorer import causalgame_scorer, keep_epochs
from benchmarks.causalgame.session import start_game
from benchmarks.causalgame.tools import ANALYSIS_TIMEOUT_S, game_tools
from environments.causalgame.scenarios import _raw_scenarios, scenario_ids
from harness.tool_validity import tool_call_validity

DEFAULT_SEED = 0
DEFAULT_EPOCHS = 3
DEFAULT_COMPAT: Literal["intended", "original"] = "intended"
DEFAULT_ARCHIVIST: Literal["matcher", "model"] = "matcher"
DEFAULT_SANDBOX: str | None = "bwrap"


def record_to_sample(record: dict[str, Any]) -> Sample:
    """A scenario file record as a sample (the game itself is built by ``start_game``)."""
    return Sample(
        id=str(record["id"]),
        input=f"CausalGame scenario {record['index']}: {record['title']}",
        metadata={
            "scenario": record["id"],
            "family": record["family"],
            "threshold": float(record["threshold"]),
            "hide_failed": bool(record["hide_failed"]),
            "hidden_confounder": bool(record["hidden_confounder"]),
        },
    )


@functools.cache
def _python_path() -> str:
    import numpy

    return str(Path(numpy.__file__).resolve().parents[1])


@functools.cache
def _system_python_has_pandas() -> bool:
    """Whether the system ``python3`` (what a bwrap sandbox runs) imports numpy and pandas."""
    import shutil
    import subprocess

    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        return False
    try:
        done = subprocess.run([python, "-c", "import numpy, pandas"], capture_output=True,
                              timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def analysis_sandbox() -> tuple[str, str]:
    """bwrap running the system Python with numpy/pandas, a 10 s limit.

    The system's own packages (Debian's python3-numpy / python3-pandas, which `.ci/system.sh`
    installs) are used when present: they sit under the read-only /usr every sandbox sees.
    Otherwise the host's numpy/pandas are bound read-only on PYTHONPATH, which needs that
    folder to be readable by the sandbox's unprivileged user.

    The config goes to a temp JSON file (Inspect hashes sandbox specs, and a config object
    holding lists is unhashable); its content depends only on where numpy is installed.
    """
    env = {"OPENBLAS_NUM_THREADS": "1", "MPLCONFIGDIR": "/tmp"}
    binds: list[str] = []
    if not _system_python_has_pandas():
        site = _python_path()
        binds, env = [site], {**env, "PYTHONPATH": site}
    config = {
        "timeout_s": ANALYSIS_TIMEOUT_S,
        "cpu_s": ANALYSIS_TIMEOUT_S,
        "memory_bytes": "2GiB",
        "ro_binds": binds,
        "env": env,
    }
    text = json.dumps(config, sort_keys=True)
    path = Path(tempfile.gettempdir()) / f"causalgame-bwrap-{zlib.crc32(text.encode()):08x}.json"
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return ("bwrap", str(path))


def causalgame_task(
    scenarios: list[str],
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
    name: str = "causalgame",
) -> Task:
    """The task over ``scenarios`` (shared by the per-scenario tasks and the all-14 task)."""
    if compat not in ("intended", "original"):
        raise ValueError(f"compat must be 'intended' or 'original', got {compat!r}")
    if archivist not in ("matcher", "model"):
        raise ValueError(f"archivist must be 'matcher' or 'model', got {archivist!r}")
    unknown = sorted(set(scenarios) - set(scenario_ids()))
    if unknown:
        raise ValueError(f"unknown scenarios {unknown}; known: {scenario_ids()}")
    records = _raw_scenarios()
    samples = [record_to_sample(records[s]) for s in scenarios]
    with_sandbox = sandbox is not None and sandbox != "none"
    from inspect_ai.solver import use_tools

    return Task(
        dataset=MemoryDataset(samples, name=name),
        setup=[
            start_game(
                seed=seed,
                compat=compat,
                enforce_ranges=enforce_ranges,
                enforce_budget=enforce_budget,
            ),
            use_tools(game_tools(with_analysis=with_sandbox, archivist=archivist)),
        ],
        solver=causalgame_agent(),
        scorer=[causalgame_scorer(), tool_call_validity()],
        epochs=Epochs(epochs, keep_epochs()),
        sandbox=(analysis_sandbox() if sandbox == "bwrap" else sandbox) if with_sandbox else None,
        version="1.0.0",
        metadata={"benchmark": "causalgame", "compat": compat, "seed": seed},
    )


@task
def causalgame_all(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
    scenarios: str | list[str] | None = None,
) -> Task:
    """All 14 scenarios, one sample each (scenario in the sample metadata).

    Args:
        seed: Episode seed (same seed, same games, same Stage-2 fleets).
        epochs: Trials per scenario (the paper uses 3; metrics give a t interval).
        compat: ``intended`` (defects fixed) or ``original`` (the released behaviour).
        archivist: ``matcher`` (deterministic) or ``model`` (the ``archivist`` model role).
        sandbox: ``bwrap`` for the Python analysis tool, or ``none`` to drop that tool.
        enforce_ranges: Reject DEF outside the advertised range (default: on in intended).
        enforce_budget: Reject designs whose total DEF exceeds the advertised budget.
        scenarios: Comma-separated subset of scenario ids (default: all 14).
    """
    if isinstance(scenarios, list):  # Inspect splits ``-T scenarios=a,b`` into a list
        scenarios = ",".join(scenarios)
    chosen = [s.strip() for s in scenarios.split(",")] if scenarios else scenario_ids()
    return causalgame_task(
        chosen, seed, epochs, compat, archivist, sandbox, enforce_ranges, enforce_budget
    )


# One task per scenario (same arguments as causalgame_all, minus ``scenarios``). Inspect
# finds tasks by a literal ``@task`` and reads ``-T`` names from each signature, so the
# signatures stay spelled out; the bodies all forward to one helper.


def _scenario_task(scenario: str, args: dict[str, Any]) -> Task:
    """The task for one scenario; ``args`` are the calling task's own arguments."""
    return causalgame_task([scenario], name=scenario, **args)


@task
def antenna_trap(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``antenna_trap``."""
    return _scenario_task("antenna_trap", locals())


@task
def antenna_trap_high_def(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``antenna_trap_high_def``."""
    return _scenario_task("antenna_trap_high_def", locals())


@task
def antenna_trap_local_optima(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``antenna_trap_local_optima``."""
    return _scenario_task("antenna_trap_local_optima", locals())


@task
def antenna_trap_no_history(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``antenna_trap_no_history``."""
    return _scenario_task("antenna_trap_no_history", locals())


@task
def antenna_trap_no_selection_bias(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``antenna_trap_no_selection_bias``."""
    return _scenario_task("antenna_trap_no_selection_bias", locals())


@task
def antenna_trap_simpsons_paradox(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``antenna_trap_simpsons_paradox``."""
    return _scenario_task("antenna_trap_simpsons_paradox", locals())


@task
def deployment_zone_trap_categorical(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``deployment_zone_trap_categorical``."""
    return _scenario_task("deployment_zone_trap_categorical", locals())


@task
def deployment_zone_trap_categorical_high_def(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``deployment_zone_trap_categorical_high_def``."""
    return _scenario_task("deployment_zone_trap_categorical_high_def", locals())


@task
def deployment_zone_trap_categorical_local_optima(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``deployment_zone_trap_categorical_local_optima``."""
    return _scenario_task("deployment_zone_trap_categorical_local_optima", locals())


@task
def deployment_zone_trap_categorical_no_history(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``deployment_zone_trap_categorical_no_history``."""
    return _scenario_task("deployment_zone_trap_categorical_no_history", locals())


@task
def deployment_zone_trap_categorical_no_selection_bias(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``deployment_zone_trap_categorical_no_selection_bias``."""
    return _scenario_task("deployment_zone_trap_categorical_no_selection_bias", locals())


@task
def deployment_zone_trap_categorical_simpsons_paradox(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``deployment_zone_trap_categorical_simpsons_paradox``."""
    return _scenario_task("deployment_zone_trap_categorical_simpsons_paradox", locals())


@task
def deployment_zone_trap_env_shift(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``deployment_zone_trap_env_shift``."""
    return _scenario_task("deployment_zone_trap_env_shift", locals())


@task
def weather_noise(
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str = DEFAULT_COMPAT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
) -> Task:
    """Scenario ``weather_noise``."""
    return _scenario_task("weather_noise", locals())
