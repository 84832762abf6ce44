"""A report's cost section (issue 51 item 8): asked for with --cost or --pricing, priced
from an Inspect model-cost config, recorded in the command and rebuilt by regenerate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from harness.cost import load_pricing
from harness.factorial.report import build_report
from harness.factorial.report.frame import study_frame
from harness.factorial.report.regenerate import plan_for, regenerate
from harness.results import load_results

ROOT = Path(__file__).resolve().parents[3]
STUDY = "methods/studies/causalgame_setup_swing"
PRICES = "leaderboards/pricing.example.yaml"


def _validate(data: dict) -> None:
    """Against the JSON Schema documented in harness/factorial/REPORT_SCHEMA.md."""
    import re

    import jsonschema

    text = (ROOT / "harness/factorial/REPORT_SCHEMA.md").read_text()
    (block,) = re.findall(r"```json\n(.*?)\n```", text, flags=re.S)
    jsonschema.validate(data, json.loads(block))


def test_the_cost_options_are_recorded_and_parsed() -> None:
    plan = plan_for("harness study report L --out R --pricing p.yaml --cost")
    assert plan.options == {"pricing": "p.yaml", "cost": True}


@pytest.mark.slow
def test_a_priced_report_matches_the_logs_and_regenerates(tmp_path: Path) -> None:
    logs = tmp_path / "methods/studies/swing/logs/main"
    shutil.copytree(ROOT / STUDY / "logs/main", logs)
    (tmp_path / "leaderboards").mkdir()
    shutil.copy(ROOT / PRICES, tmp_path / PRICES)
    out = tmp_path / "methods/studies/swing"
    command = (f"harness study report methods/studies/swing/logs/main "
               f"--out methods/studies/swing --pricing {PRICES}")
    build_report(logs, out, pricing=str(tmp_path / PRICES), command=command)
    data = json.loads((out / "report.json").read_text())
    cost = data["cost"]
    assert cost["unpriced_models"] == []
    assert set(cost["prices"]) == {"embedded/qwen2.5-coder-0.5b", "embedded/smollm2-135m"}
    assert len(cost["cells"]) == len(data["cell_results"]) == 24
    assert "Cost per sample and per point" in (out / "report.md").read_text()
    _validate(data)

    # one cell by hand from the results frame: dollars per sample and score per dollar
    prices = load_pricing(ROOT / PRICES)
    cell = next(c for c in cost["cells"] if c["levels"] == {
        "auto_submit": "on", "harness": "react", "model": "qwen0.5b", "protocol": "suite"})
    frame = study_frame(load_results(logs).frame)
    rows = frame.filter((pl.col("score_key") == data["response"]["score_key"])
                        & (pl.col("auto_submit") == "on") & (pl.col("harness") == "react")
                        & (pl.col("model") == "qwen0.5b") & (pl.col("protocol") == "suite"))
    dollars = [prices[r["log_model"]].dollars(r["input_tokens"], r["output_tokens"],
                                              r["cache_read_tokens"] or 0, r["total_tokens"])
               for r in rows.iter_rows(named=True)]
    # the embedded provider counts re-used prompt tokens in its input too: priced once
    assert all(r["input_tokens"] + r["output_tokens"] == r["total_tokens"]
               and r["cache_read_tokens"] > 0 for r in rows.iter_rows(named=True))
    assert cell["n"] == rows.height == 2
    assert cell["dollars_per_sample"] == pytest.approx(sum(dollars) / len(dollars))
    assert cell["score_per_dollar"] == pytest.approx(
        cell["mean_score"] / cell["dollars_per_sample"])
    assert cell["working_s_per_sample"] == pytest.approx(rows["working_time"].mean())

    # the recorded command rebuilds it; a changed price is a different report
    [same] = regenerate(tmp_path / "methods/studies", tmp_path, check=True)
    assert same.status == "same", same.detail
    (tmp_path / PRICES).write_text((tmp_path / PRICES).read_text().replace(
        "input: 0.05", "input: 0.07"))
    [changed] = regenerate(tmp_path / "methods/studies", tmp_path, check=True)
    assert changed.status == "differs" and changed.detail.startswith(".cost.")


def test_a_report_without_the_option_has_no_cost_section() -> None:
    data = json.loads((ROOT / STUDY / "report.json").read_text())
    assert "cost" not in data
