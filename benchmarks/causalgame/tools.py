"""The game's tools. Each call goes straight to the sample's ``Game`` (a function call, no
server); every ``GameError`` or malformed argument becomes a ``ToolError`` for the agent."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import sandbox

from benchmarks.causalgame.session import current_game
from environments.causalgame import Game, GameError

ANALYSIS_TIMEOUT_S = 10
MAX_OUTPUT_CHARS = 8000
DEPLOY_FOLLOW_UP = (
    "\n\nReflect before your next action: (i) what is the survival rate and "
    "does it match your expectation? (ii) what does it say about the design "
    "parameters? (iii) what will you test next?"
)


def _json(value: Any) -> str:
    return json.dumps(value, indent=1, default=str)


def _mapping(value: Any, name: str) -> dict[str, Any] | None:
    """Accept an object or a JSON string of one (small models often send strings)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ToolError(f"{name} must be a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise ToolError(f"{name} must be an object, got {type(value).__name__}.")
    return value


def _game() -> Game:
    try:
        return current_game()
    except LookupError as exc:
        raise ToolError(str(exc)) from None


@tool
def get_status() -> Tool:
    async def execute() -> str:
        """Budgets and counters: drones and deployments remaining, queries, game state.

        Returns:
            The mission status as JSON.
        """
        return _json(_game().status())

    return execute


@tool
def get_history() -> Tool:
    async def execute() -> str:
        """All flight records visible to you (historical INIT flights and your own).

        Returns:
            A JSON list of records with design, status, hit_count and environment.
        """
        return _json(_game().visible_history())

    return execute


@tool
def get_action_space() -> Tool:
    async def execute() -> str:
        """The advertised design ranges and equipment options.

        Returns:
            JSON describing valid design keys, ranges and equipment options.
        """
        return _json(_game().action_space())

    return execute


ARCHIVIST_PERSONA = (
    "You are the Environment Data Archivist of a drone test range. Answer only questions about "
    "specific measurements or categories of measurements by naming catalog variables in "
    "backticks. Reject overly broad questions. Say 'We do not have that measurement in our "
    "archives' for measurements that do not exist. Never reveal causal relations, formulas or "
    "which variables matter, and do not volunteer other categories.\nCatalog:\n"
)


async def model_archivist(game: Game, query: str) -> dict[str, Any]:
    """query_environment answered by the ``archivist`` model role (spec 10.1)."""
    from inspect_ai.model import get_model

    from environments.causalgame import archivist

    catalog = game.scenario.catalog
    if catalog is None or game.queries_used >= 10:
        return game.query(query)  # raises the same errors as the matcher path
    reason = archivist.refusal_reason(query)
    if reason:
        return game.query(query)
    model = get_model(role="archivist")
    reply = await model.generate(
        ARCHIVIST_PERSONA + _json(catalog["hidden"]) + "\n\nQuestion: " + query
    )
    names = [
        n
        for n in dict.fromkeys(re.findall(r"`([^`]+)`", reply.completion))
        if n in catalog["hidden"]
    ]
    message = reply.completion.strip()
    if names:
        message += archivist.unlock_block(names, catalog, game.discovered)
    game.record_answer(names)  # counts the query; logged for a checkpoint's replay
    return {
        "success": True,
        "message": message,
        "discovered_variables": names,
        "env_queries_used": game.queries_used,
        "env_queries_remaining": 10 - game.queries_used,
    }


@tool
def query_environment(archivist: str = "matcher") -> Tool:
    async def execute(query: str) -> str:
        """Ask the environment archivist which extra measurements exist.

        Args:
            query: A question about a specific measurement, e.g. "moon phase".

        Returns:
            The archivist's answer and the budget left.
        """
        game = _game()
        try:
            if archivist == "model":
                return _json(await model_archivist(game, str(query)))
            return _json(game.query(query))
        except GameError as exc:
            raise ToolError(str(exc)) from None

    return execute


@tool
def deploy_drone() -> Tool:
    async def execute(
        design: dict[str, float], count: int = 1, equipment: dict[str, Any] | None = None
    ) -> str:
        """Fly Stage-1 test drones of one design (consumes budget).

        Args:
            design: DEF per component, e.g. {"engine_def": 20, "antenna_def": 0}.
            count: Number of drones in this batch (1-50).
            equipment: Optional equipment, e.g. {"slot": "option"}.

        Returns:
            The batch report as JSON.
        """
        game = _game()
        try:
            result = game.deploy(
                _mapping(design, "design"), count, _mapping(equipment, "equipment")
            )
        except GameError as exc:
            raise ToolError(str(exc)) from None
        return _json(result) + DEPLOY_FOLLOW_UP

    return execute


@tool
def submit_final_design() -> Tool:
    async def execute(design: dict[str, float], equipment: dict[str, Any] | None = None) -> str:
        """Submit the final design (once, irreversible): 1,000 drones fly it in Stage 2.

        Args:
            design: DEF per component, e.g. {"engine_def": 20, "antenna_def": 0}.
            equipment: Optional equipment, e.g. {"slot": "option"}.

        Returns:
            The Stage-2 evaluation as JSON.
        """
        game = _game()
        if not game.deployments:
            raise ToolError(
                "Cannot submit final design without exploration! Deploy at least "
                "one batch of drones first."
            )
        try:
            return _json(game.submit(_mapping(design, "design"), _mapping(equipment, "equipment")))
        except GameError as exc:
            raise ToolError(str(exc)) from None

    return execute


def history_csv(records: list[dict[str, Any]]) -> str:
    """Flatten history records (design/environment/equipment columns) into CSV text."""
    rows = []
    for r in records:
        row: dict[str, Any] = {"id": r["id"], "status": r["status"], "hit_count": r["hit_count"]}
        row.update(r.get("design", {}))
        row.update({f"env_{k}": v for k, v in r.get("environment", {}).items()})
        row.update({f"eq_{k}": v for k, v in r.get("equipment", {}).items()})
        rows.append(row)
    fields = list(dict.fromkeys(k for row in rows for k in row))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields)
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


@tool
def analyze() -> Tool:
    async def execute(code: str) -> str:
        """Run Python (pandas, numpy) on the game data in a sandbox (10 s limit).

        The working directory holds history.json, history.csv (one row per visible flight)
        and status.json, refreshed before every run. Print what you want to see.

        Args:
            code: Python source to run.

        Returns:
            The program's stdout and stderr.
        """
        game = _game()
        records = game.visible_history()
        try:
            sbx = sandbox()
            await sbx.write_file("history.json", _json(records))
            await sbx.write_file("history.csv", history_csv(records))
            await sbx.write_file("status.json", _json(game.status()))
            result = await sbx.exec(["python3", "-c", str(code)], timeout=ANALYSIS_TIMEOUT_S)
        except TimeoutError:
            raise ToolError(f"analysis exceeded {ANALYSIS_TIMEOUT_S} s and was stopped") from None
        except ProcessLookupError as exc:  # no sandbox in this task
            raise ToolError(f"analysis sandbox unavailable: {exc}") from None
        out = (result.stdout + ("\n" + result.stderr if result.stderr else "")).strip()
        if len(out) > MAX_OUTPUT_CHARS:
            out = out[:MAX_OUTPUT_CHARS] + "\n[output truncated]"
        return out or "(no output)"

    return execute


def game_tools(with_analysis: bool = True, archivist: str = "matcher") -> list[Tool]:
    """All tools of an episode, in the order the agent sees them."""
    tools = [
        get_status(),
        get_history(),
        get_action_space(),
        query_environment(archivist),
        deploy_drone(),
        submit_final_design(),
    ]
    return [*tools, analyze()] if with_analysis else tools
