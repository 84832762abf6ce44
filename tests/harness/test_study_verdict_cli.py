"""`harness study verdict`: a report's computed verdict as one JSON line (what a study's
prepared gpu/gpu.sh prints as its result)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from harness.cli import app

REPO = Path(__file__).resolve().parents[2]


def test_the_line_carries_the_reports_verdict_and_the_callers_context() -> None:
    report = REPO / "methods" / "studies" / "model_size_demo"
    verdict = json.loads((report / "report.json").read_text())["verdict"]
    result = CliRunner().invoke(app, ["study", "verdict", str(report), "--set", "smoke=true",
                                      "--set", "logs=/x/logs/gpu", "--set", "n=3"])
    assert result.exit_code == 0, result.output
    line = json.loads(result.output)
    assert line["verdict"] == verdict["class"] and line["why"] == verdict["why"]
    assert line["contrast"] == verdict["contrast"] and line["mdd"] == verdict["mdd"]
    assert line["treatment"]["mean"] == verdict["arms"]["treatment"]["mean"]
    assert line["smoke"] is True and line["n"] == 3 and line["logs"] == "/x/logs/gpu"


def test_a_folder_without_a_report_or_a_bad_set_is_refused(tmp_path: Path) -> None:
    missing = CliRunner().invoke(app, ["study", "verdict", str(tmp_path)])
    assert missing.exit_code != 0 and "report.json" in missing.output
    report = REPO / "methods" / "studies" / "model_size_demo"
    bad = CliRunner().invoke(app, ["study", "verdict", str(report), "--set", "novalue"])
    assert bad.exit_code != 0 and "KEY=VALUE" in bad.output
