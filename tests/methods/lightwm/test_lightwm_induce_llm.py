"""LLM-based schema induction: robust parsing of a model's reply, and the recorded fallback."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from methods.lightwm.induce import Step, Trace
from methods.lightwm.induce_llm import (
    induce_llm_schema,
    induction_prompt,
    parse_schema_reply,
)
from methods.lightwm.schema import Schema, load_schema
from methods.lightwm.state import WorkingMemory

TOOLS = ["go", "open", "take", "clean", "put"]


def _trace(obj: str) -> Trace:
    steps = [Step("go", {"target": "kitchen"}, "You go to the kitchen."),
             Step("go", {"target": "cabinet 1"}, "You arrive at the cabinet 1."),
             Step("open", {"target": "cabinet 1"}, f"You open it. In it, you see a {obj} 1."),
             Step("take", {"item": f"{obj} 1"}, f"You pick up the {obj} 1."),
             Step("clean", {"item": f"{obj} 1"}, f"You clean the {obj} 1."),
             Step("put", {"item": f"{obj} 1"}, f"You put the {obj} 1 on the shelf 1.")]
    return Trace(goal=f"Rules.\n\nYour task is to: put a clean {obj} on shelf 1.", steps=steps)


MESSY = """Sure! Here is the schema:
```json
{"fields": {"Target Object": "the object to move", "location": {"type": "string"}},
 "subtasks": [
   {"name": "Find object", "actions": ["go(target)", "open", "teleport"],
    "expects": ["goal"], "produces": ["location"]},
   {"name": "take it", "actions": "take", "produces": ["held item"]},
   {"name": "finish", "actions": ["clean", "put(item)"], "expects": "location, held_item"}]}
```
Hope this helps."""


def test_a_messy_reply_is_parsed_and_every_repair_recorded() -> None:
    schema, repairs = parse_schema_reply(MESSY, TOOLS, "household")
    assert [s.name for s in schema.subtasks] == ["1_find_object", "2_take_it", "3_finish"]
    find, take, finish = schema.subtasks
    assert find.actions == ["go", "open"] and take.actions == ["take"]
    assert finish.actions == ["clean", "put"] and finish.expects == ["location", "held_item"]
    assert any("'teleport' dropped" in r for r in repairs)
    assert any("'held_item'" in r and "undeclared" in r for r in repairs)
    assert {"target_object", "location", "held_item", "goal"} <= set(schema.fields)
    assert schema.fields["location"].type == "string"
    # a produced field is filled by a deterministic patch from the subtask's actions
    assert [(u.tool, u.path) for u in find.updates] == [("go", "/location"), ("open", "/location")]
    assert take.finish == "produced" and finish.finish == "model"
    # the parsed schema drives the working memory as an induced one does
    mem = WorkingMemory(schema)
    mem.fill("Your task is to: put a clean mug on shelf 1.")
    mem.begin()
    assert mem.allowed(TOOLS + ["look"]) == ["go", "open"]
    mem.observe("go", {"target": "kitchen"}, "You go to the kitchen.")
    assert mem.local["location"] == "You go to the kitchen."
    assert not mem.complete()  # two actions: the model says when the search is over
    mem.finish()
    mem.observe("take", {"item": "mug 1"}, "You pick up the mug 1.")
    assert mem.complete()


def test_a_bare_list_is_accepted_and_unusable_replies_raise() -> None:
    schema, _ = parse_schema_reply('[{"name": "act", "actions": ["put"]}]', TOOLS, "h")
    assert [s.actions for s in schema.subtasks] == [["put"]]
    assert schema.subtasks[0].expects == ["goal"]
    schema, repairs = parse_schema_reply('{"subtasks": ["explore"]}', TOOLS, "h")
    assert schema.subtasks[0].actions == ["*"] and "every tool allowed" in repairs[0]
    for bad in ["I cannot do that.", '{"fields": {}}', '{"subtasks": []}', '"just text"']:
        with pytest.raises(ValueError):
            parse_schema_reply(bad, TOOLS, "h")


def test_the_prompt_shows_the_traces_and_the_tools() -> None:
    prompt = induction_prompt([_trace("mug")], TOOLS)
    assert prompt.startswith("Tools: go, open, take, clean, put")
    assert "GOAL: Your task is to: put a clean mug on shelf 1." in prompt
    assert "4. take(item=mug 1) -> You pick up the mug 1." in prompt


def test_induction_with_a_model_records_how_the_schema_was_made() -> None:
    traces = [_trace("mug"), _trace("cup")]
    reply = json.dumps({"fields": {"found": "where the object is"}, "subtasks": [
        {"name": "search", "actions": ["go", "open"], "produces": ["found"]},
        {"name": "deliver", "actions": ["take", "clean", "put"], "expects": ["found"]}]})
    good = asyncio.run(induce_llm_schema(traces, "household",
                                         get_model("scripted/fixed", answer=reply)))
    assert good.induction is not None and good.induction["method"] == "llm"
    assert good.induction["fallback"] is None and good.induction["reply"] == reply
    assert [s.name for s in good.subtasks] == ["1_search", "2_deliver"]
    bad = asyncio.run(induce_llm_schema(traces, "household",
                                        get_model("scripted/fixed", answer="no idea")))
    assert bad.induction is not None and "no JSON" in bad.induction["fallback"]
    assert "rule-based" in bad.induction["fallback"]
    assert bad.subtasks[0].actions == ["go"]  # the rule-based base sequence (go x2 first)
    again = Schema.model_validate_json(bad.model_dump_json())
    assert again.induction == bad.induction


def test_the_cli_induces_from_real_household_logs(tmp_path: Path) -> None:
    import benchmarks.paper_tasks.household.policies  # noqa: F401  (registers the oracle)
    from benchmarks.paper_tasks.household.household import household
    from methods.lightwm.__main__ import main

    logs = tmp_path / "logs"
    inspect_eval(household(n=2, split="train", goal_kinds="heat"),
                 model="scripted/household-oracle", log_dir=str(logs), display="none")
    reply = json.dumps({"subtasks": [{"name": "find", "actions": ["go", "open"]},
                                     {"name": "heat it", "actions": ["take", "heat"]},
                                     {"name": "place", "actions": ["go", "put"]}]})
    out = tmp_path / "h.json"
    assert main(["induce-llm", "--traces", str(logs), "--out", str(out), "--model",
                 "scripted/fixed", "--model-arg", f"answer={reply}", "--family", "h",
                 "--score", "success"]) == 0
    schema = load_schema(out)
    assert [s.name for s in schema.subtasks] == ["1_find", "2_heat_it", "3_place"]
    assert schema.induction is not None and schema.induction["traces_shown"] == 2
    assert main(["induce-llm", "--traces", str(logs), "--out", str(out), "--model", "x",
                 "--model-arg", "novalue"]) == 1  # reported, not raised
