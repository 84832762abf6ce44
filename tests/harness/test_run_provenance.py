"""Provenance: file hashes (cached, and re-hashed when a file changes), the record of a
sandbox and a ladder model, and the warnings ``harness compare`` gives when what two runs
recorded about themselves differs."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from harness.compare import Run
from harness.provenance import collect, compare_provenance, dataset_hash, file_sha256


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_file_and_folder_hashes_follow_the_bytes(tmp_path: Path) -> None:
    weights = tmp_path / "m" / "weights.bin"
    weights.parent.mkdir()
    weights.write_bytes(b"abc")
    assert file_sha256(weights) == hashlib.sha256(b"abc").hexdigest()
    (tmp_path / "m" / "config.json").write_text("{}")
    folder = file_sha256(tmp_path / "m")
    assert (tmp_path / "cache" / "evalsuite" / "sha256.json").is_file()
    assert file_sha256(tmp_path / "m") == folder  # from the cache, same answer
    weights.write_bytes(b"abd")
    os.utime(weights, (1, 1))  # a new mtime and the same size: hashed again
    assert file_sha256(weights) == hashlib.sha256(b"abd").hexdigest()
    assert file_sha256(tmp_path / "m") != folder


def test_record_of_a_bwrap_sandbox_and_a_ladder_model() -> None:
    record = collect({"model": "embedded/qwen2.5-coder-0.5b", "model_args": {},
                      "sandbox": {"type": "bwrap", "config": {"memory_bytes": "1g"}},
                      "dataset": {"name": "d", "samples": 2, "sample_ids": ["a", "b"]}})
    assert record["model"]["sha256"] == (
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")
    assert record["sandbox"]["limits"]["memory_bytes"] == 1024**3
    assert record["dataset"]["sample_ids_sha256"] == hashlib.sha256(b"a\nb").hexdigest()
    assert "model" not in collect({"model": "openai/gpt-4o", "model_args": {}})


def _run(label: str, recorded: dict[str, Any] | None, version: str = "1.0.0") -> Run:
    spec = {"packages": {"inspect_ai": "0.3.285"}, "task_version": version,
            "metadata": {} if recorded is None else {"provenance": recorded}}
    frame = pl.DataFrame({"sample_id": ["1"], "epoch": [1], "task": ["t"]})
    return Run(label, frame, [spec], [label])


def _texts(target: str) -> pl.DataFrame:
    return pl.DataFrame({"sample_id": ["1"], "epoch": [1], "input": ["q"], "target": [target]})


def test_compare_warns_where_recorded_provenance_differs() -> None:
    shared = pl.DataFrame({"sample_id": ["1"], "epoch": [1]})
    base = {"packages": {"python": "3.11.7", "numpy": "2.0"}, "model": {"sha256": "aa"},
            "sandbox": {"type": "bwrap", "limits": {"memory_bytes": 1}}}
    same, info = compare_provenance(_run("a", base), _run("b", base), shared, _texts("x"),
                                    _texts("x"))
    assert same == []
    assert info["a"]["paired_data_sha256"] == dataset_hash(_texts("x"))
    other = {**base, "packages": {"python": "3.11.7", "numpy": "2.1"},
             "model": {"sha256": "bb"}, "sandbox": {"type": "bwrap",
                                                    "limits": {"memory_bytes": 2}}}
    warnings, _ = compare_provenance(_run("a", base), _run("b", other, "1.1.0"), shared,
                                     _texts("x"), _texts("y"))
    text = "\n".join(warnings)
    assert "packages.numpy differs: A 2.0, B 2.1" in text
    assert "sandbox.limits.memory_bytes differs" in text
    assert "task_version differs" in text
    assert "the data differ: 1 shared id(s)" in text
    assert "model.sha256" not in text  # the model is what a comparison varies
    one_sided, _ = compare_provenance(_run("a", base), _run("b", None), shared, _texts("x"),
                                      _texts("x"))
    assert one_sided == ["provenance: recorded by only one side (A); the other's is unknown"]


def _json_log(path: Path, eval_id: str, created: str, status: str, ids: list[str],
              numpy: str) -> None:
    import json

    spec = {"eval_id": eval_id, "run_id": eval_id, "created": created, "task": "t",
            "model": "m", "task_args": {}, "model_args": {},
            "metadata": {"cell_id": "c1", "provenance": {"packages": {"numpy": numpy}}}}
    samples = [{"id": i, "epoch": 1, "scores": {"s": {"value": 1}}} for i in ids]
    path.write_text(json.dumps({"version": 2, "status": status, "eval": spec,
                                "samples": samples}))


def test_an_attempt_resumed_in_another_environment_is_still_the_same_cell(
        tmp_path: Path) -> None:
    from harness.results import load_results

    _json_log(tmp_path / "first.json", "e1", "2026-01-01T00:00:00", "error", ["1"], "2.0")
    _json_log(tmp_path / "second.json", "e2", "2026-01-02T00:00:00", "success", ["1", "2"],
              "2.1")
    loaded = load_results(tmp_path)
    assert loaded.frame.height == 2  # sample 1 once, from the successful attempt
    assert [a.why for a in loaded.account.set_aside] == ["superseded"]


@pytest.mark.slow
def test_a_study_run_records_provenance_once_per_cell(tmp_path: Path) -> None:
    from harness.compare import compare_paths
    from harness.factorial.run import run_study
    from harness.results import list_logs, read_eval_specs, read_results

    examples = Path(__file__).resolve().parents[2] / "harness" / "factorial" / "examples"
    study = examples / "tiny_study.yaml"
    summary = run_study(study, log_dir=tmp_path / "logs")
    assert summary.success
    specs = read_eval_specs(tmp_path / "logs")
    assert len(specs) == 4
    sha = hashlib.sha256(study.read_bytes()).hexdigest()
    for spec in specs:
        record = spec["metadata"]["provenance"]
        assert record["study"]["sha256"] == sha
        assert record["packages"]["inspect_ai"]
        assert record["dataset"]["samples"] > 0
    frame = read_results(tmp_path / "logs")
    # once per run: in the eval's metadata, not in any sample's
    assert not frame["sample_metadata"].drop_nulls().str.contains("provenance").any()
    cells = {"{model}/{intervention}".format(**s["metadata"]["factors"]): s["log_file"]
             for s in specs}
    result = compare_paths(cells["left_to_right/none"], cells["oracle/none"])
    assert not [w for w in result.warnings if w.startswith("provenance")]
    assert result.provenance["a"]["recorded"]["study"]["sha256"] == sha
    assert len(list_logs(tmp_path / "logs")) >= 4
