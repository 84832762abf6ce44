"""Scoring: Stage-2 survival and victory, the report rubric, and the failure mode.

Survival is the benchmark metric (1,000 fresh drones, common random numbers per seed).
Under ``protocol=published`` a run that never submitted is **N/A**: ``survival`` and
``victory`` are null (the sample is kept in the log, left out of the means and counted in
``na``), as the published leaderboard counts it.

The rubric is graded by up to three judge model roles (``--model-role judge=...``,
``judge2=...``, ``judge3=...``; the published rubric averages three judges), each giving a
verdict with reasoning and evidence per criterion against the scenario's ground-truth
report and the whole trajectory (a faithful summary: every message, tool call and tool
result, the longest ones elided in the middle); the per-criterion mean over the judges is
the score, and every judge's verdicts are kept in the score metadata. Without a judge the
deterministic keyword stand-in grades (recorded as ``grader: keywords``). Epoch values are
kept by the reducer so the metrics can report a t interval over all (scenario, epoch)
episodes, clustered by scenario.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    Model,
    ModelOutput,
    get_model,
    model_roles,
)
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    metric,
    score_reducer,
    scorer,
)
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolFunction, ToolInfo, ToolParam, ToolParams

from benchmarks.causalgame.agent import REPORT_STORE_KEY, auto_submit
from benchmarks.causalgame.session import (
    auto_submit_setting,
    current_game,
    current_protocol,
    release_game,
)
from environments.causalgame import Game
from environments.causalgame.rubric import (
    CRITERIA,
    CRITERIA_IDS,
    VERDICTS,
    failure_mode,
    ground_truth,
    keyword_verdicts,
    mean_verdicts,
    weighted_score,
)
from harness.stats import mean_ci

KEYS = ("survival", "victory", "rubric", "na")
JUDGE_ROLES = ("judge", "judge2", "judge3")
TRAJECTORY_CHARS = 16000
"""Judge context budget for the trajectory summary (the ladder's Qwen models have 8k
tokens); longer summaries keep every message but elide the middle of the longest ones."""


def trajectory_summary(messages: Sequence[ChatMessage], budget: int = TRAJECTORY_CHARS) -> str:
    """Every message after the system prompt as ``role: text`` with its tool calls.

    When the whole exceeds ``budget`` characters, each message is cut to an equal share
    (head and tail kept, the middle elided and marked), so no step is dropped.
    """
    lines: list[str] = []
    for m in messages:
        if m.role == "system":
            continue
        text = m.text or ""
        calls = getattr(m, "tool_calls", None) or []
        for call in calls:
            text += f"\n[call {call.function}({json.dumps(call.arguments, default=str)})]"
        if m.role == "tool":
            error = getattr(m, "error", None)
            head = f"tool {getattr(m, 'function', '')}"
            text = f"{head} ERROR: {error.message}" if error is not None else f"{head}: {text}"
            lines.append(text)
        else:
            lines.append(f"{m.role}: {text}")
    if sum(len(x) for x in lines) <= budget:
        return "\n".join(lines)
    share = max(200, budget // max(1, len(lines)))
    out = []
    for x in lines:
        if len(x) > share:
            x = x[: share // 2] + " [...] " + x[-share // 2 :]
        out.append(x)
    return "\n".join(out)


def judge_prompt(
    scenario_id: str, compat: str, report: str, trajectory: str, final: dict[str, Any] | None
) -> str:
    """The rubric prompt for one judge (ground truth written per scenario)."""
    criteria = "\n".join(
        f"- {c.id} ({c.dimension}, weight {c.weight}"
        f"{', mandatory' if c.mandatory else ''}): {c.text}"
        for c in CRITERIA
    )
    outcome = (
        "no final submission (N/A)" if not final
        else f"Stage-2 survival {final.get('survival_rate')}, victory {final.get('victory')}"
    )
    ids = ", ".join(c.id for c in CRITERIA)
    return (
        "You grade an AI agent's investigation of a causal drone-design game.\n"
        f"Ground-truth report:\n{ground_truth(scenario_id, compat)}\n\n"
        f"Criteria:\n{criteria}\n\nOutcome: {outcome}\n\n"
        f"Agent trajectory:\n{trajectory}\n\nAgent's final report:\n{report}\n\n"
        f"Reply with one JSON object whose keys are {ids}; each value is an object "
        '{"verdict": "SATISFIED" | "PARTIALLY_SATISFIED" | "NOT_SATISFIED", '
        '"reasoning": "<one or two sentences>", "evidence": ["<quote from the trajectory>"]}.'
    )


def parse_judgement(text: str) -> dict[str, dict[str, Any]]:
    """Per-criterion ``{verdict, score, reasoning, evidence}`` from a judge reply.

    Accepts a verdict object per criterion or a bare verdict string. A reply whose JSON is
    cut short (a judge that ran out of tokens) keeps the criteria it completed: each
    ``"ID": {...}`` or ``"ID": "VERDICT"`` is read on its own. A missing or unreadable
    criterion scores 0 with ``verdict: MISSING``.
    """
    match = re.search(r"\{.*\}", text, re.S)
    data: dict[str, Any] = {}
    if match:
        try:
            loaded = json.loads(match.group(0))
            data = loaded if isinstance(loaded, dict) else {}
        except json.JSONDecodeError:
            data = {}
    for c in CRITERIA:
        if c.id in data:
            continue
        part = re.search(rf'"{c.id}"\s*:\s*(\{{[^{{}}]*\}}|"[A-Za-z_]+")', text)
        if part:
            try:
                data[c.id] = json.loads(part.group(1))
            except json.JSONDecodeError:
                continue
    out: dict[str, dict[str, Any]] = {}
    for c in CRITERIA:
        item = data.get(c.id)
        if isinstance(item, dict):
            verdict = str(item.get("verdict", "")).upper().strip()
            reasoning = str(item.get("reasoning", ""))
            evidence = item.get("evidence") or []
            evidence = [str(e) for e in evidence] if isinstance(evidence, list) else [str(evidence)]
        else:
            verdict, reasoning, evidence = str(item or "").upper().strip(), "", []
        known = verdict in VERDICTS
        out[c.id] = {
            "verdict": verdict if known else "MISSING",
            "score": VERDICTS.get(verdict, 0.0),
            "reasoning": reasoning,
            "evidence": evidence,
        }
    return out


def parse_verdicts(text: str) -> dict[str, float]:
    """Criterion scores from a judge reply (missing or unreadable ones count as 0)."""
    return {k: float(v["score"]) for k, v in parse_judgement(text).items()}


VERDICT_TOOL = "record_verdicts"
JUDGE_RETRIES = 2
"""Extra attempts a judge gets for the criteria its reply left unreadable (each retry shows
it the parse error and asks for those criteria only)."""


def verdict_tool(criteria: Sequence[str]) -> ToolInfo:
    """The forced tool a judge answers through: one object per criterion, the verdict an
    enum. A forced tool call is what every provider can constrain: the embedded ladder
    decodes it under a JSON-schema grammar, API and served models use their native forced
    tool calling, so the reply is the verdict object by construction."""
    def one(cid: str) -> ToolParam:
        return ToolParam(
            type="object", description=f"verdict on criterion {cid}",
            properties={
                "verdict": ToolParam(type="string", enum=list(VERDICTS)),
                "reasoning": ToolParam(type="string", description="one sentence"),
            },
            required=["verdict", "reasoning"], additionalProperties=False,
        )

    return ToolInfo(
        name=VERDICT_TOOL,
        description="Record your verdict on every rubric criterion.",
        parameters=ToolParams(properties={c: one(c) for c in criteria}, required=list(criteria)),
    )


def _reply_json(output: ModelOutput) -> tuple[str, str | None]:
    """The reply's verdict JSON (the forced call's arguments, else the text) and the
    parse error to show the judge on a retry (None when the call parsed)."""
    calls = output.message.tool_calls or []
    call = next((c for c in calls if c.function == VERDICT_TOOL), None)
    if call is None:
        return output.completion, f"no {VERDICT_TOOL} call in the reply"
    if call.parse_error:
        return output.completion, call.parse_error
    return json.dumps(call.arguments), None


async def judge_once(judge: Model, prompt: str, retries: int = JUDGE_RETRIES,
                     constrained: bool = True) -> dict[str, Any]:
    """One judge's verdicts: a forced ``record_verdicts`` call (``constrained``) or a free
    JSON reply, retried for the criteria still missing with the parse error shown.

    Returns ``{judge, criteria, raw, attempts, missing}``; ``missing`` lists the criteria
    with no readable verdict after every attempt (they score 0 and are counted)."""
    wanted = list(CRITERIA_IDS)
    found: dict[str, dict[str, Any]] = {}
    raw: list[str] = []
    messages: list[ChatMessage] = [ChatMessageUser(content=prompt)]
    attempts = 0
    for _ in range(retries + 1):
        attempts += 1
        if constrained:
            output = await judge.generate(
                messages, tools=[verdict_tool(wanted)], tool_choice=ToolFunction(VERDICT_TOOL))
            reply, error = _reply_json(output)
        else:
            output = await judge.generate(messages)
            reply, error = output.completion, None
        raw.append(reply[:4000])
        parsed = parse_judgement(reply)
        found.update({c: parsed[c] for c in wanted if parsed[c]["verdict"] != "MISSING"})
        still = [c for c in CRITERIA_IDS if c not in found]
        if not still:
            break
        why = error or "the reply was not one JSON object with a verdict for every criterion"
        messages += [
            ChatMessageAssistant(content=reply),
            ChatMessageUser(content=(
                f"Your reply could not be read ({why}); it had no usable verdict for "
                f"{', '.join(still)}. Reply again for exactly those criteria, each with a "
                "verdict (SATISFIED, PARTIALLY_SATISFIED or NOT_SATISFIED) and one sentence "
                "of reasoning.")),
        ]
        wanted = still
    parsed_all = parse_judgement("{}")
    criteria = {c: found.get(c, parsed_all[c]) for c in CRITERIA_IDS}
    return {"judge": str(judge), "criteria": criteria, "raw": "\n---\n".join(raw)[:8000],
            "attempts": attempts, "missing": [c for c in CRITERIA_IDS if c not in found]}


async def judge_episode(
    judges: Sequence[Model], scenario_id: str, compat: str, report: str, trajectory: str,
    final: dict[str, Any] | None, retries: int = JUDGE_RETRIES, constrained: bool = True,
) -> list[dict[str, Any]]:
    """Each judge's judgement: ``{judge, criteria: {id: {verdict, score, ...}}, raw,
    attempts, missing}`` (see :func:`judge_once`)."""
    prompt = judge_prompt(scenario_id, compat, report, trajectory, final)
    return [await judge_once(judge, prompt, retries, constrained) for judge in judges]


def bound_judges() -> list[Model]:
    """The judge roles bound for this eval, in role order."""
    roles = model_roles()
    return [get_model(role=r) for r in JUDGE_ROLES if r in roles]


async def grade_report(
    game: Game, report: str, state: TaskState
) -> tuple[dict[str, float], str, list[dict[str, Any]]]:
    """Rubric verdicts (mean over the judges), the grader's name and each judgement."""
    judges = bound_judges()
    if judges:
        judgements = await judge_episode(
            judges, game.scenario.id, game.compat, report, trajectory_summary(state.messages),
            game.final,
        )
        per_judge = [{k: v["score"] for k, v in j["criteria"].items()} for j in judgements]
        names = ",".join(j["judge"] for j in judgements)
        return mean_verdicts(per_judge), f"judges:{names}", judgements
    verdicts = keyword_verdicts(report, game.scenario.family, len(game.deployments))
    return verdicts, "keywords", []


def _num(value: Any) -> float | None:
    """A score entry as a float; None for N/A (null) or a non-finite value."""
    if value is None or isinstance(value, str):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


@score_reducer(name="causalgame_mean")
def keep_epochs() -> ScoreReducer:
    """Mean over epochs, keeping every epoch's values in metadata for the t interval.

    Applies to every scorer of the task (Inspect has one reducer per task), so it averages
    whichever keys the scores carry: the game's, or the tool-call validity counts. N/A
    (null) entries leave the mean; a key that is N/A in every epoch stays null."""

    def reduce(scores: list[Score]) -> Score:
        values = [s.value for s in scores if isinstance(s.value, dict)]
        keys = list(values[0]) if values else list(KEYS)
        mean: dict[str, float | None] = {}
        for k in keys:
            present = [x for x in (_num(v.get(k)) for v in values) if x is not None]
            mean[k] = float(np.mean(present)) if present else None
        meta = dict(scores[0].metadata or {})
        meta["epoch_values"] = [{k: _num(v.get(k)) for k in keys} for v in values]
        return Score(
            value=mean, metadata=meta, answer=scores[0].answer, explanation=scores[0].explanation
        )

    return reduce


def _pooled(scores: list[SampleScore], key: str) -> tuple[list[float], list[int]]:
    """Every epoch's value of ``key`` and the sample it belongs to (N/A left out)."""
    values: list[float] = []
    clusters: list[int] = []
    for i, s in enumerate(scores):
        per_epoch = (s.score.metadata or {}).get("epoch_values")
        raw = (
            [e.get(key) for e in per_epoch]
            if per_epoch
            else [s.score.value.get(key) if isinstance(s.score.value, dict) else s.score.value]
        )
        for item in raw:
            number = _num(item)
            if number is not None:
                values.append(number)
                clusters.append(i)
    return values, clusters


@metric
def episode_mean(key: str) -> Metric:
    """Mean of ``key`` over all episodes (every epoch of every scenario; N/A left out)."""

    def compute(scores: list[SampleScore]) -> float:
        values, _ = _pooled(scores, key)
        return float(np.mean(values)) if values else float("nan")

    return compute


@metric
def episode_count(key: str) -> Metric:
    """Sum of ``key`` over all episodes (``na``: the number of N/A episodes)."""

    def compute(scores: list[SampleScore]) -> float:
        values, _ = _pooled(scores, key)
        return float(np.sum(values)) if values else 0.0

    return compute


@metric
def ci95(key: str) -> Metric:
    """Half-width of the 95% t interval of ``key`` (clustered by scenario when pooled)."""

    def compute(scores: list[SampleScore]) -> float:
        values, clusters = _pooled(scores, key)
        if len(values) < 2:
            return float("nan")
        cluster = clusters if len(set(clusters)) > 1 else None
        est = mean_ci(values, cluster=cluster)
        return float((est.hi - est.lo) / 2)

    return compute


@scorer(
    metrics={
        "survival": [episode_mean("survival"), ci95("survival")],
        "victory": [episode_mean("victory")],
        "rubric": [episode_mean("rubric")],
        "na": [episode_count("na")],
    }
)
def causalgame_scorer() -> Scorer:
    """Stage-2 survival, victory, rubric score and N/A flag of the episode."""

    async def score(state: TaskState, target: Target) -> Score:
        game = current_game()
        try:
            if game.final is None and auto_submit_setting():
                auto_submit(game)  # -T auto_submit=true: any agent's unsubmitted run
            final = game.final or {}
            na = current_protocol() == "published" and game.final is None
            report = str(state.store.get(REPORT_STORE_KEY) or state.output.completion or "")
            verdicts, grader, judgements = await grade_report(game, report, state)
            survival = None if na else float(final.get("survival", 0.0))
            outcome = (
                "N/A (no submission)" if survival is None
                else f"Stage-2 survival {survival * 100:.1f}%"
            )
            return Score(
                value={
                    "survival": survival,
                    "victory": None if na else float(bool(final.get("victory"))),
                    "rubric": weighted_score(verdicts),
                    "na": float(na),
                },
                answer=json.dumps(game.final_design),
                explanation=f"{game.scenario.id}: {outcome} "
                f"(threshold {game.scenario.threshold * 100:.0f}%)",
                metadata={
                    "scenario": game.scenario.id,
                    "seed": game.seed,
                    "compat": game.compat,
                    "protocol": current_protocol(),
                    "auto_submit": auto_submit_setting(),
                    "submitted": game.final is not None,
                    "auto_submitted": bool(final.get("auto_submitted", False)),
                    "drones_used": game.drones_used,
                    "deploys": len(game.deployments),
                    "verdicts": verdicts,
                    "grader": grader,
                    "judgements": judgements,
                    "failure_mode": failure_mode(verdicts),
                },
            )
        finally:
            release_game()

    return score
