"""The generator's speed-ups reuse work, never change it (issue 47: the set must stay
byte-identical from its seed).

A model built on a cached frame must be the very CP-SAT model a fresh build gives (the
same proto text, so the same deterministic search), and a plan read from the family's
memo must be the plan a fresh solve gives.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from ortools.sat.python import cp_model

from environments.worldtravel import planners, solver
from environments.worldtravel.model import World
from environments.worldtravel.planners import _Prefix, local_constraints
from environments.worldtravel.scenario import GLOBAL_KINDS, Scenario
from environments.worldtravel.store import shipped_scenarios, shipped_world


@pytest.fixture(scope="module")
def world() -> World:
    return shipped_world()


def _sample() -> list[Scenario]:
    """One scenario of each trip length, one of them with two cities."""
    out: dict[int, Scenario] = {}
    for sc in shipped_scenarios():
        if sc.days not in out and (sc.days < 3 or len(sc.cities) == 2):
            out[sc.days] = sc
    return [out[d] for d in sorted(out)]


def _builders(world: World, sc: Scenario) -> Iterator[tuple[str, Callable[[], solver._Model]]]:
    """Every kind of model the generator and the family build on a scenario's frame."""
    yield "local", lambda: solver._Model(world, sc, local_constraints(sc))
    yield "all", lambda: solver._Model(world, sc, sc.constraints)
    soft = frozenset(GLOBAL_KINDS)
    yield "soft", lambda: solver._Model(world, sc, sc.constraints, soft=soft)
    for upto in (0, 2, 5):
        for drop in (False, True):
            yield f"prefix-{upto}-{drop}", functools.partial(_Prefix, world, sc, upto, drop=drop)


def _fresh(make: Callable[[], solver._Model], monkeypatch: pytest.MonkeyPatch) -> str:
    """The proto text of a model built with the frame cache off."""
    with monkeypatch.context() as patch:
        patch.setattr(solver._frames, "get", lambda *args: None)
        model = make()
    solver.set_objective(model, "cost")
    return str(model.m.proto)


@pytest.mark.parametrize("sc", _sample(), ids=lambda s: s.id)
def test_a_model_on_a_cached_frame_is_the_fresh_model(
    world: World, sc: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = {name: _fresh(make, monkeypatch) for name, make in _builders(world, sc)}
    solver._frames.clear()
    for _ in range(2):  # the first model of the frame builds it, every later one clones it
        for name, make in _builders(world, sc):
            model = make()
            solver.set_objective(model, "cost")
            assert str(model.m.proto) == fresh[name], name
    assert solver._frames.get(world, sc, sc.constraints) is not None


def test_the_frame_cache_tells_frames_apart(world: World) -> None:
    a, b = _sample()[:2]
    solver._frames.clear()
    solver._Model(world, a, a.constraints)
    assert solver._frames.get(world, a, a.constraints) is not None
    assert solver._frames.get(world, b, b.constraints) is None
    # a candidate filter changes the frame; a global constraint does not
    assert solver._frames.get(world, a, local_constraints(a)) is not None
    narrower = [c for c in a.constraints if c.kind not in solver.FRAME_KINDS]
    if len(narrower) < len(a.constraints):
        assert solver._frames.get(world, a, narrower) is None
    # another world object never shares a frame, even with the same content
    other = World(**world.__dict__)
    assert solver._frames.get(other, a, a.constraints) is None


def test_a_dropped_prefix_model_does_not_depend_on_its_horizon(world: World) -> None:
    """What lets the two lookaheads share solves once both dropped the globals."""
    for sc in _sample():
        texts = {str(_Prefix(world, sc, upto, drop=True).m.proto) for upto in (0, 1, 4, 99)}
        assert len(texts) == 1, sc.id
        assert str(_Prefix(world, sc, 1).m.proto) != str(_Prefix(world, sc, 4).m.proto)


def _count_solves(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = cp_model.CpSolver.solve

    def counted(self: cp_model.CpSolver, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cp_model.CpSolver, "solve", counted)
    return calls


def test_the_family_reads_repeated_solves_from_its_memo(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    sc = _sample()[1]
    planners._memo.clear()
    cold = {
        "beam": planners.beam_plan(world, sc),
        "lookahead-3": planners.lookahead_plan(world, sc, 3),
    }
    calls = _count_solves(monkeypatch)
    planners._memo.clear()
    assert planners.shortcut_plan(world, sc, "cost") == planners.PLANNERS["shortcut-cost"](
        world, sc
    )
    warm_beam = len(calls)
    assert planners.beam_plan(world, sc) == cold["beam"]
    beam_solves = len(calls) - warm_beam
    planners.lookahead_plan(world, sc, 1)
    before = len(calls)
    assert planners.lookahead_plan(world, sc, 3) == cold["lookahead-3"]
    la3_solves = len(calls) - before
    # fresh: the beam makes its own first solve and lookahead-3 all of its own
    planners._memo.clear()
    before = len(calls)
    planners.beam_plan(world, sc)
    assert len(calls) - before == beam_solves + 1
    before = len(calls)
    planners.lookahead_plan(world, sc, 3)
    assert len(calls) - before >= la3_solves
    # a plan handed out from the memo is the caller's own copy
    first = planners.lookahead_plan(world, sc, 3)
    first["days"].clear()
    assert planners.lookahead_plan(world, sc, 3) == cold["lookahead-3"]


def test_the_lean_model_class_builds_the_very_proto_of_ortools_own(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``solver._CpModel`` only skips OR-Tools' camelCase aliases (issue 47 generation
    time): every model kind, built fresh and cloned from a cached frame, has the proto
    ``cp_model.CpModel`` gives, so every solve is unchanged."""
    sc = _sample()[2]
    lean = {name: _fresh(make, monkeypatch) for name, make in _builders(world, sc)}
    with monkeypatch.context() as patch:
        patch.setattr(solver, "_CpModel", cp_model.CpModel)
        stock = {name: _fresh(make, monkeypatch) for name, make in _builders(world, sc)}
    assert lean == stock
    solver._frames.clear()  # frames cached under the stock class
    model = solver._Model(world, sc, sc.constraints)
    twin = model.m.clone()
    assert isinstance(model.m, solver._CpModel) and isinstance(twin, solver._CpModel)
    assert str(twin.proto) == str(model.m.proto)
    assert not hasattr(model.m, "AddBoolOr") and hasattr(cp_model.CpModel(), "AddBoolOr")
