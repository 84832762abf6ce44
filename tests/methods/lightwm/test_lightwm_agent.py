"""LightWM end to end on CausalGame with scripted models (offline, ~seconds).

The scripted experimenter knows only what the agent shows it, so a finished episode
proves that the action space and every experiment were patched into the local states and
handed over to the submitting subtask.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ChatMessage, GenerateConfig
from inspect_ai.solver import Solver
from inspect_ai.tool import ToolInfo

from benchmarks.causalgame.causalgame import causalgame
from harness.models.scripted import PolicyResult, scripted_policy
from methods.lightwm import lightwm
from methods.lightwm.agent import STORE_KEY
from methods.lightwm.policies import experimenter_step

SCENARIOS = "antenna_trap_high_def,weather_noise"
BAD_PATCH = '[{"op": "add", "path": "/nope", "value": 1}]'


@scripted_policy("test-lightwm-bad-updater")
def bad_updater(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """The experimenter, except that every state update it writes is invalid."""
    if "[lightwm:update]" in input[0].text:
        return BAD_PATCH
    return experimenter_step(input, tools, args)


def _run(tmp: Path, model: str, solver: Solver) -> EvalLog:
    task = causalgame(epochs=1, sandbox="none", scenarios=SCENARIOS)
    log = inspect_eval(task, model=model, solver=solver, log_dir=str(tmp), display="none")[0]
    assert log.status == "success", log.error
    return read_eval_log(log.location, resolve_attachments=True)  # prompts in full


def _scores(log: EvalLog) -> dict[str, dict[str, Any]]:
    return {str(s.id): next(iter((s.scores or {}).values())).metadata or {}
            for s in log.samples or []}


def test_lightwm_completes_episodes_with_the_induced_schema(tmp_path: Path) -> None:
    log = _run(tmp_path, "scripted/lightwm-experimenter", lightwm(schema="causalgame"))
    for sample in log.samples or []:
        meta = next(iter((sample.scores or {}).values())).metadata or {}
        assert meta["auto_submitted"] is False  # the agent itself submitted
        assert meta["deploys"] >= 3  # default + one-factor variants + combination
        state = sample.store[STORE_KEY]
        assert state["submit_final_design_result"]["status"]  # handed over at the end
        assert len(state["deploy_drone_results"]) == meta["deploys"]
        names = [m.function for m in sample.messages if m.role == "tool"]
        assert names[0] == "get_action_space" and names[-1] == "submit_final_design"
        assert "finish_subtask" in names  # the repeated subtask ended on the model's word


def test_rejected_patches_go_back_to_the_model_with_the_reason(tmp_path: Path) -> None:
    log = _run(tmp_path, "scripted/test-lightwm-bad-updater",
               lightwm(schema="causalgame", patch_retries=1))
    sample = (log.samples or [])[0]
    prompts = [m.text for e in sample.events if e.event == "model" for m in e.input
               if m.role == "user"]
    reason = "field 'nope' is not in this subtask's state"
    retry = [p for p in prompts if "Your previous patch was rejected" in p]
    assert retry and all(reason in p for p in retry)
    acts = [p for p in prompts if "Rejected updates (fix these)" in p]
    assert acts and reason in acts[0]
    # the deterministic patches still recorded everything: the episode completes
    assert all(m["auto_submitted"] is False for m in _scores(log).values())


def test_updater_rules_only_makes_no_update_calls(tmp_path: Path) -> None:
    log = _run(tmp_path, "scripted/lightwm-experimenter",
               lightwm(schema="causalgame", updater="rules"))
    sample = (log.samples or [])[0]
    systems = [e.input[0].text for e in sample.events if e.event == "model"]
    assert not any("[lightwm:update]" in s for s in systems)
    assert sum("[lightwm:fill]" in s for s in systems) == 1
    assert all(m["auto_submitted"] is False for m in _scores(log).values())


def test_generic_schema_runs_any_task_but_forgets_what_it_learned(tmp_path: Path) -> None:
    """Control: the generic schema keeps only the last observation, so the experimenter
    loses its experiments from view and never gets to submit within the step budget."""
    log = _run(tmp_path, "scripted/lightwm-experimenter", lightwm(schema=None, max_steps=12))
    for meta in _scores(log).values():
        assert meta["deploys"] >= 2  # it acted through the task's tools ...
    for sample in log.samples or []:
        names = [m.function for m in sample.messages if m.role == "tool"]
        assert "submit_final_design" not in names  # ... but could not conclude
