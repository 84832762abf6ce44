"""Every offline step is a ``harness`` subcommand (``harness.tool_commands``): each table
entry resolves, answers ``--help`` through the harness CLI, and the READMEs send users to
``harness ...`` rather than to module paths."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.tool_commands import TOOLS, resolve

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: f"{t.group} {t.name}")
def test_every_tool_answers_help_through_harness(tool) -> None:  # type: ignore[no-untyped-def]
    assert callable(resolve(tool.target))
    result = CliRunner().invoke(app, [*tool.group.split(), tool.name, "--help"])
    assert result.exit_code == 0, result.output
    assert "usage" in (result.output + str(result.stderr_bytes or b"")).lower()


def test_arguments_reach_the_modules_main(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    path.write_text("[]")
    result = CliRunner().invoke(app, ["medversa", "load", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert '"records": 0' in result.output


def test_the_readme_names_no_python_m_command() -> None:
    text = (REPO / "README.md").read_text()
    assert not re.findall(r"python -m [\w.]+", text)


def test_every_harness_command_a_readme_names_exists() -> None:
    groups = {t.group: set() for t in TOOLS}
    for tool in TOOLS:
        groups[tool.group].add(tool.name)
    readmes = [p for p in REPO.rglob("README.md") if ".venv" not in p.parts]
    missing = []
    for readme in readmes:
        for group, name in re.findall(r"harness ((?:method lightwm)|[a-z-]+) ([a-z][a-z-]*)",
                                      readme.read_text()):
            if group in groups and name not in groups[group]:
                known = CliRunner().invoke(app, [*group.split(), name, "--help"])
                if known.exit_code != 0:
                    missing.append(f"{readme.relative_to(REPO)}: harness {group} {name}")
    assert not missing, missing
