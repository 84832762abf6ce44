"""LightWM's working memory step by step: fill, local states, patches, rejections, hand-over."""

from __future__ import annotations

import pytest

from methods.lightwm.schema import (
    FieldSpec,
    InitRule,
    Schema,
    Subtask,
    UpdateRule,
    generic_schema,
    load_schema,
)
from methods.lightwm.state import WorkingMemory, parse_observation, substitute


def _schema() -> Schema:
    return Schema(
        family="toy",
        fields={
            "city": FieldSpec(type="string"),
            "budget": FieldSpec(type="integer"),
            "hotels": FieldSpec(type="array"),
            "booking": FieldSpec(type="object"),
        },
        init_rules=[InitRule(field="city", pattern=r"^City: (\w+)$")],
        subtasks=[
            Subtask(name="search", actions=["search_hotels"], expects=["city"],
                    produces=["hotels"], finish="model", max_steps=3,
                    updates=[UpdateRule(tool="search_hotels", op="add", path="/hotels/-",
                                        value={"id": "$observation.id", "q": "$arguments"})]),
            Subtask(name="book", actions=["book"], expects=["hotels", "budget"],
                    produces=["booking"],
                    updates=[UpdateRule(tool="book", path="/booking")]),
        ],
    )


def test_fill_uses_init_rules_then_checks_the_models_proposal() -> None:
    mem = WorkingMemory(_schema())
    reasons = mem.fill("Trip\nCity: Ava\n", {"budget": 300, "colour": "red", "city": "Bri"})
    assert mem.global_state["city"] == "Ava"  # the deterministic rule wins
    assert mem.global_state["budget"] == 300
    assert mem.global_state["hotels"] == []  # arrays start empty
    assert reasons == ["unknown field 'colour'; fields: city, budget, hotels, booking"]

    mem2 = WorkingMemory(_schema())
    assert mem2.fill("no city here", {"budget": "lots"}) == [
        "field 'budget' must be integer, got str"]
    assert mem2.global_state["budget"] is None
    assert mem2.fill("x", ["not", "an", "object"])[0].startswith("the task state must be")


def test_begin_copies_expected_fields_into_a_local_state() -> None:
    mem = WorkingMemory(_schema())
    mem.fill("City: Ava", {"budget": 300})
    local = mem.begin()
    assert local == {"city": "Ava", "hotels": []}  # budget is not expected by 'search'
    local["city"] = "changed"
    assert mem.global_state["city"] == "Ava"  # a copy, not a view
    assert mem.allowed(["search_hotels", "book", "list_cities"]) == ["search_hotels"]


def test_observation_rules_fill_and_model_patches_update_the_local_state() -> None:
    mem = WorkingMemory(_schema())
    mem.fill("City: Ava")
    mem.begin()
    assert mem.observe("search_hotels", {"city": "Ava"}, {"id": "H1", "price": 90}) == []
    assert mem.local["hotels"] == [{"id": "H1", "q": {"city": "Ava"}}]
    assert mem.observe("unrelated_tool", {}, {"id": "X"}) == []  # no rule fires
    assert mem.update([{"op": "add", "path": "/hotels/-", "value": {"id": "H2"}}]) is None
    assert [h["id"] for h in mem.local["hotels"]] == ["H1", "H2"]


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        ([{"op": "add", "path": "/budget", "value": 5}],
         "field 'budget' is not in this subtask's state; writable: city, hotels"),
        ([{"op": "replace", "path": "/city", "value": 7}], "field 'city' must be string, got int"),
        ([{"op": "replace", "path": "", "value": {}}], "patch one field at a time"),
        ([{"op": "remove", "path": "/hotels/3"}], "out of range"),
        ("[garbage", "must be a JSON list"),
    ],
)
def test_bad_patches_are_rejected_whole_with_a_reason(patch: object, reason: str) -> None:
    mem = WorkingMemory(_schema())
    mem.fill("City: Ava")
    mem.begin()
    before = dict(mem.local)
    got = mem.update(patch)
    assert got is not None and reason in got
    assert mem.local == before
    assert mem.pop_rejections() == [got]  # kept for the next prompt, shown once
    assert mem.pop_rejections() == []


def test_subtask_completion_and_hand_over_to_the_next_subtask() -> None:
    mem = WorkingMemory(_schema())
    mem.fill("City: Ava", {"budget": 300})
    mem.begin()
    mem.observe("search_hotels", {}, {"id": "H1"})
    assert not mem.complete()  # 'search' finishes when the model says so ...
    for _ in range(3):
        mem.record_step()
    assert mem.complete()  # ... or when its step budget is spent
    handed = mem.finish()
    assert handed == {"hotels": [{"id": "H1", "q": {}}]}
    assert mem.global_state["hotels"] == [{"id": "H1", "q": {}}]
    assert mem.subtask.name == "book"
    assert mem.local == {"hotels": [{"id": "H1", "q": {}}], "budget": 300, "booking": None}
    assert not mem.complete()
    mem.observe("book", {"id": "H1"}, {"ok": True, "ref": "B-1"})
    assert mem.complete()  # 'book' finishes once its produced field is filled
    mem.finish()
    assert mem.done
    assert mem.global_state["booking"] == {"ok": True, "ref": "B-1"}
    assert [e["event"] for e in mem.events] == [
        "fill", "begin", "patch", "finish", "begin", "patch", "finish"]


def test_templates_and_observation_parsing() -> None:
    assert substitute({"a": "$arguments.x", "b": ["$observation"], "c": 1},
                      {"x": 2}, "obs") == {"a": 2, "b": ["obs"], "c": 1}
    assert parse_observation('{"a": 1}\n\nReflect before acting.') == {"a": 1}
    assert parse_observation("plain text") == "plain text"


def test_schemas_load_by_family_name_or_fall_back_to_generic() -> None:
    assert load_schema(None).family == "generic"
    assert load_schema(generic_schema("x")).family == "x"
    shipped = load_schema("causalgame")
    assert [s.actions for s in shipped.subtasks] == [
        ["get_action_space"], ["deploy_drone"], ["submit_final_design"]]
    with pytest.raises(FileNotFoundError, match="shipped families"):
        load_schema("no-such-family")
