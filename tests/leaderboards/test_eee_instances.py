"""Instance-level Every Eval Ever export (issue 51 item 6): ``harness eee`` on committed
logs, checked against the schemas the Every Eval Ever project ships.

The aggregate schema (``eval.schema.json``, v0.3.0) is read from ``../shared/reference-data``;
it also fixes the datastore's name for the instance file (``detailed_evaluation_results``'s
path pattern). The instance-level schema (``instance_level_eval.schema.json``) ships in the
``every-eval-ever`` package, which needs Python >= 3.12, and is in no reference data here,
so CI's clean clone never has it. The records are therefore always checked against the
schema's rules as the suite states them (:func:`leaderboards.eee_schema.instance_problems`),
with broken copies that those rules must reject; where the real file is found
(``EEE_INSTANCE_SCHEMA``, the installed package, the shared reference data) it validates
the same records and must agree with the rules on every record and every broken copy.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable
from importlib import util
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from harness.cli import app
from leaderboards.eee import EEE_SCHEMA_VERSION, file_uuid, instance_record
from leaderboards.eee_schema import INSTANCE_SCHEMA_VERSION, instance_problems

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT.parent / "shared" / "reference-data" / "every_eval_ever"
AGENT_LOG = (ROOT / "leaderboards/ladder/logs/causalgame"
             / "causalgame_all--embedded_qwen2.5-coder-0.5b"
             / "2026-12-01T09-48-40-00-00_causalgame-all_SVwdpqqLdZfiCBNbQGaG4p.eval")


def _instance_schema() -> dict[str, Any] | None:
    candidates = [Path(os.environ["EEE_INSTANCE_SCHEMA"])] if os.environ.get(
        "EEE_INSTANCE_SCHEMA") else []
    spec = util.find_spec("every_eval_ever")
    if spec is not None and spec.origin:
        candidates.append(Path(spec.origin).parent / "schemas/instance_level_eval.schema.json")
    candidates.append(REFERENCE / "instance_level_eval.schema.json")
    for path in candidates:
        if path.is_file():
            return dict(json.loads(path.read_text()))
    return None


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eee")
    result = CliRunner().invoke(app, ["eee", str(AGENT_LOG), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _files(out: Path) -> tuple[dict[str, Any], Path, list[dict[str, Any]]]:
    (aggregate,) = sorted(out.glob("data/*/*/*/*.json"))
    samples = aggregate.with_name(aggregate.stem + "_samples.jsonl")
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    return json.loads(aggregate.read_text()), samples, rows


@pytest.mark.skipif(not (REFERENCE / "eval.schema.json").is_file(),
                    reason="shared reference data not present")
def test_aggregate_validates_and_names_its_instance_file(exported: Path) -> None:
    schema = json.loads((REFERENCE / "eval.schema.json").read_text())
    assert schema["version"] == EEE_SCHEMA_VERSION
    aggregate, samples, rows = _files(exported)
    jsonschema.validate(aggregate, schema)  # includes the datastore's path pattern
    detail = aggregate["detailed_evaluation_results"]
    assert detail["file_path"] == samples.relative_to(exported).as_posix()
    assert detail["checksum"] == hashlib.sha256(samples.read_bytes()).hexdigest()
    assert detail["total_rows"] == len(rows)
    # the aggregate's ids are the instance records' foreign keys
    result_ids = {r["evaluation_result_id"] for r in aggregate["evaluation_results"]}
    assert {r["evaluation_result_id"] for r in rows} == result_ids
    assert {r["evaluation_id"] for r in rows} == {aggregate["evaluation_id"]}
    # the sandbox the eval ran in, as the schema's {type, config}
    args = aggregate["evaluation_results"][0]["generation_config"]["generation_args"]
    assert args["sandbox"]["type"] == "bwrap"


def test_agentic_samples_carry_their_tool_calls(exported: Path) -> None:
    _, _, rows = _files(exported)
    agentic = [r for r in rows if r["interaction_type"] == "agentic"]
    assert agentic, "the 0.5B model's CausalGame episodes call tools"
    for row in agentic:
        assert row["output"] is None and row["messages"]
        calls = [c for m in row["messages"] for c in (m.get("tool_calls") or [])]
        assert row["evaluation"]["tool_calls_count"] == len(calls) > 0
        ids = {c["id"] for c in calls}
        answered = {i for m in row["messages"] if m["role"] == "tool"
                    for i in m.get("tool_call_id") or []}
        assert answered <= ids  # every tool result points at a call made before it
        assert all(isinstance(v, str) for c in calls for v in (c["arguments"] or {}).values())
    # one record per (sample, epoch) and score key the log holds
    keys = {(r["sample_id"], r["metadata"]["epoch"], r["evaluation_result_id"]) for r in rows}
    assert len(keys) == len(rows)


def test_instance_records_follow_the_schemas_rules(exported: Path) -> None:
    # no skip: the rules are the suite's own statement of the schema (eee_schema.py)
    _, _, rows = _files(exported)
    assert rows
    for row in rows:
        assert instance_problems(row) == [], row["sample_id"]
    assert {r["interaction_type"] for r in rows} == {"agentic"}


def _agentic(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in rows if any(m.get("tool_calls") for m in r["messages"]))


def _first_call(record: dict[str, Any]) -> dict[str, Any]:
    return next(c for m in record["messages"] for c in m.get("tool_calls") or [])


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(record: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = record
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[last] = value
    return apply


BROKEN: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "no evaluation_id": (lambda r: r.pop("evaluation_id"), "evaluation_id: required"),
    "unknown field": (_set("metrics", {}), "metrics: not a field"),
    "unknown interaction": (_set("interaction_type", "chat"), "interaction_type: one of"),
    "agentic with output": (_set("output", {"raw": ["x"]}), "agentic: output must be null"),
    "agentic without messages": (_set("messages", None), "agentic: messages must be a list"),
    "tool argument not a string": (lambda r: _first_call(r).update(arguments={"n": 3}),
                                   ".arguments: an object of strings"),
    "tool call without id": (lambda r: _first_call(r).pop("id"), ".id: a string"),
    "negative turn": (_set("messages.0.turn_idx", -1), "turn_idx: an integer >= 0"),
    "score as text": (_set("evaluation.score", "1"), "evaluation.score: a number"),
    "is_correct as 1": (_set("evaluation.is_correct", 1), "is_correct: a boolean"),
    "zero turns": (_set("evaluation.num_turns", 0), "num_turns: an integer >= 1"),
    "negative tokens": (_set("token_usage.input_tokens", -1), "input_tokens: an integer"),
    "metadata not text": (_set("metadata", {"epoch": 2}), "metadata: an object of strings"),
    "reference not a list": (_set("input.reference", "4"), "input.reference: a list"),
    "attribution incomplete": (_set("answer_attribution", [{"turn_idx": 0}]),
                               "answer_attribution[0].source"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_rules_reject_a_broken_record(exported: Path, case: str) -> None:
    _, _, rows = _files(exported)
    record = copy.deepcopy(_agentic(rows))
    breaks, expected = BROKEN[case]
    breaks(record)
    problems = instance_problems(record)
    assert any(expected in p for p in problems), problems


def test_the_rules_agree_with_the_shipped_schema(exported: Path) -> None:
    schema = _instance_schema()
    if schema is None:
        pytest.skip("instance_level_eval.schema.json not present (every-eval-ever needs "
                    "Python >= 3.12; set EEE_INSTANCE_SCHEMA to its file); the rules above "
                    "checked the records")
    assert schema["version"] == INSTANCE_SCHEMA_VERSION, "the rules state another version"
    _, _, rows = _files(exported)
    validator = jsonschema.Draft7Validator(schema)
    cases = [("exported", row) for row in rows]
    for name, (breaks, _) in BROKEN.items():
        record = copy.deepcopy(_agentic(rows))
        breaks(record)
        cases.append((name, record))
    for name, record in cases:
        schema_says = [e.message for e in validator.iter_errors(record)]
        assert bool(schema_says) == bool(instance_problems(record)), (name, schema_says)
    assert any(n == "exported" for n, _ in cases)


def test_single_turn_record_and_errored_sample() -> None:
    sample = {"id": 7, "epoch": 2, "input": "2+2?", "target": "4",
              "messages": [{"role": "user", "content": "2+2?"},
                           {"role": "assistant", "content": [
                               {"type": "reasoning", "reasoning": "add"},
                               {"type": "text", "text": "4"}]}],
              "output": {"completion": "4"}}
    row = {"sample_id": "7", "epoch": 2, "task": "t", "score_key": "match", "scorer": "match",
           "score_value": None, "score_answer": None, "input_tokens": 3, "output_tokens": 1,
           "total_tokens": 4, "cache_read_tokens": 0, "total_time": 0.5, "working_time": 0.25,
           "error": "RuntimeError: boom"}
    record = instance_record(sample, row, evaluation_id="t/m/0", model_id="p/m",
                             evaluation_name="t", lower_is_better=False)
    assert record["interaction_type"] == "single_turn"
    assert record["output"] == {"raw": ["4"]} and record["messages"] is None
    assert record["input"]["reference"] == ["4"]
    # an errored sample: score 0 with its error stated, never counted correct
    assert record["evaluation"]["score"] == 0.0 and not record["evaluation"]["is_correct"]
    assert record["error"] == "RuntimeError: boom"
    assert record["metadata"]["epoch"] == "2"
    assert record["performance"]["latency_ms"] == 500.0
    assert instance_problems(record) == []
    schema = _instance_schema()
    if schema is not None:
        jsonschema.validate(record, schema)
    # a single-turn record keeps its completion in output, never a transcript
    for key, value, expected in (("messages", [], "single_turn: messages must be null"),
                                 ("output", None, "single_turn: output must be an object"),
                                 ("output", {"raw": "4"}, "output.raw: a list of strings")):
        broken = {**record, key: value}
        assert any(expected in p for p in instance_problems(broken)), key
        if schema is not None:
            assert list(jsonschema.Draft7Validator(schema).iter_errors(broken))


def test_file_names_are_stable_uuid4() -> None:
    name = file_uuid("eval-123")
    assert name == file_uuid("eval-123") != file_uuid("eval-124")
    assert name[14] == "4" and name[19] in "89ab"
