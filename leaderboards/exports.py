"""Leaderboard -> JSON: the project's own schema and the Every Eval Ever schema.

The project's document (``leaderboard.json``, schema in ``schema/leaderboard.schema.json``)
holds every table the site shows, so other tools can rebuild any view without the logs.
The Every Eval Ever export writes one record per entry (model x agent x setup on one
benchmark), the unit that schema calls an evaluation run; the per-sample detail stays in
the Inspect logs, which the records name in their details.

Timestamps come from the logs (the latest ``created``), never from the clock, so a rebuild
from the same logs writes the same bytes.

Both documents state each benchmark's direction (``lower_is_better``, from its eval.yaml)
and errored-sample policy with the count of errored samples, so a reader knows what a mean
averages. An entry whose every sample was dropped under ``drop`` has no score: it stays in
the project document (score null) and is left out of the Every Eval Ever records, whose
schema needs a number.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from harness.provenance import entry_provenance
from harness.stats import SCORE_CI_METHOD
from leaderboards.tables import Leaderboard, slug

__all__ = ["EEE_SCHEMA_VERSION", "SCHEMA_PATH", "SCHEMA_VERSION", "as_of", "eee_records",
           "project_document", "rel_path", "write_eee", "write_json"]

SCHEMA_VERSION = "1.0.0"
EEE_SCHEMA_VERSION = "0.3.0"
SCHEMA_PATH = Path(__file__).parent / "schema" / "leaderboard.schema.json"


def _clean(value: Any) -> Any:
    """JSON-safe: NaN/inf -> None, recursively."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def rel_path(path: str, base: Path) -> str:
    """``path`` relative to ``base`` with forward slashes (no absolute paths in outputs);
    a log on object storage (``s3://...``) keeps its URL, which is where it is."""
    if "://" in path and not path.startswith("file://"):
        return path
    return Path(os.path.relpath(Path(path).resolve(), base.resolve())).as_posix()


def as_of(board: Leaderboard) -> str | None:
    """The latest ``created`` timestamp among the logs (ISO 8601), if any log has one."""
    created = [c for c in board.logs["created"].to_list() if c] if board.logs.height else []
    return max(created) if created else None


def _rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return [_clean(r) for r in frame.to_dicts()] if frame.height else []


def project_document(board: Leaderboard, base: Path, log_base: Path | None = None
                     ) -> dict[str, Any]:
    """The leaderboard as one JSON-ready dict (see ``schema/leaderboard.schema.json``).

    Log paths are written relative to ``log_base`` (default ``base``).
    """
    log_base = log_base or base
    opts = board.options
    benchmarks = []
    for info in _rows(board.benchmarks):
        name = info["benchmark"]
        entries = _rows(board.entries.filter(pl.col("benchmark") == name))
        for entry in entries:
            entry["logs"] = [rel_path(p, log_base) for p in entry["logs"]]
            entry.pop("benchmark", None)
        pairs = _rows(board.pairwise.filter(pl.col("benchmark") == name).drop("benchmark"))
        benchmarks.append({**{("name" if k == "benchmark" else k): v for k, v in info.items()},
                           "slug": slug(name), "entries": entries, "pairwise": pairs})
    logs = _rows(board.logs)
    for log in logs:
        log["log_file"] = rel_path(log["log_file"], log_base)
    return {
        "schema_version": SCHEMA_VERSION,
        "as_of": as_of(board),
        "level": opts.level,
        "n_boot": opts.n_boot,
        "seed": opts.seed,
        "benchmarks": benchmarks,
        "overall": _rows(board.overall),
        "logs": logs,
    }


def write_json(document: dict[str, Any], path: Path) -> Path:
    """Write ``document`` with sorted keys (stable diffs for committed leaderboards)."""
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    return path


def _unix(iso: str | None) -> str:
    if not iso:
        return "0"
    return str(int(datetime.fromisoformat(iso).timestamp()))


def _num(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _policy_text(policy: str | None, errors: int) -> str:
    how = {"zero": "errored samples score 0", "drop": "errored samples are left out"}
    return f"{how.get(policy or 'zero', f'errored samples: {policy}')} ({errors} errored)"


def eee_records(board: Leaderboard, log_base: Path,
                provenance: Mapping[str, Mapping[str, Any]] | None = None
                ) -> list[dict[str, Any]]:
    """One Every Eval Ever record per entry with a score, valid against its
    ``eval.schema.json``. With ``provenance`` (log file -> its record,
    :func:`leaderboards.build.log_provenances`), each record's ``source_metadata`` carries
    the entry's provenance digest and its logs' records (as JSON text: the schema's
    details are strings)."""
    stamp = _unix(as_of(board))
    infos = {r["benchmark"]: r for r in board.benchmarks.to_dicts()}
    records = []
    for entry in board.entries.to_dicts():
        info = infos[entry["benchmark"]]
        if _num(entry["score"]) is None:
            continue  # every sample dropped: no score to export
        provider, _, name = entry["model"].partition("/")
        uncertainty: dict[str, Any] = {"num_samples": entry["n"]}
        if _num(entry["se"]) is not None:
            uncertainty["standard_error"] = {"value": entry["se"],
                                             "method": "analytic, clustered by item"}
        if _num(entry["ci_lo"]) is not None and _num(entry["ci_hi"]) is not None:
            uncertainty["confidence_interval"] = {
                "lower": entry["ci_lo"], "upper": entry["ci_hi"],
                "confidence_level": board.options.level,
                "method": SCORE_CI_METHOD}
        details = {
            "agent": entry["agent"], "setup": entry["setup"],
            "n_items": str(entry["n_items"]), "n_completed": str(entry["n_completed"]),
            "errors": str(entry["errors"]), "errored_policy": str(info["errored_policy"]),
            "rank": str(entry["rank"]),
            "rank_interval": f"[{entry['rank_lo']}, {entry['rank_hi']}]",
            "tokens_per_sample": f"{entry['tokens_per_sample']:.6g}",
            "time_per_sample_s": f"{entry['time_per_sample']:.6g}",
            "logs": json.dumps([rel_path(p, log_base) for p in entry["logs"]]),
        }
        if _num(entry.get("normalised")) is not None:
            details["normalised"] = f"{entry['normalised']:.6g}"
        if _num(entry.get("cost")) is not None:
            details["cost_usd"] = f"{entry['cost']:.6g}"
        for key in ("tool_calls_per_sample", "tool_call_valid_rate"):
            if _num(entry.get(key)) is not None:
                details[key] = f"{entry[key]:.6g}"
        bounded = bool(info["bounded"])
        summary = f" ({info['summary']})" if info.get("summary") else ""
        metric: dict[str, Any] = {
            "evaluation_description": f"mean of {entry['score_key']}{summary} over samples; "
                                      + _policy_text(info["errored_policy"], entry["errors"]),
            "metric_id": f"{slug(entry['benchmark'])}.{entry['score_key']}",
            "metric_name": entry["score_key"],
            "lower_is_better": bool(info["lower_is_better"]),
            "score_type": "continuous",
            "min_score": 0.0 if bounded else "-Infinity",
            "max_score": 1.0 if bounded else "Infinity",
        }
        source: dict[str, Any] = {"source_name": "evalsuite leaderboard",
                                  "source_type": "evaluation_run",
                                  "source_organization_name": "evalsuite",
                                  "evaluator_relationship": "third_party"}
        if provenance is not None:
            found = [provenance[p] for p in entry["logs"] if p in provenance]
            source["additional_details"] = {
                "provenance_sha256": entry_provenance(found)["sha256"],
                "provenance": json.dumps([_clean(dict(r)) for r in found], sort_keys=True)}
        records.append({
            "schema_version": EEE_SCHEMA_VERSION,
            "evaluation_id": f"{entry['benchmark']}/{entry['model']}/{stamp}",
            "retrieved_timestamp": stamp,
            "source_metadata": source,
            "model_info": {
                "name": name or provider, "id": entry["model"], "developer": provider,
                "inference_platform": provider,
                "additional_details": {"deployment_type": "unknown",
                                       "model_availability": "unknown"},
            },
            "eval_library": {"name": "inspect_ai",
                             "version": entry.get("inspect_version") or "unknown"},
            "evaluation_results": [{
                "evaluation_result_id": slug(entry["entry"]),
                "evaluation_name": entry["benchmark"],
                "source_data": {"dataset_name": entry["benchmark"], "source_type": "other"},
                "metric_config": metric,
                "score_details": {"score": entry["score"], "details": details,
                                  "uncertainty": uncertainty},
            }],
        })
    return records


def write_eee(board: Leaderboard, folder: Path, log_base: Path,
              provenance: Mapping[str, Mapping[str, Any]] | None = None) -> Path:
    """Write one ``<benchmark>__<entry>.json`` Every Eval Ever record per entry (with its
    provenance when given: see :func:`eee_records`)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()
    for record in eee_records(board, log_base, provenance):
        result = record["evaluation_results"][0]
        name = f"{slug(result['evaluation_name'])}__{result['evaluation_result_id']}.json"
        write_json(record, folder / name)
    return folder
