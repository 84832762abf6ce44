"""The household world: seeded determinism, exact rules, and optimal plans checked two ways."""

from __future__ import annotations

import pytest

from environments.household import (
    Goal,
    Instance,
    Receptacle,
    generate,
    goal_reached,
    initial_state,
    intro,
    replay,
    shortest_plan,
    step,
    valid_actions,
    verify,
)


def _tiny() -> Instance:
    """Two rooms, a closed cabinet holding the mug, a sink, the target in the other room."""
    recs = (Receptacle("cabinet 1", "cabinet", "kitchen", True),
            Receptacle("sinkbasin 1", "sinkbasin", "kitchen", False),
            Receptacle("countertop 1", "countertop", "kitchen", False),
            Receptacle("shelf 1", "shelf", "livingroom", False))
    objs = (("mug 1", "mug", "cabinet 1"), ("pen 1", "pen", "countertop 1"))
    return Instance(seed=0, rooms=("kitchen", "livingroom"), receptacles=recs, objects=objs,
                    start_room="livingroom", goal=Goal("clean", "mug", "shelf 1"))


def test_generator_is_deterministic_and_seeds_differ() -> None:
    a, b = generate(7), generate(7)
    assert a.to_dict() == b.to_dict()
    assert intro(a) == intro(b)
    others = {str(generate(s).to_dict()) for s in range(8)}
    assert len(others) == 8


def test_instances_round_trip_and_have_plans_in_bounds() -> None:
    kinds = set()
    for seed in range(30):
        inst = generate(seed)
        assert Instance.from_dict(inst.to_dict()).to_dict() == inst.to_dict()
        plan = shortest_plan(inst)
        assert plan is not None and len(plan) == inst.optimal
        assert 8 <= inst.optimal <= 20
        verdict = verify(inst, plan)
        assert verdict.success and verdict.solved_at == len(plan) and verdict.invalid == 0
        assert not goal_reached(inst, initial_state(inst))
        kinds.add(inst.goal.kind)
    assert kinds == {"place", "clean", "heat", "cool", "two"}
    with pytest.raises(ValueError):
        generate(0, min_steps=12, max_steps=9)


def test_pruned_search_matches_the_search_over_every_valid_action() -> None:
    inst = _tiny()
    full = shortest_plan(inst, pruned=False)
    pruned = shortest_plan(inst)
    assert full is not None and pruned is not None and len(full) == len(pruned)
    assert pruned == ["go kitchen", "go cabinet 1", "open cabinet 1", "take mug 1",
                      "go sinkbasin 1", "clean mug 1", "go livingroom", "go shelf 1",
                      "put mug 1"]
    for seed in (3, 11):  # real instances, cut to the goal's objects to keep the search small
        g = generate(seed)
        keep = tuple(o for o in g.objects if o[1] == g.goal.obj)
        small = Instance(seed=g.seed, rooms=g.rooms, receptacles=g.receptacles, objects=keep,
                         start_room=g.start_room, goal=g.goal)
        a, b = shortest_plan(small, pruned=False), shortest_plan(small)
        assert a is not None and b is not None and len(a) == len(b)


def test_rules_reject_with_reasons_and_leave_the_state_unchanged() -> None:
    inst = _tiny()
    s0 = initial_state(inst)
    for action, why in [("go cabinet 1", "go to the kitchen first"),
                        ("take mug 1", "not here"), ("dance", "unknown action"),
                        ("clean mug 1", "must hold"), ("go attic", "no room or place")]:
        r = step(inst, s0, action)
        assert not r.valid and why in r.observation and r.state == s0
    s = replay(inst, ["go kitchen", "go cabinet 1"])
    closed = step(inst, s, "take mug 1")
    assert not closed.valid and "closed" in closed.observation
    opened = step(inst, s, "open cabinet 1")
    assert opened.valid and "mug 1" in opened.observation
    assert step(inst, opened.state, "take mug 1").valid
    # an unclean mug on the shelf is not the goal; the verifier counts the invalid step
    dirty = ["go kitchen", "go cabinet 1", "open cabinet 1", "take mug 1", "go livingroom",
             "go shelf 1", "put mug 1", "fly"]
    verdict = verify(inst, dirty)
    assert not verdict.success and verdict.invalid == 1 and verdict.steps == 8
    assert set(valid_actions(inst, s0)) == {"go kitchen", "go shelf 1"}


def test_verifier_agrees_with_the_plan_prefixes() -> None:
    inst = generate(5)
    plan = shortest_plan(inst)
    assert plan is not None
    assert not verify(inst, plan[:-1]).success
    assert verify(inst, [*plan, "look", "go kitchen"]).solved_at == len(plan)
