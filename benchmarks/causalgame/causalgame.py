"""CausalGame: can an agent find the cause of drone losses by experiment, past the traps?

Re-implementation of the CausalGame benchmark (drone design under hidden confounders,
selection bias, Simpson's paradox, environment shift and noise; 14 scenarios). The agent
explores with up to 200 Stage-1 drones in <= 10 deploys, then submits one design that
1,000 fresh drones fly (Stage 2); it wins at the scenario's survival threshold.
Spec and published numbers: see this folder's README.md.

    inspect eval harness/causalgame --model embedded/smollm2-135m
    inspect eval harness/causalgame -T scenarios=antenna_trap --model none \\
        --solver benchmarks/causalgame/agents.py@oracle
    inspect eval harness/causalgame --model scripted/causalgame-experimenter -T compat=original
    inspect eval harness/causalgame -T protocol=published --model <model>   # the leaderboard's
    inspect eval harness/causalgame -T protocol=published -T mode=prompting --model <model>
    inspect eval harness/causalgame -T checkpoint=turns --model <local model>  # then, if it
    inspect eval-retry <log>          # dies mid-episode, resume each sample at its last turn
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
from inspect_ai.model import GenerateConfig
from inspect_ai.util import (
    CheckpointSampleConfig,
)

from benchmarks.causalgame.agent import causalgame_agent, opencode_agent, prompting_solver
from benchmarks.causalgame.scorer import causalgame_scorer, keep_epochs
from benchmarks.causalgame.session import checkpoint_game, resume_game, start_game
from benchmarks.causalgame.tools import ANALYSIS_TIMEOUT_S, game_tools
from environments.causalgame import scenario_ids, scenario_record
from harness.checkpoint_option import checkpoint_config
from harness.plugins.benchmark import benchmark
from harness.prompt_cost import prompt_cost
from harness.tool_validity import tool_call_validity

DEFAULT_SEED = 0
DEFAULT_EPOCHS = 3
DEFAULT_COMPAT: Literal["intended", "original"] = "intended"
DEFAULT_PROTOCOL: Literal["suite", "published"] = "suite"
DEFAULT_MODE: Literal["agentic", "prompting"] = "agentic"
DEFAULT_AGENT: Literal["react", "opencode"] = "react"
PUBLISHED_COMPAT = "original"  # the leaderboard was made with the released game
DEFAULT_ARCHIVIST: Literal["matcher", "model"] = "matcher"
DEFAULT_SANDBOX: str | None = "bwrap"
DEFAULT_CHECKPOINT = "off"
"""Off unless asked: a checkpoint writes a restic repository per sample (Inspect downloads
restic on first use, which an offline machine cannot; see README), and most episodes are
short. ``turns`` is the setting for local models whose episodes run for minutes."""
VERSION = "1.4.0"


def record_to_sample(record: dict[str, Any]) -> Sample:
    """A scenario file record as a sample (the game itself is built by ``start_game``)."""
    return Sample(
        checkpoint=SAMPLE_CHECKPOINT,
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


SAMPLE_CHECKPOINT = CheckpointSampleConfig(sandbox_paths={"default": []})
"""Whatever layer turns checkpointing on, the analysis sandbox is not snapshotted: the
``analyze`` tool rewrites its data files from the game before every run, so the game
(replayed from the store) is its whole state. Files a program saved there itself are lost
on a resume."""


def parse_scenarios(scenarios: str | list[str] | None) -> list[str]:
    """The scenario ids a ``scenarios`` argument names, in the order given.

    ``None`` (or an empty string/list) is all 14 in the spec's order; otherwise one id, a
    comma-separated string of ids, or a list of them (Inspect splits ``-T scenarios=a,b``
    into a list). Unknown ids raise ``ValueError`` listing the valid ones.
    """
    if scenarios is None:
        return scenario_ids()
    parts = [scenarios] if isinstance(scenarios, str) else [str(s) for s in scenarios]
    chosen = [s.strip() for part in parts for s in part.split(",") if s.strip()]
    if not chosen:
        return scenario_ids()
    valid = scenario_ids()
    unknown = [s for s in dict.fromkeys(chosen) if s not in valid]
    if unknown:
        raise ValueError(
            f"unknown scenarios {unknown}; valid scenarios: {', '.join(valid)}"
        )
    return list(dict.fromkeys(chosen))  # a repeated id is one sample, not two


@benchmark("causalgame")
@task
def causalgame(
    scenarios: str | list[str] | None = None,
    seed: int = DEFAULT_SEED,
    epochs: int = DEFAULT_EPOCHS,
    compat: str | None = None,
    protocol: str = DEFAULT_PROTOCOL,
    mode: str = DEFAULT_MODE,
    agent: str = DEFAULT_AGENT,
    archivist: str = DEFAULT_ARCHIVIST,
    sandbox: str | None = DEFAULT_SANDBOX,
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
    auto_submit: bool | None = None,
    max_tokens: int | None = None,
    checkpoint: str | int | bool | None = DEFAULT_CHECKPOINT,
) -> Task:
    """CausalGame: one sample per scenario (id and metadata ``scenario`` = the scenario id).

    Args:
        scenarios: Scenario ids: one (``antenna_trap``), a comma-separated string or a list
            (default: all 14).
        seed: Episode seed (same seed, same games, same Stage-2 fleets).
        epochs: Trials per scenario (the paper uses 3; metrics give a t interval).
        compat: ``intended`` (defects fixed) or ``original`` (the released behaviour);
            default ``intended``, and ``original`` under ``protocol=published``.
        protocol: ``suite`` (unsubmitted runs auto-submitted, marked) or ``published``
            (the leaderboard's: the released game, unsubmitted runs N/A, 3 trials per cell;
            compare with ``python -m environments.causalgame.compare``).
        mode: ``agentic`` (tools, multi-turn) or ``prompting`` (one answer from the
            briefing and the history, no tools).
        agent: ``react`` (the turn protocol) or ``opencode`` (a free-running tool loop);
            agentic mode only.
        archivist: ``matcher`` (deterministic) or ``model`` (the ``archivist`` model role).
        sandbox: ``bwrap`` for the Python analysis tool, or ``none`` to drop that tool.
        enforce_ranges: Reject DEF outside the advertised range (default: on in intended).
        enforce_budget: Reject designs whose total DEF exceeds the advertised budget.
        auto_submit: Unset (default): the protocol and the agent decide (the benchmark's
            agents auto-submit under ``suite``; nothing is under ``published``; a generic
            agent never does). ``true``: every run left unsubmitted gets its best observed
            design at scoring, whatever the agent or protocol; ``false``: never (an
            unsubmitted run scores 0 under ``suite``, N/A under ``published``). An
            evaluation-setup factor of its own (the setup-swing study).
        max_tokens: Token cap of every model reply (default: the model's own).
        checkpoint: Mid-sample checkpoints (Inspect's): ``off`` (default), ``turns``
            (every agent turn), ``turns:N``/``N`` (every N turns) or ``5m``/``90s`` (wall
            time). A killed run resumes each sample from its last checkpoint with
            ``inspect eval-retry`` (or a re-run ``eval_set``); the game is rebuilt by
            replaying its logged actions. Needs a restic binary (see README).
    """
    if protocol not in ("suite", "published"):
        raise ValueError(f"protocol must be 'suite' or 'published', got {protocol!r}")
    if compat is None:
        compat = PUBLISHED_COMPAT if protocol == "published" else DEFAULT_COMPAT
    if compat not in ("intended", "original"):
        raise ValueError(f"compat must be 'intended' or 'original', got {compat!r}")
    if protocol == "published" and compat != PUBLISHED_COMPAT:
        raise ValueError("protocol=published runs the released game: compat must be 'original'")
    if mode not in ("agentic", "prompting"):
        raise ValueError(f"mode must be 'agentic' or 'prompting', got {mode!r}")
    if agent not in ("react", "opencode"):
        raise ValueError(f"agent must be 'react' or 'opencode', got {agent!r}")
    if archivist not in ("matcher", "model"):
        raise ValueError(f"archivist must be 'matcher' or 'model', got {archivist!r}")
    checkpoint_layer = checkpoint_config(checkpoint)
    samples = [record_to_sample(scenario_record(s)) for s in parse_scenarios(scenarios)]
    with_sandbox = sandbox is not None and sandbox != "none" and mode == "agentic"
    from inspect_ai.solver import use_tools

    setup = [
        start_game(
            seed=seed,
            compat=compat,
            enforce_ranges=enforce_ranges,
            enforce_budget=enforce_budget,
            protocol=protocol,
            auto_submit=auto_submit,
        )
    ]
    if mode == "agentic":
        setup.append(use_tools(game_tools(with_analysis=with_sandbox, archivist=archivist)))
    solver = (
        prompting_solver() if mode == "prompting"
        else opencode_agent() if agent == "opencode" else causalgame_agent()
    )
    return Task(
        dataset=MemoryDataset(samples, name="causalgame"),
        setup=setup,
        solver=solver,
        scorer=[causalgame_scorer(), tool_call_validity(), prompt_cost()],
        epochs=Epochs(epochs, keep_epochs()),
        config=GenerateConfig(max_tokens=max_tokens) if max_tokens else GenerateConfig(),
        sandbox=(analysis_sandbox() if sandbox == "bwrap" else sandbox) if with_sandbox else None,
        version=VERSION,
        checkpoint=checkpoint_layer,
        on_checkpoint=checkpoint_game,
        on_resume=resume_game,
        metadata={
            "benchmark": "causalgame",
            "compat": compat,
            "seed": seed,
            "protocol": protocol,
            "mode": mode,
            "agent": agent if mode == "agentic" else None,
            "auto_submit": auto_submit,
        },
    )
