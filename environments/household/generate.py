"""The seeded generator: a house, objects in it and one goal whose optimal plan has 8-20 steps.

Same seed, same instance (one :class:`random.Random` drives every choice). The goal kind is
drawn once per seed (uniform over place/clean/heat/cool/two), then houses are drawn for it;
each draw is
planned with :func:`~environments.household.plan.shortest_plan`; a draw whose optimum is
outside ``[min_steps, max_steps]`` is redrawn from the same generator, so the returned
instance is solvable by construction and carries its optimal length.
"""

from __future__ import annotations

import random

from environments.household.plan import shortest_plan
from environments.household.world import (
    GOAL_KINDS,
    TREATMENT_APPLIANCE,
    Goal,
    GoalKind,
    Instance,
    Receptacle,
)

DEFAULT_MIN_STEPS = 8
DEFAULT_MAX_STEPS = 20
MAX_DRAWS = 200

OPENABLE = frozenset({"fridge", "microwave", "cabinet", "drawer"})
ROOM_FIXED = {"kitchen": ["fridge", "microwave", "sinkbasin", "countertop"],
              "livingroom": ["sofa"], "bedroom": ["bed"], "bathroom": ["sinkbasin"]}
ROOM_EXTRA = {
    "kitchen": ["cabinet", "cabinet", "drawer", "countertop", "coffeemachine", "diningtable",
                "shelf", "stoveburner", "garbagecan"],
    "livingroom": ["coffeetable", "shelf", "drawer", "tvstand", "armchair", "cabinet"],
    "bedroom": ["desk", "dresser", "shelf", "drawer", "garbagecan"],
    "bathroom": ["cabinet", "countertop", "toilet", "towelholder", "drawer"],
}
DISHES = ("mug", "cup", "bowl", "plate")
FOOD = ("apple", "egg", "potato", "tomato", "bread")
THINGS = ("book", "pen", "cellphone", "keychain", "remotecontrol", "candle", "cloth",
          "soapbar", "spraybottle")
TREATABLE = {
    "clean": ("mug", "cup", "bowl", "plate", "apple", "tomato", "potato", "cloth"),
    "heat": ("mug", "cup", "bowl", "apple", "egg", "potato", "tomato", "bread"),
    "cool": ("mug", "cup", "bowl", "plate", "apple", "egg", "potato", "tomato", "bread"),
}
STARTS = {  # receptacle kinds an object kind may start in or on
    "dish": ("cabinet", "countertop", "diningtable", "shelf", "drawer", "sinkbasin"),
    "food": ("fridge", "countertop", "diningtable", "cabinet"),
    "thing": ("shelf", "drawer", "desk", "dresser", "sofa", "bed", "coffeetable", "tvstand",
              "armchair", "cabinet", "countertop", "toilet", "towelholder"),
}
TARGETS = {
    "dish": ("countertop", "diningtable", "coffeemachine", "cabinet", "shelf", "fridge"),
    "food": ("countertop", "diningtable", "fridge", "microwave", "garbagecan", "cabinet"),
    "thing": ("shelf", "drawer", "desk", "dresser", "sofa", "bed", "coffeetable", "cabinet",
              "garbagecan", "countertop"),
}


def _class(kind: str) -> str:
    return "dish" if kind in DISHES else "food" if kind in FOOD else "thing"


def _house(rng: random.Random) -> tuple[tuple[str, ...], tuple[Receptacle, ...]]:
    others = rng.sample(["livingroom", "bedroom", "bathroom"], rng.randint(1, 2))
    rooms = ["kitchen", *others]
    rng.shuffle(rooms)
    counts: dict[str, int] = {}
    recs: list[Receptacle] = []
    for room in rooms:
        kinds = ROOM_FIXED[room] + rng.sample(ROOM_EXTRA[room], rng.randint(2, 4))
        for kind in kinds:
            counts[kind] = counts.get(kind, 0) + 1
            recs.append(Receptacle(f"{kind} {counts[kind]}", kind, room, kind in OPENABLE))
    return tuple(rooms), tuple(recs)


def _draw(rng: random.Random, seed: int, gkind: GoalKind) -> Instance:
    rooms, recs = _house(rng)
    if gkind in TREATABLE:
        obj = rng.choice(TREATABLE[gkind])
    else:
        obj = rng.choice(DISHES + FOOD + THINGS)
    targets = [r for r in recs if r.kind in TARGETS[_class(obj)]
               and (gkind not in TREATMENT_APPLIANCE or r.kind != TREATMENT_APPLIANCE[gkind])]
    target = rng.choice(targets)
    need = 2 if gkind == "two" else 1
    pool = [k for k in DISHES + FOOD + THINGS if k != obj]
    kinds = [obj] * (need + rng.randint(0, 1)) + rng.sample(pool, rng.randint(3, 6))
    numbers: dict[str, int] = {}
    objects: list[tuple[str, str, str]] = []
    for kind in kinds:
        starts = [r.name for r in recs if r.kind in STARTS[_class(kind)]
                  and not (kind == obj and r.name == target.name)]
        if not starts:
            starts = [r.name for r in recs if r.name != target.name]
        numbers[kind] = numbers.get(kind, 0) + 1
        objects.append((f"{kind} {numbers[kind]}", kind, rng.choice(starts)))
    return Instance(seed=seed, rooms=rooms, receptacles=recs, objects=tuple(objects),
                    start_room=rng.choice(rooms),
                    goal=Goal(kind=gkind, obj=obj, target=target.name, count=need))


def goal_kind_of(seed: int) -> GoalKind:
    """The goal kind :func:`generate` draws for ``seed`` (its generator's first draw).

    Why: a caller that keeps only some kinds (short plans exist only for some: a place goal
    can take 4 actions, a heat goal never fewer than 6) can skip a seed without searching
    :data:`MAX_DRAWS` houses for a plan length that kind cannot reach.
    """
    kind: GoalKind = random.Random(seed).choice(GOAL_KINDS)
    return kind


def generate(seed: int, min_steps: int = DEFAULT_MIN_STEPS,
             max_steps: int = DEFAULT_MAX_STEPS) -> Instance:
    """The instance of ``seed``: solvable, optimal plan length within the bounds."""
    if min_steps > max_steps:
        raise ValueError(f"min_steps {min_steps} exceeds max_steps {max_steps}")
    rng = random.Random(seed)
    gkind: GoalKind = rng.choice(GOAL_KINDS)  # the draw goal_kind_of repeats
    for _ in range(MAX_DRAWS):
        inst = _draw(rng, seed, gkind)
        plan = shortest_plan(inst)
        if plan is not None and min_steps <= len(plan) <= max_steps:
            return Instance(seed=inst.seed, rooms=inst.rooms, receptacles=inst.receptacles,
                            objects=inst.objects, start_room=inst.start_room, goal=inst.goal,
                            optimal=len(plan))
    raise RuntimeError(f"no instance with a {min_steps}-{max_steps} step plan for seed {seed}")
