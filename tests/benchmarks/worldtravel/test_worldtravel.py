"""The WorldTravel task end to end with offline scripted reference agents."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.tool import ToolError

import benchmarks.worldtravel.policies  # noqa: F401  (registers the scripted policies)
from benchmarks.worldtravel import report
from benchmarks.worldtravel.scorer import score_submission
from benchmarks.worldtravel.tools import get_details, search_restaurants
from benchmarks.worldtravel.worldtravel import record_to_sample, worldtravel
from environments.worldtravel.analysis import TRAVELPLANNER_RATES
from environments.worldtravel.store import shipped_scenarios


def test_record_to_sample_on_a_real_record() -> None:
    record = shipped_scenarios()[7].to_record()
    sample = record_to_sample(record)
    assert sample.id == record["id"]
    assert f"Scenario ID: {record['id']}" in str(sample.input)
    assert record["request"] in str(sample.input)
    assert "formal constraints" not in str(sample.input)  # hidden mode: none given
    assert sample.metadata and sample.metadata["n_constraints"] == record["n_constraints"]
    given = record_to_sample(record, "given")
    formal = json.loads(str(given.input).rsplit("\n", 1)[-1])
    assert [c["id"] for c in formal] == [c["id"] for c in record["constraints"]]


def test_bad_constraints_mode_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="constraints"):
        worldtravel(constraints="shown")  # type: ignore[arg-type]


def test_tools_return_json_and_tool_errors() -> None:
    async def run() -> None:
        hits = json.loads(str(await search_restaurants()(city="BRI", cuisine="italian")))
        assert all(h["cuisine"] == "italian" and h["id"].startswith("BRI-") for h in hits)
        detail = json.loads(str(await get_details()(id="BRI-R00")))
        assert detail["id"] == "BRI-R00" and "hours" in detail
        with pytest.raises(ToolError):
            await get_details()(id="NOPE")

    asyncio.run(run())


def test_score_submission_on_reference_and_garbage() -> None:
    sc = shipped_scenarios()[11]
    value, meta = score_submission(sc.id, json.dumps(sc.reference_plan))
    assert value == {"delivered": 1.0, "feasible": 1.0, "micro": 1.0}
    assert meta["cost_gap"] == 0.0
    value, meta = score_submission(sc.id, "I could not plan this trip.")
    assert value == {"delivered": 0.0, "feasible": 0.0, "micro": 0.0}
    assert meta["cost_gap"] is None


def _metrics(log_dir: Path, model: str, **task_args: Any) -> dict[str, float]:
    model_args = task_args.pop("model_args", {})
    log = inspect_eval(
        worldtravel(**task_args),
        model=model,
        log_dir=str(log_dir),
        display="none",
        model_args=model_args,
    )[0]
    assert log.status == "success", log.error
    assert log.results is not None
    out: dict[str, float] = {}
    for score in log.results.scores:  # dict-valued scores come back one EvalScore per key
        if "mean" in score.metrics:
            out[score.name] = float(score.metrics["mean"].value)
        else:
            out.update({k: float(m.value) for k, m in score.metrics.items()})
    return out


@pytest.mark.slow
def test_oracle_is_always_feasible_and_tool_calls_are_counted(tmp_path: Path) -> None:
    metrics = _metrics(
        tmp_path, "scripted/worldtravel-oracle", family="BRI", model_args={"lookups": 2}
    )
    assert metrics["delivered"] == 1.0 and metrics["feasible"] == 1.0 and metrics["micro"] == 1.0
    assert metrics["cost_gap"] == 0.0
    assert metrics["tool_calls"] == 2.0
    assert all(v == 1.0 for k, v in metrics.items() if k.startswith("macro/"))
    # the report reads the same log through harness.results and agrees
    rows = report.summary(report.per_sample([tmp_path]))
    assert len(rows) == 1 and rows[0]["n"] == 30 and rows[0]["feasible"][0] == 1.0
    assert "| scripted/worldtravel-oracle | hidden | 30 |" in report.markdown(rows)
    assert all(metrics[f"tp/{k}"] == 1.0 for k in TRAVELPLANNER_RATES)


def test_travelplanner_rates_in_the_log_and_the_report_agree(tmp_path: Path) -> None:
    metrics = _metrics(tmp_path, "scripted/worldtravel-greedy", family="DUN")
    # final pass is feasibility; the pooled micro is not the per-sample mean
    assert metrics["tp/final_pass"] == pytest.approx(metrics["feasible"])
    assert metrics["tp/delivery_rate"] == 1.0
    assert metrics["tp/commonsense_micro"] > metrics["tp/hard_micro"]
    samples = report.per_sample([tmp_path])
    [row] = report.travelplanner([tmp_path], samples)
    assert row["n"] == 30
    for key in TRAVELPLANNER_RATES:
        assert row[key] == pytest.approx(metrics[f"tp/{key}"]), key
    assert "| scripted/worldtravel-greedy | hidden | 30 | 1.000 |" in (
        report.travelplanner_markdown([row]))


@pytest.mark.slow
def test_greedy_and_random_score_below_the_oracle(tmp_path: Path) -> None:
    greedy = _metrics(tmp_path, "scripted/worldtravel-greedy", family="DUN", constraints="given")
    rand = _metrics(tmp_path, "scripted/worldtravel-random", family="DUN")
    assert greedy["delivered"] == 1.0 and rand["delivered"] == 1.0
    assert greedy["feasible"] < 1.0
    assert rand["feasible"] <= greedy["feasible"]
    assert rand["micro"] < greedy["micro"] < 1.0


def test_a_replacement_agent_gets_the_world_tools(tmp_path: Path) -> None:
    """``--solver`` agents (methods) run over the task's tools, which the task puts on the state."""
    from inspect_ai import eval as inspect_eval

    from methods.agents.memory_react import task_react

    [log] = inspect_eval(worldtravel(), model="scripted/worldtravel-oracle", solver=task_react(),
                         model_args={"lookups": 2},
                         limit=2, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.samples
    for sample in log.samples:
        calls = [c.function for m in sample.messages if m.role == "assistant"
                 for c in (m.tool_calls or [])]
        assert calls.count("get_details") == 2  # the tools came from the task, through the state
        assert any(m.role == "tool" and not getattr(m, "error", None) for m in sample.messages)
        assert sample.scores
        value = sample.scores["worldtravel_checker"].value
        assert isinstance(value, dict) and value["feasible"] == 1.0
