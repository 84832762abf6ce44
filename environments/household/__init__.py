"""A text household (ALFWorld-like) for long-horizon procedure-centric agents. No Inspect.

Seeded instances (rooms, receptacles that open, objects, a goal such as "put a clean mug in
coffeemachine 1" needing 8-20 actions of go/open/take/clean/heat/cool/put), an exact
simulator and verifier, and an optimal planner (BFS)::

    from environments.household import generate, shortest_plan, verify
    inst = generate(seed=3)
    plan = shortest_plan(inst)
    assert verify(inst, plan).success and len(plan) == inst.optimal
    same = Instance.from_dict(inst.to_dict())   # an instance travels as a JSON record
"""

from __future__ import annotations

from environments.household.generate import generate
from environments.household.plan import shortest_plan
from environments.household.sim import (
    State,
    StepResult,
    Verdict,
    goal_reached,
    initial_state,
    intro,
    replay,
    step,
    valid_actions,
    verify,
)
from environments.household.world import Goal, Instance, Receptacle

__all__ = [
    "Goal",
    "Instance",
    "Receptacle",
    "State",
    "StepResult",
    "Verdict",
    "generate",
    "goal_reached",
    "initial_state",
    "intro",
    "replay",
    "shortest_plan",
    "step",
    "valid_actions",
    "verify",
]
