"""Instance-level Every Eval Ever export (issue 51 item 6): ``harness eee`` on committed
logs, checked against the schemas the Every Eval Ever project ships.

The aggregate schema (``eval.schema.json``, v0.3.0) is read from ``../shared/reference-data``;
it also fixes the datastore's name for the instance file (``detailed_evaluation_results``'s
path pattern). The instance-level schema (``instance_level_eval.schema.json``) ships in the
``every-eval-ever`` package, which needs Python >= 3.12; it is looked for where it can be
(``EEE_INSTANCE_SCHEMA``, the installed package, the shared reference data) and the schema
check is skipped, saying so, where none is present. The structural checks below hold
without it.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import util
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from harness.cli import app
from leaderboards.eee import EEE_SCHEMA_VERSION, file_uuid, instance_record

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


def test_instance_records_validate_against_the_shipped_schema(exported: Path) -> None:
    schema = _instance_schema()
    if schema is None:
        pytest.skip("instance_level_eval.schema.json not present (every-eval-ever needs "
                    "Python >= 3.12; set EEE_INSTANCE_SCHEMA to its file)")
    assert schema["version"] == EEE_SCHEMA_VERSION
    _, _, rows = _files(exported)
    validator = jsonschema.Draft7Validator(schema)
    kinds = set()
    for row in rows:
        errors = list(validator.iter_errors(row))
        assert not errors, errors[0].message
        kinds.add(row["interaction_type"])
    assert "agentic" in kinds


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
    schema = _instance_schema()
    if schema is not None:
        jsonschema.validate(record, schema)


def test_file_names_are_stable_uuid4() -> None:
    name = file_uuid("eval-123")
    assert name == file_uuid("eval-123") != file_uuid("eval-124")
    assert name[14] == "4" and name[19] in "89ab"
