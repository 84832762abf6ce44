"""The ``harness`` CLI contracts that outside checks run: JSON shapes and names."""

import json

from typer.testing import CliRunner

from harness.cli import app

runner = CliRunner()


def test_list_json_shape() -> None:
    result = runner.invoke(app, ["list", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert list(data) == ["benchmarks", "methods", "models", "sandboxes"]
    assert "arithmetic" in {b["name"] for b in data["benchmarks"]}
    models = {m["name"] for m in data["models"]}
    assert {"embedded/smollm2-135m", "scripted/arith-oracle"} <= models
    assert {"bwrap", "docker"} <= {s["name"] for s in data["sandboxes"]}


def test_doctor_json_is_booleans_with_fixes() -> None:
    result = runner.invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    for key in ("docker", "compose", "bwrap", "chromium", "gpu"):
        assert isinstance(data[key], bool)
        assert data["details"][key]["fix"]
    # this machine's own facts, checked independently of the CLI
    import shutil

    assert data["bwrap"] == (shutil.which("bwrap") is not None)


def test_list_human_output() -> None:
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0
    assert "arithmetic" in result.output
