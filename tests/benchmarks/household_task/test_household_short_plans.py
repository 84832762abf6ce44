"""Short-plan household episodes (issue 49): the difficulty the 1.5B LightWM study runs.

``household(min_steps=2, max_steps=5, goal_kinds="place,clean")`` keeps only seeds whose
goal kind can have a plan that short, found by :func:`goal_kind_of` before any house is
searched; these check that the walk is seeded, its plans are optimal and inside the bound,
and that a bound a kind cannot reach fails loudly rather than looping.
"""

from __future__ import annotations

import pytest

from benchmarks.paper_tasks.household.household import household, instance_records
from environments.household import Instance, generate, shortest_plan, verify
from environments.household.generate import goal_kind_of


def test_goal_kind_of_is_the_kind_generate_draws() -> None:
    for seed in (0, 1, 2, 5, 1_000_000, 1_000_001, 1_000_007):
        assert goal_kind_of(seed) == generate(seed).goal.kind


def test_short_plan_episodes_are_seeded_optimal_and_in_bounds() -> None:
    first = instance_records(8, "test", 0, 2, 5, "place,clean")
    assert first == instance_records(8, "test", 0, 2, 5, "place,clean")
    seeds = [r["seed"] for r in first]
    assert len(set(seeds)) == 8 and seeds == sorted(seeds)
    for record in first:
        inst = Instance.from_dict(record)
        assert inst.goal.kind in {"place", "clean"}
        plan = shortest_plan(inst)
        assert plan is not None and len(plan) == inst.optimal and 2 <= inst.optimal <= 5
        assert verify(inst, plan).success
    # skipped seeds are exactly those of other kinds, in order
    kept = [s for s in range(1_000_000, seeds[-1] + 1) if goal_kind_of(s) in {"place", "clean"}]
    assert kept == seeds
    # another start seed walks to other episodes
    later = instance_records(3, "test", seeds[-1] - 1_000_000 + 1, 2, 5, "place,clean")
    assert not {r["seed"] for r in later} & set(seeds)


def test_the_task_carries_the_bound_and_rejects_an_unreachable_one() -> None:
    task = household(n=4, min_steps=2, max_steps=5, goal_kinds="place", step_limit=8)
    optimal = [s.metadata["optimal"] for s in task.dataset if s.metadata]
    assert len(optimal) == 4 and all(2 <= o <= 5 for o in optimal)
    first = task.dataset[0].input
    assert not isinstance(first, str) and "steps=2-5" in first[0].text
    with pytest.raises(RuntimeError, match="no instance with a 2-5 step plan"):
        household(n=1, min_steps=2, max_steps=5, goal_kinds="heat")


def test_call_hint_adds_the_format_line_before_the_episode_line() -> None:
    from benchmarks.paper_tasks.household.household import CALL_HINT

    plain = household(n=1, min_steps=2, max_steps=5, goal_kinds="place").dataset[0].input
    hinted = household(n=1, min_steps=2, max_steps=5, goal_kinds="place",
                       call_hint=True).dataset[0].input
    assert not isinstance(plain, str) and not isinstance(hinted, str)
    assert CALL_HINT not in plain[0].text
    lines = hinted[0].text.splitlines()
    assert lines[-1] == plain[0].text.splitlines()[-1]  # the episode line the oracle reads
    assert lines[0].endswith(CALL_HINT)
    assert hinted[1].text == plain[1].text
