"""The FormulaCode scorer: the grader of ``environments.formulacode`` run in the sample's
sandbox after the agent, with its metrics as the score (spec §5, §7, §8).

Infra failures (the grader cannot measure the sample) score NaN on every key except
``infra_failure``: excluded from the means and counted (``infra_failure`` / ``total``), the
same rule as ``benchmarks.formulacode.grading.aggregate``. The scorer adds a timed-only
``control`` copy of the base tree, from which the noise floor is calibrated.

Grading runs one sample at a time (a process-wide lock) so timing rounds never share the
CPUs with another sample's grading ("no co-tenancy during timing").
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

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

from benchmarks.formulacode import calibration
from benchmarks.formulacode.grading import evaluate
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


SCORE_KEYS = ("advantage", "advantage_ratio", "advantage_raw", "speedup", "success",
              "reward", "infra_failure", "triage", "diagnosis")


@metric
def total() -> Metric:
    """Sum of a 0/1 score: how many samples had it (the infra-failure count)."""

    def compute(scores: list[SampleScore]) -> float:
        return float(sum(s.score.as_float() for s in scores))

    return compute


METRICS: dict[str, list[Metric]] = {
    "advantage": [mean(), stderr()],
    "advantage_ratio": [geometric_mean()],
    "advantage_raw": [mean()],
    "speedup": [geometric_mean(), mean()],
    "success": [mean()],
    "reward": [mean()],
    "infra_failure": [mean(), total()],
    "triage": [mean()],
    "diagnosis": [mean()],
}
"""Score keys -> task-level metrics. An infra failure scores NaN on every key but
``infra_failure``: Inspect leaves NaN values out of a key's metrics (and harness.results
reads them as missing, dropped and counted under eval.yaml's ``errored: drop``), so infra
failures are excluded from the means and counted, exactly as ``grading.aggregate`` does."""


def score_value(ev: dict[str, Any], triage: float = 0.0, diagnosis: bool = False
                ) -> dict[str, float]:
    """The score value of one evaluated sample (``grading.evaluate``'s dict)."""
    if ev.get("infra_failure"):
        return {k: (1.0 if k == "infra_failure" else math.nan) for k in SCORE_KEYS}
    return {
        "advantage": float(ev["advantage_overall"]),
        "advantage_ratio": float(ev.get("advantage_ratio_overall", math.nan)),
        "advantage_raw": float(ev.get("advantage_raw_overall", ev["advantage_overall"])),
        "speedup": float(ev["speedup"]),
        "success": 1.0 if ev["success"] else 0.0,
        "reward": float(ev["reward"]),
        "infra_failure": 0.0,
        "triage": float(triage),
        "diagnosis": 1.0 if diagnosis else 0.0,
    }


def _infra(reason: str) -> Score:
    return Score(value=score_value({"infra_failure": True}), answer="",
                 explanation=f"infra failure: {reason}",
                 metadata={"infra_failure": True, "failure": reason})


def _ci(ci: Any) -> str:
    lo, hi = ci
    return f"[{lo:+.4f}, {hi:+.4f}]" if math.isfinite(lo) and math.isfinite(hi) else "n/a"


def _plain(value: Any) -> Any:
    """JSON-friendly metadata: NaN/inf -> None, recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@scorer(metrics=METRICS)
def formulacode_scorer(rounds: int = 5, repeat: int = 3, timer: str = "task",
                       timeout: int = 3600, max_rounds: int = 10,
                       sample_budget: float = 1.0) -> Scorer:
    """Apply the agent's diff to a clean base tree, gate on tests and snapshots, time
    baseline/expert/agent interleaved, and score advantage, speedup and reward."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        settings = GradeSettings(rounds=rounds, repeat=repeat, timer=timer,
                                 max_rounds=max_rounds, sample_budget=sample_budget,
                                 controls=["control"],
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
        ev = evaluate(result, "agent")
        if ev["infra_failure"]:
            return _infra(str(ev["failure"]))
        trees = result.get("trees", {})
        triage = fcm.triage(trees.get("expert", {}).get("touched", []),
                            trees.get("agent", {}).get("touched", []))
        diagnosis = fcm.diagnosis(tool_commands(state))
        value = score_value(ev, triage, diagnosis)
        explanation = (
            f"measure {result.get('timer')}; "
            f"{'gated: ' + str(ev['failure']) if ev['gated'] else 'passed gates'}; "
            f"speedup {ev['speedup']:.3f} vs expert {ev['expert_speedup']:.3f} over "
            f"{ev['num_valid_benchmarks']}/{ev['total_benchmarks']} workloads; "
            f"advantage {ev['advantage_overall']:+.4f} (CI {_ci(ev['advantage_ci'])}), "
            f"ratio {ev['advantage_ratio_overall']:.4f}; {ev['significant_workloads']} "
            f"significant workload speedups (noise floor {ev['noise_floor']:.4f} ln)"
        )
        detail = _plain({k: v for k, v in ev.items() if k not in ("tests", "snapshot")})
        return Score(
            value=value,
            answer=(trees.get("agent", {}) and result.get("patches", {}).get("agent", ""))[:20000],
            explanation=explanation,
            metadata={**detail, "tests": ev.get("tests"), "snapshot": ev.get("snapshot"),
                      "load": [result.get("load_before"), result.get("load_after")],
                      "pinned": result.get("pinned"), "cpu_plan": result.get("cpu_plan"),
                      "rounds": result.get("rounds"), "timer": result.get("timer"),
                      # issue 46: the speedup is in the task's declared measure (cycles or
                      # wall); the task's cycles-vs-quiet-clock comparison, >10% flagged
                      "measure": result.get("timer"),
                      "measure_calibration": calibration.for_task(meta.get("pack_slug"))},
        )

    return score
