"""The CausalGame tasks end to end with reference solvers and scripted models (offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.solver import Solver

import benchmarks.causalgame.policies  # noqa: F401  (registers scripted/causalgame-*)
from benchmarks.causalgame import agents
from benchmarks.causalgame.causalgame import (
    VERSION,
    causalgame,
    parse_scenarios,
    record_to_sample,
)
from benchmarks.causalgame.scorer import parse_verdicts
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
    assert every.version == VERSION == "1.1.0"
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
