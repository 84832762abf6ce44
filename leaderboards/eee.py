"""Inspect logs -> Every Eval Ever datastore files, aggregate and instance-level.

Why: the board's export (:func:`leaderboards.exports.eee_records`) states one number per
entry; Every Eval Ever also stores each sample (its ``instance_level_eval.schema.json``),
so a reader can re-score, pair or re-weight items without the logs. This module writes,
for each log (one eval: one task x model x setup), the datastore's two files::

    data/<task>/<developer>/<model>/<uuid>.json            aggregate (eval.schema.json)
    data/<task>/<developer>/<model>/<uuid>_samples.jsonl   one record per sample x score key

The aggregate names the instance file in ``detailed_evaluation_results`` (path, sha256,
rows); each instance record carries the aggregate's ``evaluation_id`` and its result's
``evaluation_result_id``. A sample whose transcript has tool calls is ``agentic`` (its
messages with their tool calls and tool results), one with several assistant turns is
``multi_turn``, else ``single_turn`` (its completion as ``output``). The eval's sandbox
(type and config file) and limits go in the result's ``generation_args``.

Conventions where the schema leaves a choice: an errored sample's record has score 0 and
its error text (the schema requires a number); ``is_correct`` means a score of 1 on a
higher-is-better key; epochs are separate records with ``epoch`` in their metadata. The
file UUID is derived from the eval id (a version-4 UUID built from its hash), so exporting
the same logs twice gives the same file names.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from harness.provenance import log_provenance
from harness.results import (
    LogPaths,
    apply_errored_policy,
    errored_policies,
    iter_samples,
    load_results,
    read_eval_specs,
    read_sample_texts,
)
from harness.stats import SCORE_CI_METHOD, mean_ci

__all__ = ["EEE_SCHEMA_VERSION", "datastore_dir", "export_logs", "export_summary",
           "file_uuid", "instance_record"]

EEE_SCHEMA_VERSION = "0.3.0"
_UNSAFE = re.compile(r'[<>:"\\|?*\x00-\x1f]')


def _component(value: str) -> str:
    """One safe datastore path component (the datastore's own rule: no separators,
    reserved characters replaced, no trailing dot or space, never ``data``)."""
    out = _UNSAFE.sub("_", value.replace("/", "_")).rstrip(". ") or "_"
    return "_data" if out == "data" else out


def datastore_dir(task: str, model_id: str) -> tuple[str, str, str]:
    """(collection, developer, model) folders for a task and an Inspect model id: the
    developer is the id's first segment, the rest is one folder (``/`` -> ``_``)."""
    developer, _, name = model_id.partition("/")
    return _component(task), _component(developer or "unknown"), _component(name or model_id)


def file_uuid(eval_id: str) -> str:
    """A stable version-4 UUID for an eval's files (the datastore requires UUIDv4 names)."""
    return str(uuid.UUID(bytes=hashlib.sha256(eval_id.encode()).digest()[:16], version=4))


def _text(content: Any) -> tuple[str | None, str | None]:
    """(text, reasoning) of a message's content: a string, or a list of content parts."""
    if content is None or isinstance(content, str):
        return content, None
    texts: list[str] = []
    reasoning: list[str] = []
    for part in content if isinstance(content, list) else [content]:
        if not isinstance(part, dict):
            texts.append(str(part))
        elif part.get("type") == "reasoning":
            reasoning.append(str(part.get("reasoning") or part.get("summary") or ""))
        elif "text" in part:
            texts.append(str(part["text"]))
        else:
            texts.append(f"[{part.get('type', 'content')}]")
    return "\n".join(texts), ("\n".join(reasoning) if reasoning else None)


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    lines = []
    for message in value or []:
        text, _ = _text(message.get("content") if isinstance(message, dict) else message)
        role = message.get("role", "user") if isinstance(message, dict) else "user"
        lines.append(f"{role}: {text or ''}")
    return "\n".join(lines)


def _messages(sample: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for turn, message in enumerate(sample.get("messages") or []):
        content, reasoning = _text(message.get("content"))
        record: dict[str, Any] = {"turn_idx": turn, "role": str(message.get("role")),
                                  "content": content, "reasoning_trace": reasoning}
        calls = message.get("tool_calls") or []
        if calls:
            record["tool_calls"] = [
                {"id": str(call.get("id")), "name": str(call.get("function")),
                 "arguments": {str(k): v if isinstance(v, str) else json.dumps(v)
                               for k, v in (call.get("arguments") or {}).items()}}
                for call in calls]
        call_id = message.get("tool_call_id")
        if call_id:
            record["tool_call_id"] = [call_id] if isinstance(call_id, str) else list(call_id)
        out.append(record)
    return out


def _completion(sample: dict[str, Any]) -> str:
    output = sample.get("output") or {}
    completion = output.get("completion") if isinstance(output, dict) else None
    if completion:
        return str(completion)
    choices = output.get("choices") if isinstance(output, dict) else None
    if choices:
        text, _ = _text((choices[0].get("message") or {}).get("content"))
        return text or ""
    return ""


def instance_record(sample: dict[str, Any], row: dict[str, Any], *, evaluation_id: str,
                    model_id: str, evaluation_name: str, lower_is_better: bool
                    ) -> dict[str, Any]:
    """One instance-level record for a full sample and its results-frame row (one score
    key), valid against ``instance_level_eval.schema.json``."""
    raw = _input_text(sample.get("input"))
    target = sample.get("target")
    reference = [str(t) for t in target] if isinstance(target, list) else (
        [] if target is None else [str(target)])
    messages = _messages(sample)
    n_calls = sum(len(m.get("tool_calls") or []) for m in messages)
    assistant_turns = [m["turn_idx"] for m in messages if m["role"] == "assistant"]
    if n_calls or any(m["role"] == "tool" for m in messages):
        kind = "agentic"
    elif len(assistant_turns) > 1:
        kind = "multi_turn"
    else:
        kind = "single_turn"
    completion = _completion(sample)
    value = row["score_value"]
    score = 0.0 if value is None else float(value)
    answer = row.get("score_answer")
    extracted = str(answer) if answer is not None else completion
    if kind == "single_turn":
        source, turn = "output.raw", 0
    else:
        turn = assistant_turns[-1] if assistant_turns else max(len(messages) - 1, 0)
        source = f"messages[{turn}].content"
    record: dict[str, Any] = {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": model_id,
        "evaluation_name": evaluation_name,
        "evaluation_result_id": row["score_key"],
        "sample_id": str(row["sample_id"]),
        "sample_hash": hashlib.sha256((raw + "\n".join(reference)).encode()).hexdigest(),
        "interaction_type": kind,
        "input": {"raw": raw, "formatted": None, "reference": reference,
                  "choices": [str(c) for c in sample["choices"]] if sample.get("choices")
                  else None},
        "output": {"raw": [completion]} if kind == "single_turn" else None,
        "messages": None if kind == "single_turn" else messages,
        "answer_attribution": [{"turn_idx": turn, "source": source,
                                "extracted_value": extracted,
                                "extraction_method": str(row.get("scorer") or "scorer"),
                                "is_terminal": True}],
        "evaluation": {"score": score, "is_correct": bool(value == 1.0 and not lower_is_better),
                       "num_turns": max(len(assistant_turns), 1), "tool_calls_count": n_calls},
        "token_usage": {"input_tokens": int(row["input_tokens"] or 0),
                        "output_tokens": int(row["output_tokens"] or 0),
                        "total_tokens": int(row["total_tokens"] or 0),
                        "input_tokens_cache_read": int(row["cache_read_tokens"] or 0)},
        "performance": {
            "latency_ms": None if row["total_time"] is None else 1000 * row["total_time"],
            "generation_time_ms": (None if row["working_time"] is None
                                   else 1000 * row["working_time"])},
        "error": row.get("error"),
        "metadata": {"epoch": str(row["epoch"]), "task": str(row["task"]),
                     "score_key": str(row["score_key"])},
    }
    return record


def _sandbox(spec: dict[str, Any]) -> dict[str, str] | None:
    """The eval's sandbox as the schema's ``{type, config}`` (Inspect writes a
    ``[type, config]`` pair or an object)."""
    box = spec.get("sandbox")
    if not box:
        return None
    if isinstance(box, list | tuple):
        kind, config = (list(box) + [None])[:2]
    elif isinstance(box, dict):
        kind, config = box.get("type"), box.get("config")
    else:
        kind, config = box, None
    out = {"type": str(kind)}
    if config is not None:
        out["config"] = config if isinstance(config, str) else json.dumps(config, sort_keys=True)
    return out


def _generation_args(spec: dict[str, Any], frame: pl.DataFrame) -> dict[str, Any]:
    config = json.loads(frame["generate_config"][0] or "{}")
    args: dict[str, Any] = {}
    for key in ("temperature", "top_p", "top_k"):
        if isinstance(config.get(key), int | float):
            args[key] = config[key]
    if isinstance(config.get("max_tokens"), int) and config["max_tokens"] >= 1:
        args["max_tokens"] = config["max_tokens"]
    sandbox = _sandbox(spec)
    if sandbox:
        args["sandbox"] = sandbox
    limits = {name: int(spec["config"][key]) for name, key in (
        ("time_limit", "time_limit"), ("message_limit", "message_limit"),
        ("token_limit", "token_limit"))
        if isinstance((spec.get("config") or {}).get(key), int)}
    if limits:
        args["eval_limits"] = limits
    return args


def _unix(iso: str | None) -> str:
    return str(int(datetime.fromisoformat(iso).timestamp())) if iso else "0"


def export_logs(paths: LogPaths, out: Path, *, errored: Any = None,
                level: float = 0.95) -> list[Path]:
    """Write the datastore files for every log under ``paths`` below ``out/data/``;
    returns the aggregate files written.

    Each (log, sample, epoch) counts once, as for every board (:func:`load_results`).
    """
    loaded = load_results(paths)
    frame = loaded.frame
    specs = {s["log_file"]: s for s in read_eval_specs(paths)}
    written: list[Path] = []
    if frame.is_empty():
        return written
    policies = {(r["task"], r["score_key"]): r for r in errored_policies(frame, errored)
                .to_dicts()}
    for log_file, rows in frame.group_by("log_file", maintain_order=True):
        log = str(log_file[0])
        spec = specs.get(log, {})
        task, model_id = str(rows["task"][0]), str(rows["model"][0])
        stamp = _unix(rows["created"][0])
        collection, developer, model_dir = datastore_dir(task, model_id)
        folder = out / "data" / collection / developer / model_dir
        folder.mkdir(parents=True, exist_ok=True)
        name = file_uuid(str(rows["eval_id"][0] or log))
        evaluation_id = f"{task}/{model_id.replace('/', '_')}/{stamp}"
        counted = apply_errored_policy(rows, errored)
        results = []
        for key in rows.get_column("score_key").unique(maintain_order=True).to_list():
            if key is None:
                continue
            values = counted.filter(pl.col("score_key") == key).get_column("score_value")
            if values.len() == 0:
                continue
            est = mean_ci(values, level=level)
            info = policies.get((task, key), {})
            binary = bool(values.is_in([0.0, 1.0]).all())
            bounded = bool(values.is_between(0.0, 1.0).all())
            uncertainty: dict[str, Any] = {"num_samples": int(values.len())}
            if est.se == est.se:  # not NaN (one sample has no standard error)
                uncertainty["standard_error"] = {"value": est.se, "method": "analytic"}
                uncertainty["confidence_interval"] = {
                    "lower": est.lo, "upper": est.hi, "confidence_level": level,
                    "method": SCORE_CI_METHOD}
            result: dict[str, Any] = {
                "evaluation_result_id": key,
                "evaluation_name": task,
                "source_data": {"dataset_name": task, "source_type": "other"},
                "metric_config": {
                    "evaluation_description": f"mean of {key} over samples (errored samples:"
                                              f" {info.get('errored_policy', 'zero')})",
                    "metric_id": f"{_component(task)}.{key}", "metric_name": key,
                    "lower_is_better": bool(info.get("lower_is_better", False)),
                    "score_type": "binary" if binary else "continuous",
                    "min_score": 0.0 if bounded else "-Infinity",
                    "max_score": 1.0 if bounded else "Infinity"},
                "score_details": {"score": est.estimate, "uncertainty": uncertainty},
            }
            args = _generation_args(spec, rows)
            if args:
                result["generation_config"] = {"generation_args": args}
            results.append(result)
        samples_path = folder / f"{name}_samples.jsonl"
        n_rows = _write_instances(Path(log), rows, samples_path, evaluation_id=evaluation_id,
                                  model_id=model_id, policies=policies)
        # provenance once per run (issue 51 item 5): the log's record and its digest, as
        # text (the schema's details are strings)
        record = log_provenance(spec, read_sample_texts(Path(log)))
        aggregate = {
            "schema_version": EEE_SCHEMA_VERSION,
            "evaluation_id": evaluation_id,
            "evaluation_timestamp": str(rows["created"][0] or ""),
            "retrieved_timestamp": stamp,
            "source_metadata": {"source_name": "evalsuite (Inspect logs)",
                                "source_type": "evaluation_run",
                                "source_organization_name": "evalsuite",
                                "evaluator_relationship": "third_party",
                                "additional_details": {
                                    "provenance_sha256": record["sha256"],
                                    "provenance": json.dumps(record, sort_keys=True,
                                                             default=str)}},
            "model_info": {"name": model_dir, "id": model_id, "developer": developer,
                           "inference_platform": developer,
                           "additional_details": {"deployment_type": "unknown",
                                                  "model_availability": "unknown",
                                                  "solver": str(rows["solver"][0] or "")}},
            "eval_library": {"name": "inspect_ai",
                             "version": str(spec.get("packages", {}).get("inspect_ai")
                                            or "unknown")},
            "evaluation_results": results,
            "detailed_evaluation_results": {
                "format": "jsonl",
                "file_path": f"data/{collection}/{developer}/{model_dir}/{samples_path.name}",
                "hash_algorithm": "sha256",
                "checksum": hashlib.sha256(samples_path.read_bytes()).hexdigest(),
                "total_rows": n_rows},
        }
        target = folder / f"{name}.json"
        target.write_text(json.dumps(aggregate, indent=2, sort_keys=True) + "\n")
        written.append(target)
    return written


def _write_instances(log: Path, rows: pl.DataFrame, path: Path, *, evaluation_id: str,
                     model_id: str, policies: dict[tuple[Any, Any], dict[str, Any]]) -> int:
    """Stream one log's samples into its ``_samples.jsonl``; returns the rows written."""
    by_sample: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows.to_dicts():
        if row["score_key"] is not None:
            by_sample.setdefault((str(row["sample_id"]), int(row["epoch"])), []).append(row)
    n = 0
    with path.open("w", encoding="utf-8") as out:
        for sample in iter_samples(log):
            key = (str(sample.get("id")), int(sample.get("epoch") or 1))
            for row in by_sample.pop(key, []):
                lower = bool(policies.get((row["task"], row["score_key"]), {})
                             .get("lower_is_better", False))
                record = instance_record(sample, row, evaluation_id=evaluation_id,
                                         model_id=model_id, evaluation_name=str(row["task"]),
                                         lower_is_better=lower)
                out.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
                n += 1
    return n


def export_summary(paths: Sequence[Path]) -> str:
    """One line: files written and instance rows."""
    rows = sum(json.loads(p.read_text())["detailed_evaluation_results"]["total_rows"]
               for p in paths)
    return f"{len(paths)} aggregate files, {rows} instance records"
