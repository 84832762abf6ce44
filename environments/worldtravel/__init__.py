"""WorldTravel: a generated five-city travel world, coupled-constraint trip scenarios, an
exact CP-SAT oracle and an independent checker. Pure domain code (no Inspect imports)."""

from environments.worldtravel.checker import check_plan
from environments.worldtravel.model import World
from environments.worldtravel.plan import PLAN_SCHEMA_TEXT, parse_plan
from environments.worldtravel.scenario import KINDS, Constraint, Scenario
from environments.worldtravel.world import generate_world

__all__ = [
    "KINDS",
    "PLAN_SCHEMA_TEXT",
    "Constraint",
    "Scenario",
    "World",
    "check_plan",
    "generate_world",
    "parse_plan",
]
