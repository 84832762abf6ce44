"""WorldTravel: coupled-constraint trip planning in a generated five-city world.

WorldTravel (ICML 2026; no data or code public, rebuilt here from the paper's design):
150 travel scenarios across 5 cities, 8-30 interdependent temporal, logical, resource and
preference constraints each (mean >= 15), where an early decision decides whether later
ones are feasible. The agent reads the request, gathers the facts through search/detail
tools, and submits one itinerary as JSON; a deterministic checker scores every
constraint. Metrics follow TravelPlanner (Xie et al., 2024): delivery, feasibility (final
pass), micro and macro pass rates, plus feasibility by constraint count and the fitted
planning horizon. ``-T constraints=given`` is the oracle-constraint ablation (the formal
constraint list is added to the prompt).

    inspect eval benchmarks/worldtravel --model scripted/worldtravel-oracle
    inspect eval benchmarks/worldtravel --model scripted/worldtravel-greedy -T constraints=given
    inspect eval harness/worldtravel --model embedded/smollm2-135m --limit 10
"""

from __future__ import annotations

import json
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.agent import as_solver, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import use_tools

from benchmarks.worldtravel.scorer import worldtravel_checker
from benchmarks.worldtravel.tools import world_tools
from environments.worldtravel.analysis import bucket
from environments.worldtravel.plan import PLAN_SCHEMA_TEXT
from environments.worldtravel.store import shipped_scenarios
from harness.plugins.benchmark import benchmark
from harness.tool_validity import tool_call_validity

ConstraintMode = Literal["hidden", "given"]
DEFAULT_CONSTRAINTS: ConstraintMode = "hidden"
DEFAULT_MESSAGE_LIMIT = 80
DEFAULT_MIN_CONSTRAINTS = 0
DEFAULT_MAX_CONSTRAINTS = 100

INSTRUCTIONS = """\
You are a travel planner. Use the tools to look up hotels, restaurants, attractions,
inter-city departures and travel times (opening hours, timed entries, seatings, prices and
rules are only in get_details), then submit one itinerary that satisfies every
requirement of the request."""


def record_to_sample(record: dict[str, Any], constraints: str = DEFAULT_CONSTRAINTS) -> Sample:
    """One scenario record (a line of ``scenarios.jsonl``) as an Inspect sample."""
    parts = [f"Scenario ID: {record['id']}", "", record["request"], "", PLAN_SCHEMA_TEXT]
    if constraints == "given":
        formal = [{k: c[k] for k in ("id", "kind", "params")} for c in record["constraints"]]
        parts += [
            "",
            "The formal constraints your plan will be checked against "
            "(times in minutes after midnight):",
            json.dumps(formal, separators=(",", ":")),
        ]
    n = int(record["n_constraints"])
    return Sample(
        id=record["id"],
        input="\n".join(parts),
        target=str(record["reference_cost"]),
        metadata={
            "n_constraints": n,
            "bucket": bucket(n),
            "family": record["family"],
            "cities": record["cities"],
            "days": record["days"],
            "plans_found": record["plans_found"],
            "constraints_mode": constraints,
        },
    )


@benchmark("worldtravel")
@task
def worldtravel(
    constraints: ConstraintMode = DEFAULT_CONSTRAINTS,
    min_constraints: int = DEFAULT_MIN_CONSTRAINTS,
    max_constraints: int = DEFAULT_MAX_CONSTRAINTS,
    family: str | None = None,
    message_limit: int = DEFAULT_MESSAGE_LIMIT,
) -> Task:
    """The 150 shipped WorldTravel scenarios, text mode, scored by the exact checker.

    Args:
        constraints: ``hidden`` (natural-language request only) or ``given`` (the formal
            constraint list is added: the oracle-constraint ablation).
        min_constraints: Keep scenarios with at least this many constraints.
        max_constraints: Keep scenarios with at most this many constraints.
        family: Keep one home city (AVA, BRI, COR, DUN, EST); None keeps all.
        message_limit: Conversation length limit per sample.
    """
    if constraints not in ("hidden", "given"):
        raise ValueError(f"constraints must be 'hidden' or 'given', got {constraints!r}")
    records = [
        s.to_record()
        for s in shipped_scenarios()
        if min_constraints <= s.n_constraints <= max_constraints
        and (family is None or s.family == family)
    ]
    samples = [record_to_sample(r, constraints) for r in records]
    solver = as_solver(react(prompt=INSTRUCTIONS, tools=world_tools()))
    return Task(
        dataset=MemoryDataset(samples, name=f"worldtravel-{constraints}"),
        # the tools also go on the state, so a replacement agent (--solver) can use them
        setup=use_tools(world_tools()),
        solver=solver,
        scorer=[worldtravel_checker(), tool_call_validity()],
        message_limit=message_limit,
        version="2.1.0",
        metadata={"benchmark": "worldtravel", "constraints": constraints},
    )
