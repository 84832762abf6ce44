"""build(): the JSON exports validate against their schemas; Markdown, CSV and site agree.

The Every Eval Ever schema is read from the shared reference data beside the repository
(``<repo>/../shared/reference-data``), never copied into the project.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import polars as pl
import pytest
from _lb_synth import write_log
from typer.testing import CliRunner

from harness.cli import app
from leaderboards.build import build
from leaderboards.exports import SCHEMA_PATH

REPO = Path(__file__).resolve().parents[2]
EEE_SCHEMA = REPO.parent / "shared" / "reference-data" / "every_eval_ever" / "eval.schema.json"


def _logs(folder: Path) -> Path:
    write_log(folder, "oracle", model="scripted/x-oracle", scores=[1.0] * 6)
    write_log(folder, "mid", model="m/mid", scores=[1.0, 0.0, 1.0, None, 1.0, 0.0],
              tokens=(30, 3))
    write_log(folder, "low", model="m/low", scores=[0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    write_log(folder, "pts", model="m/mid", scores=[3.5, 2.0, 4.0], task="synth/points",
              scorer="points")
    return folder


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("lb")
    return build(_logs(root / "logs"), root / "out")


def test_project_json_validates_against_its_schema(built: dict[str, Path]) -> None:
    doc = json.loads(built["json"].read_text())
    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
    assert [b["name"] for b in doc["benchmarks"]] == ["synth/bench", "synth/points"]
    mid = next(e for e in doc["benchmarks"][0]["entries"] if e["model"] == "m/mid")
    assert (mid["n"], mid["n_completed"], mid["errors"]) == (6, 5, 1)
    assert mid["logs"] == ["../logs/mid.json"]  # relative to the output folder


def test_a_document_that_breaks_the_schema_is_rejected(built: dict[str, Path]) -> None:
    doc = json.loads(built["json"].read_text())
    del doc["benchmarks"][0]["entries"][0]["errors"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))


@pytest.mark.skipif(not EEE_SCHEMA.exists(), reason="shared reference data not beside repo")
def test_every_eval_ever_records_validate_against_the_published_schema(
    built: dict[str, Path],
) -> None:
    schema = json.loads(EEE_SCHEMA.read_text())
    validator = jsonschema.Draft7Validator(schema)
    records = sorted(built["eee"].glob("*.json"))
    assert len(records) == 4  # one per entry
    for path in records:
        record = json.loads(path.read_text())
        errors = list(validator.iter_errors(record))
        assert not errors, (path.name, [e.message for e in errors])
    mid = next(json.loads(p.read_text()) for p in records if "m-mid" in p.name
               and "synth-bench" in p.name)
    result = mid["evaluation_results"][0]
    assert result["score_details"]["details"]["errors"] == "1"
    assert result["metric_config"]["max_score"] == 1.0
    assert mid["eval_library"]["version"] == "0.3.285"  # read from the logs' headers
    points = next(json.loads(p.read_text()) for p in records if "synth-points" in p.name)
    assert points["evaluation_results"][0]["metric_config"]["max_score"] == "Infinity"
    bad = dict(mid)
    bad["model_info"] = {"name": "x"}
    assert list(validator.iter_errors(bad))  # the validator does reject a broken record


def test_markdown_csv_and_site_show_the_same_entries(built: dict[str, Path]) -> None:
    md = built["md"].read_text()
    entries = pl.read_csv(built["entries_csv"])
    assert entries.height == 4
    for model in ("scripted/x-oracle", "m/mid", "m/low"):
        assert model in md
    index = built["site"].read_text()
    assert 'href="synth-bench.html"' in index and "m/mid" in index
    page = (built["site"].parent / "synth-bench.html").read_text()
    assert "<svg" in page and 'id="pairwise"' in page and "../logs/mid.json" in page
    text = "".join(p.read_text() for p in built["site"].parent.glob("*.html"))
    assert str(built["site"].parent.parent) not in text  # no absolute paths in the site


def test_rebuild_from_the_same_logs_is_byte_identical(tmp_path: Path) -> None:
    logs = _logs(tmp_path / "logs")
    first = build(logs, tmp_path / "one")
    second = build(logs, tmp_path / "two")
    for key in ("json", "md", "site"):
        assert first[key].read_bytes() == second[key].read_bytes(), key


def test_cli_builds_from_several_log_dirs_with_options(tmp_path: Path) -> None:
    write_log(tmp_path / "a", "x", model="m/x", scores=[1.0, 0.0, 1.0, 1.0])
    write_log(tmp_path / "b", "y", model="m/y", scores=[0.0, 0.0, 1.0, 1.0], tokens=(1000, 0))
    pricing = tmp_path / "prices.json"
    pricing.write_text(json.dumps({"m/y": {"input": 2.0, "output": 8.0}}))
    result = CliRunner().invoke(app, [
        "leaderboard", "build", str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "a"),
        "--out", str(tmp_path / "out"), "--pricing", str(pricing), "--floor", "0",
        "--oracle", "1", "--n-boot", "50", "--copy-logs", "--title", "Test board"])
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    entries = {e["model"]: e for e in doc["benchmarks"][0]["entries"]}
    assert set(entries) == {"m/x", "m/y"} and entries["m/x"]["n"] == 4  # dir given twice
    assert entries["m/y"]["cost"] == pytest.approx(4 * 1000 * 2.0 / 1e6)
    assert entries["m/x"]["normalised"] == pytest.approx(0.75)  # fixed floor 0, oracle 1
    assert entries["m/y"]["logs"] == ["logs/y.json"]
    assert (tmp_path / "out" / "logs" / "y.json").exists()
    assert "Test board" in (tmp_path / "out" / "index.html").read_text()


def test_logs_without_samples_are_listed(tmp_path: Path) -> None:
    write_log(tmp_path / "logs", "ok", model="m/x", scores=[1.0, 0.0])
    write_log(tmp_path / "logs", "empty", model="m/z", scores=[])
    paths = build(tmp_path / "logs", tmp_path / "out")
    doc = json.loads(paths["json"].read_text())
    status = {Path(log["log_file"]).name: (log["status"], log["samples"]) for log in doc["logs"]}
    assert status == {"ok.json": ("success", 2), "empty.json": ("no samples", 0)}
