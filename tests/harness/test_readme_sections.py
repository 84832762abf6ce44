"""The README's generated tables: current on the committed tree, and able to go stale.

The benchmark table reads each ``eval.yaml``; the study table reads each study folder's
claim and the verdict its report computed. The check must fail when the data moves and the
README does not, and a README that lost a section's markers gets an error naming it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.docs.sections import open_marker, replace_sections, stale_sections
from harness.docs.tables import readme_sections, study_table
from harness.errors import UserInputError

REPO = Path(__file__).resolve().parents[2]


def test_the_committed_readme_tables_are_current() -> None:
    """``harness readme --check`` on the checkout (rerun ``harness readme --write``)."""
    text = (REPO / "README.md").read_text()
    assert stale_sections(text, readme_sections(REPO)) == []


def test_replacing_a_section_keeps_everything_else() -> None:
    text = f"intro\n{open_marker('t')}\nold\n<!-- /generated: t -->\noutro\n"
    fresh = replace_sections(text, {"t": "| a |\n"})
    assert fresh == f"intro\n{open_marker('t')}\n| a |\n<!-- /generated: t -->\noutro\n"
    assert stale_sections(text, {"t": "| a |\n"}) == ["t"]
    assert stale_sections(fresh, {"t": "| a |\n"}) == []
    with pytest.raises(UserInputError, match="README.md: no generated section other"):
        replace_sections(text, {"other": "x"})


def _one_study(tmp_path: Path, name: str) -> Path:
    """A copy of a committed study folder (its study file and reports, not its logs)."""
    source = REPO / "methods" / "studies" / name
    target = tmp_path / "methods" / "studies" / name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("logs"))
    return target


def test_a_moved_verdict_makes_the_study_table_stale(tmp_path: Path) -> None:
    folder = _one_study(tmp_path, "medversa_editors")
    before = study_table(tmp_path)
    assert "medversa_editors" in before and "**[untestable]" in before
    report = json.loads((folder / "report.json").read_text())
    report["verdict"]["class"] = "reproduces"
    report["verdict"]["contrast"]["estimate"] = 0.5
    (folder / "report.json").write_text(json.dumps(report))
    after = study_table(tmp_path)
    assert "**[reproduces]" in after and "+0.5 [" in after
    readme = f"{open_marker('studies')}\n{before}<!-- /generated: studies -->\n"
    assert stale_sections(readme, {"studies": after}) == ["studies"]


def test_a_study_without_a_claim_says_so(tmp_path: Path) -> None:
    folder = _one_study(tmp_path, "medversa_editors")
    text = (folder / "study.yaml").read_text()
    start = text.index("\nclaim:")
    end = text.index("\n# Named runs")
    (folder / "study.yaml").write_text(text[:start] + text[end:])
    assert "| no claim stated |" in study_table(tmp_path)
