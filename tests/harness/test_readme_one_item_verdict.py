"""The README's study table on a verdict whose contrast has no interval.

A contrast over one item (ThetaEvolve's test-time RL study scores one problem) has null
interval bounds in report.json; the table must say so instead of failing to format them,
so ``harness readme`` keeps working on the committed tree.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.docs.tables import study_table

REPO = Path(__file__).resolve().parents[2]


def test_a_contrast_without_an_interval_is_shown_as_such(tmp_path: Path) -> None:
    source = REPO / "methods" / "studies" / "medversa_editors"
    folder = tmp_path / "methods" / "studies" / "medversa_editors"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("logs"))
    report = json.loads((folder / "report.json").read_text())
    report["verdict"]["contrast"] = {"estimate": 0.0, "ci": [None, None], "n_items": 1}
    (folder / "report.json").write_text(json.dumps(report))
    table = study_table(tmp_path)
    row = next(line for line in table.splitlines() if "medversa" in line)
    assert "+0 (no interval: 1 item)" in row and "None" not in row
