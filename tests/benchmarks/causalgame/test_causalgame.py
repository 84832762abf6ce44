"""The CausalGame tasks end to end with reference solvers and scripted models (offline)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.solver import Solver

import benchmarks.causalgame.policies  # noqa: F401  (registers scripted/causalgame-*)
from benchmarks.causalgame import agents
from benchmarks.causalgame.agent import parse_design
from benchmarks.causalgame.causalgame import (
    VERSION,
    causalgame,
    parse_scenarios,
    record_to_sample,
)
from benchmarks.causalgame.scorer import parse_judgement, parse_verdicts, trajectory_summary
from environments.causalgame import load_scenario, scenario_record, survival_rate
from environments.causalgame.scenarios import DATA_DIR, scenario_ids
from harness.sandbox.bwrap import bwrap_available


def _run(tmp: Path, model: str = "none", solver: Solver | None = None, **task_args: Any) -> EvalLog:
    task_args.setdefault("sandbox", "none")
    log = inspect_eval(
        causalgame(**task_args), model=model, solver=solver, log_dir=str(tmp), display="none"
    )[0]
    assert log.status == "success", log.error
    return log


def _score(sample: Any) -> Any:
    """The sample's (only) score."""
    return next(iter(sample.scores.values()))


def _per_scenario(log: EvalLog) -> dict[str, Any]:
    return {str(sample.id): _score(sample).value for sample in log.samples or []}


def test_record_to_sample_on_a_real_record() -> None:
    record = json.loads((DATA_DIR / "scenarios" / "antenna_trap.json").read_text())
    sample = record_to_sample(record)
    assert sample.id == "antenna_trap"
    assert sample.metadata == {
        "scenario": "antenna_trap",
        "family": "antenna",
        "threshold": 0.75,
        "hide_failed": True,
        "hidden_confounder": False,
    }


def test_oracle_wins_exactly_where_the_optimum_reaches_the_threshold(tmp_path: Path) -> None:
    log = _run(tmp_path, solver=agents.oracle(), epochs=1)
    scores = _per_scenario(log)
    assert set(scores) == set(scenario_ids())
    for sid, value in scores.items():
        sc = load_scenario(sid)
        reachable = (
            survival_rate(sc, sc.optimum["design"], 20_000, 99, sc.optimum["equipment"])
            >= sc.threshold + 0.02
        )
        assert value["victory"] == float(reachable), sid
    assert scores["weather_noise"]["victory"] == 0.0  # 55% is unreachable (spec 7.4)


@pytest.mark.slow
def test_random_and_default_win_few(tmp_path: Path) -> None:
    wins = sum(
        v["victory"]
        for v in _per_scenario(_run(tmp_path, solver=agents.random(), epochs=1)).values()
    )
    assert wins <= 3
    default = _per_scenario(_run(tmp_path, solver=agents.default(), epochs=1))
    assert sum(v["victory"] for v in default.values()) == 0


def test_experimenter_beats_the_antenna_trap(tmp_path: Path) -> None:
    log = _run(
        tmp_path,
        solver=agents.experimenter(),
        epochs=1,
        scenarios="antenna_trap,antenna_trap_high_def,antenna_trap_simpsons_paradox",
    )
    assert all(v["survival"] > 0.75 for v in _per_scenario(log).values())


def test_same_seed_same_scores_across_epochs_and_runs(tmp_path: Path) -> None:
    a = _run(tmp_path, solver=agents.experimenter(), epochs=2, scenarios="weather_noise", seed=4)
    b = _run(tmp_path, solver=agents.experimenter(), epochs=2, scenarios="weather_noise", seed=4)
    epochs_a = [s.scores for s in a.samples or []]
    epochs_b = [s.scores for s in b.samples or []]
    values_a = [next(iter(s.values())).value for s in epochs_a]  # type: ignore[union-attr]
    values_b = [next(iter(s.values())).value for s in epochs_b]  # type: ignore[union-attr]
    assert values_a == values_b
    assert values_a[0] != values_a[1]  # epochs are different episodes
    metrics = a.results.scores[0].metrics  # type: ignore[union-attr]
    assert metrics["ci95"].value > 0


def test_default_agent_with_scripted_oracle_model(tmp_path: Path) -> None:
    log = _run(
        tmp_path,
        model="scripted/causalgame-oracle",
        epochs=1,
        scenarios="antenna_trap,deployment_zone_trap_categorical",
    )
    for sample in log.samples or []:
        score = _score(sample)
        assert score.value["victory"] == 1.0
        assert score.metadata["auto_submitted"] is False
        assert score.metadata["grader"] == "keywords"


def test_malformed_tool_calls_are_tool_errors_and_never_crash(tmp_path: Path) -> None:
    log = _run(tmp_path, model="scripted/causalgame-fuzz", epochs=1, scenarios="antenna_trap")
    sample = (log.samples or [])[0]
    assert sample.error is None
    errors = [m for m in sample.messages if m.role == "tool" and m.error is not None]
    assert len(errors) >= 8
    score = _score(sample)
    assert score.value["victory"] == 1.0  # recovered, then oracle


def test_auto_submit_when_the_agent_never_submits(tmp_path: Path) -> None:
    log = _run(tmp_path, model="scripted/chatter", epochs=1, scenarios="antenna_trap")
    score = _score((log.samples or [])[0])
    assert score.metadata["auto_submitted"] is True


def test_parse_verdicts() -> None:
    got = parse_verdicts('ok {"CR1": "SATISFIED", "CR2": "partially_satisfied", "ED1": "?"}')
    assert got["CR1"] == 1.0 and got["CR2"] == 0.5 and got["ED1"] == 0.0 and got["DU1"] == 0.0


def test_bad_task_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="compat"):
        causalgame(scenarios="antenna_trap", compat="newest")
    with pytest.raises(ValueError, match="unknown scenarios") as info:
        causalgame(scenarios="antenna_trap,nope")
    assert "'nope'" in str(info.value) and "antenna_trap" in str(info.value)
    assert all(sid in str(info.value) for sid in scenario_ids())  # lists the valid ones
    with pytest.raises(ValueError, match="unknown scenario"):
        scenario_record("nope")


def test_one_task_takes_a_name_a_list_or_a_comma_string() -> None:
    """``-T scenarios=`` replaces the per-scenario tasks; the ids are the scenario ids."""
    every = causalgame(sandbox="none")
    assert [s.id for s in every.dataset] == scenario_ids()
    assert len(scenario_ids()) == 14
    assert every.version == VERSION == "1.4.0"
    for sid in scenario_ids():
        one = causalgame(scenarios=sid, sandbox="none")
        assert [s.id for s in one.dataset] == [sid]
        assert one.dataset[0].metadata["scenario"] == sid  # type: ignore[index]
    pair = ["weather_noise", "antenna_trap"]
    assert parse_scenarios(pair) == pair  # Inspect splits ``-T scenarios=a,b`` into a list
    assert parse_scenarios("weather_noise, antenna_trap") == pair
    assert parse_scenarios(["weather_noise,antenna_trap"]) == pair
    assert parse_scenarios("antenna_trap,antenna_trap") == ["antenna_trap"]
    assert parse_scenarios(None) == parse_scenarios("") == scenario_ids()


def test_scenario_record_is_a_copy_of_the_data_file() -> None:
    record = scenario_record("antenna_trap")
    assert record == json.loads((DATA_DIR / "scenarios" / "antenna_trap.json").read_text())
    record["title"] = "changed"
    assert scenario_record("antenna_trap")["title"] != "changed"


@pytest.mark.parametrize("target", ["benchmarks/causalgame", "harness/causalgame"])
@pytest.mark.slow
def test_the_cli_runs_one_scenario(tmp_path: Path, target: str) -> None:
    """``inspect eval harness/causalgame -T scenarios=antenna_trap`` (what the README shows)."""
    import subprocess
    import sys

    inspect = Path(sys.executable).parent / "inspect"
    done = subprocess.run(
        [str(inspect), "eval", target, "-T", "scenarios=antenna_trap",
         "-T", "epochs=1", "-T", "sandbox=none", "--model", "none",
         "--solver", "benchmarks/causalgame/agents.py@oracle", "--log-dir", str(tmp_path),
         "--display", "none", "--log-format", "json"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    (log_file,) = tmp_path.glob("*.json")
    log = json.loads(log_file.read_text())
    assert log["status"] == "success"
    assert log["eval"]["task_version"] == VERSION
    assert [s["id"] for s in log["samples"]] == ["antenna_trap"]


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot start here")
@pytest.mark.slow
def test_analysis_tool_runs_pandas_in_bwrap(tmp_path: Path) -> None:
    steps = json.dumps(
        [
            {
                "tool": "analyze",
                "arguments": {
                    "code": "import pandas as pd\nprint(len(pd.read_csv('history.csv')))"
                },
            },
            {"tool": "analyze", "arguments": {"code": "while True: pass"}},
            "done",
        ]
    )
    log = inspect_eval(
        causalgame(epochs=1, scenarios="antenna_trap_no_selection_bias"),
        model="scripted/sequence",
        model_args={"steps": steps},
        log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.status == "success", log.error
    tools = [m for m in (log.samples or [])[0].messages if m.role == "tool"]
    assert tools[0].text.strip() == "50"
    assert tools[1].error is not None and "10 s" in tools[1].error.message


def _metrics(log: EvalLog) -> dict[str, float]:
    scores = log.results.scores  # type: ignore[union-attr]
    return {f"{s.name}/{k}": m.value for s in scores for k, m in s.metrics.items()}


def test_published_protocol_counts_an_unsubmitted_run_as_na(tmp_path: Path) -> None:
    log = _run(tmp_path, model="scripted/chatter", epochs=1, scenarios="antenna_trap",
               protocol="published")
    score = _score((log.samples or [])[0])
    assert score.value["survival"] is None and score.value["victory"] is None
    assert score.value["na"] == 1.0
    assert score.metadata["submitted"] is False and score.metadata["protocol"] == "published"
    assert score.metadata["compat"] == "original"  # the released game
    assert log.eval.task_args["protocol"] == "published"
    metrics = _metrics(log)
    assert metrics["na/episode_count"] == 1.0
    assert math.isnan(metrics["survival/episode_mean"])


def test_published_protocol_needs_the_released_game() -> None:
    with pytest.raises(ValueError, match="original"):
        causalgame(scenarios="antenna_trap", protocol="published", compat="intended")
    with pytest.raises(ValueError, match="mode"):
        causalgame(scenarios="antenna_trap", mode="chat")


def test_prompting_mode_answers_a_design_without_tools(tmp_path: Path) -> None:
    steps = json.dumps([
        'Antenna emission draws detection.\n{"design": {"antenna_def": 0, "camera_def": 10, '
        '"gun_def": 10}, "equipment": {}}',
        "Report: stealth works; uncertain about the gun.",
    ])
    log = inspect_eval(
        causalgame(epochs=1, scenarios="antenna_trap", protocol="published", mode="prompting"),
        model="scripted/sequence", model_args={"steps": steps}, log_dir=str(tmp_path),
        display="none",
    )[0]
    assert log.status == "success", log.error
    sample = (log.samples or [])[0]
    assert not any(m.role == "tool" for m in sample.messages)
    score = _score(sample)
    assert score.value["survival"] > 0.85 and score.value["na"] == 0.0
    assert score.metadata["deploys"] == 0


def test_parse_design_takes_the_last_design_object() -> None:
    text = 'first {"design": {"a_def": 1}} then {"antenna_def": 3, "engine_def": 4} end'
    assert parse_design(text) == ({"antenna_def": 3, "engine_def": 4}, {})
    assert parse_design('{"design": {"x_def": 2}, "equipment": {"coating": "stealth"}}') == (
        {"x_def": 2}, {"coating": "stealth"})
    assert parse_design("no json here") is None


def test_opencode_agent_option_runs_the_tools(tmp_path: Path) -> None:
    log = _run(tmp_path, model="scripted/causalgame-oracle", epochs=1, scenarios="antenna_trap",
               agent="opencode")
    score = _score((log.samples or [])[0])
    assert score.value["victory"] == 1.0 and score.metadata["auto_submitted"] is False


def test_no_explore_baseline_deploys_randomly_then_asks_the_model(tmp_path: Path) -> None:
    steps = json.dumps(['{"design": {"shield_def": 25}, "equipment": '
                        '{"enhancement_module": "signal_filter"}}', "report"])
    log = inspect_eval(
        causalgame(epochs=1, scenarios="deployment_zone_trap_categorical", protocol="published",
                   mode="prompting"),
        model="scripted/sequence", model_args={"steps": steps}, solver=agents.no_explore(),
        log_dir=str(tmp_path), display="none",
    )[0]
    assert log.status == "success", log.error
    score = _score((log.samples or [])[0])
    assert score.metadata["deploys"] == 10 and score.metadata["drones_used"] == 200
    assert score.value["survival"] is not None


def test_three_judges_are_averaged_with_reasoning_and_evidence(tmp_path: Path) -> None:
    from inspect_ai.model import get_model

    def judge(verdict: str) -> Any:
        reply = {c: {"verdict": verdict, "reasoning": f"{c} {verdict}", "evidence": ["x"]}
                 for c in ("CR1", "CR2", "CR3", "ED1", "RQ1", "DU1")}
        return get_model("scripted/sequence", steps=json.dumps([json.dumps(reply)]))

    log = inspect_eval(
        causalgame(epochs=1, scenarios="antenna_trap", sandbox="none"),
        model="scripted/causalgame-oracle", log_dir=str(tmp_path), display="none",
        model_roles={"judge": judge("SATISFIED"), "judge2": judge("NOT_SATISFIED"),
                     "judge3": judge("PARTIALLY_SATISFIED")},
    )[0]
    assert log.status == "success", log.error
    score = _score((log.samples or [])[0])
    assert score.value["rubric"] == pytest.approx(0.5)
    assert score.metadata["grader"].startswith("judges:")
    judgements = score.metadata["judgements"]
    assert len(judgements) == 3
    assert judgements[0]["criteria"]["CR1"] == {
        "verdict": "SATISFIED", "score": 1.0, "reasoning": "CR1 SATISFIED", "evidence": ["x"]}


def test_parse_judgement_and_trajectory_summary() -> None:
    from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser

    got = parse_judgement('{"CR1": {"verdict": "satisfied", "reasoning": "r"}, "CR2": "?"}')
    assert got["CR1"]["score"] == 1.0 and got["CR1"]["reasoning"] == "r"
    assert got["CR2"]["verdict"] == "MISSING" and got["DU1"]["score"] == 0.0
    cut = parse_judgement('```json\n{"CR1": {"verdict": "SATISFIED", "reasoning": "a"},\n'
                          '"CR2": "NOT_SATISFIED", "CR3": {"verdict": "PARTIALLY_SAT')
    assert cut["CR1"]["score"] == 1.0 and cut["CR2"]["verdict"] == "NOT_SATISFIED"
    assert cut["CR3"]["verdict"] == "MISSING"  # cut short: the completed criteria are kept
    messages: list[ChatMessage] = [ChatMessageUser(content="u" * 5000),
                                   ChatMessageAssistant(content="a" * 5000)]
    short = trajectory_summary(messages, budget=1000)
    assert "[...]" in short and short.count("\n") == 1 and len(short) < 1200


RANDOM_LOG = (Path(__file__).resolve().parents[3] / "leaderboards" / "causalgame_validation"
              / "logs" / "causalgame" / "published-baselines--benchmarks_causalgame_agents_random")
"""Committed with the repository (the validation board's logs): the test runs, never skips."""


def test_rejudging_logged_episodes_gives_an_icc() -> None:
    """``benchmarks.causalgame.judges`` on a committed log, with three scripted judges."""
    import asyncio

    from benchmarks.causalgame.judges import agreement, episodes, judge_all, parse_judge

    eps = episodes([str(RANDOM_LOG)], limit=3)
    assert len(eps) == 3 and all(e["final"] is not None for e in eps)

    def spec(verdict: str) -> str:
        reply = {c: {"verdict": verdict, "reasoning": "r", "evidence": []}
                 for c in ("CR1", "CR2", "CR3", "ED1", "RQ1", "DU1")}
        return "scripted/sequence;steps=" + json.dumps([json.dumps(reply)])

    assert parse_judge("embedded/x;n_ctx=8192") == ("embedded/x", {"n_ctx": 8192})
    judges = [spec("SATISFIED"), spec("SATISFIED"), spec("NOT_SATISFIED")]
    results = asyncio.run(judge_all(eps, judges, budget=2000, max_tokens=50))
    assert [r["failure_mode"] for r in results] == ["D"] * 3  # 2/3 on every criterion
    out = agreement(results)
    assert out["criterion_level"]["n_items"] == 18 and out["criterion_level"]["n_judges"] == 3
    assert out["missing_verdicts"] == 0
