"""The FormulaCode scorer: the grader of ``environments.formulacode`` run in the sample's
sandbox after the agent, with its metrics as the score (spec §5, §7, §8).

Grading runs one sample at a time (a process-wide lock) so timing rounds never share the
CPUs with another sample's grading ("no co-tenancy during timing").
"""

from __future__ import annotations

import asyncio
import json
import math

from inspect_ai.model import ChatMessageAssistant
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    mean,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState
from inspect_ai.util import sandbox

from environments.formulacode import metrics as fcm
from environments.formulacode.grader import (
    REMOTE_RUNTIME,
    GradeSettings,
    grade_config,
    parse_result,
    runtime_sources,
)

_GRADING = asyncio.Lock()
WORK = "/tmp/fc_scoring"
REPO = "/workspace/repo"


@metric
def geometric_mean() -> Metric:
    """Geometric mean of a positive score (the leaderboard's speedup aggregate)."""

    def compute(scores: list[SampleScore]) -> float:
        return fcm.geomean(float(s.score.as_float()) for s in scores)

    return compute


async def install_runtime() -> None:
    """Write the grader runtime into the sandbox (also gives agents the benchmark runner)."""
    for name, text in runtime_sources().items():
        await sandbox().write_file(f"{REMOTE_RUNTIME}/{name}", text)


def tool_commands(state: TaskState) -> list[str]:
    """Every tool-call argument the agent sent, as text (for the diagnosis analytic)."""
    out: list[str] = []
    for message in state.messages:
        if isinstance(message, ChatMessageAssistant):
            for call in message.tool_calls or []:
                out.append(json.dumps(call.arguments))
    return out


def _infra(reason: str) -> Score:
    value = {"advantage": 0.0, "speedup": 1.0, "success": 0.0, "reward": 0.0,
             "infra_failure": 1.0, "triage": 0.0, "diagnosis": 0.0}
    return Score(value=value, answer="", explanation=f"infra failure: {reason}",
                 metadata={"infra_failure": True, "failure": reason})


@scorer(metrics={
    "advantage": [mean(), stderr()],
    "speedup": [geometric_mean(), mean()],
    "success": [mean()],
    "reward": [mean()],
    "infra_failure": [mean()],
    "triage": [mean()],
    "diagnosis": [mean()],
})
def formulacode_scorer(rounds: int = 5, repeat: int = 3, timer: str = "task",
                       timeout: int = 3600, max_rounds: int = 10) -> Scorer:
    """Apply the agent's diff to a clean base tree, gate on tests and snapshots, time
    baseline/expert/agent interleaved, and score advantage, speedup and reward."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        settings = GradeSettings(rounds=rounds, repeat=repeat, timer=timer,
                                 max_rounds=max_rounds,
                                 python=str(meta.get("python", "python3"))).for_task(meta)
        try:
            await install_runtime()
            await sandbox().write_file(f"{WORK}/expert.patch", str(meta["patch"]))
            cfg = grade_config(REPO, f"{WORK}/expert.patch", {"agent": {"from_repo": True}},
                               settings, work=f"{WORK}/trees")
            await sandbox().write_file(f"{WORK}/config.json", json.dumps(cfg))
            async with _GRADING:
                done = await sandbox().exec(
                    [settings.python, f"{REMOTE_RUNTIME}/fc_grade.py", f"{WORK}/config.json"],
                    timeout=timeout,
                )
        except (TimeoutError, OSError, RuntimeError) as exc:
            return _infra(f"{type(exc).__name__}: {exc}")
        result = parse_result(done.stdout)
        ev = fcm.evaluate(result, "agent")
        if ev["infra_failure"]:
            return _infra(str(ev["failure"]))
        trees = result.get("trees", {})
        triage = fcm.triage(trees.get("expert", {}).get("touched", []),
                            trees.get("agent", {}).get("touched", []))
        diagnosis = fcm.diagnosis(tool_commands(state))
        value = {
            "advantage": float(ev["advantage_overall"]),
            "speedup": float(ev["speedup"]),
            "success": 1.0 if ev["success"] else 0.0,
            "reward": float(ev["reward"]),
            "infra_failure": 0.0,
            "triage": triage,
            "diagnosis": 1.0 if diagnosis else 0.0,
        }
        explanation = (
            f"{'gated: ' + str(ev['failure']) if ev['gated'] else 'passed gates'}; "
            f"speedup {ev['speedup']:.3f} vs expert {ev['expert_speedup']:.3f} over "
            f"{ev['num_valid_benchmarks']}/{ev['total_benchmarks']} workloads"
        )
        detail = {k: v for k, v in ev.items() if k not in ("tests", "snapshot")}
        detail["cv"] = None if math.isnan(ev.get("cv", math.nan)) else ev["cv"]
        return Score(
            value=value,
            answer=(trees.get("agent", {}) and result.get("patches", {}).get("agent", ""))[:20000],
            explanation=explanation,
            metadata={**detail, "tests": ev.get("tests"), "snapshot": ev.get("snapshot"),
                      "load": [result.get("load_before"), result.get("load_after")],
                      "pinned": result.get("pinned")},
        )

    return score
