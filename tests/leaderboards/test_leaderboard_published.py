"""The committed leaderboard in ``leaderboards/published`` is valid and matches its logs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from leaderboards.exports import SCHEMA_PATH

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "leaderboards" / "published"
EEE_SCHEMA = REPO.parent / "shared" / "reference-data" / "every_eval_ever" / "eval.schema.json"

pytestmark = pytest.mark.skipif(not (PUBLISHED / "leaderboard.json").exists(),
                                reason="no published leaderboard")


def test_published_json_validates() -> None:
    doc = json.loads((PUBLISHED / "leaderboard.json").read_text())
    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
    if EEE_SCHEMA.exists():
        validator = jsonschema.Draft7Validator(json.loads(EEE_SCHEMA.read_text()))
        for path in (PUBLISHED / "eee").glob("*.json"):
            assert not list(validator.iter_errors(json.loads(path.read_text()))), path.name


@pytest.mark.skipif(not (PUBLISHED / "logs").is_dir(), reason="published logs not present")
def test_published_markdown_is_what_its_logs_build(tmp_path: Path) -> None:
    """The board is rebuilt from its committed logs with its run file's board options."""
    import yaml

    from leaderboards.runs.__main__ import build_board

    spec = yaml.safe_load((REPO / "leaderboards" / "runs" / "ladder_board.yaml").read_text())
    paths = build_board(spec, tmp_path, PUBLISHED / "logs")
    assert paths["md"].read_text() == (PUBLISHED / "leaderboard.md").read_text()


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="not a git checkout")
def test_every_published_log_is_committed() -> None:
    """The board is rebuilt from ``published/logs`` on a clean clone, and ``logs/`` is
    git-ignored: a rerun's new log must be force-added, or the clone builds another board."""
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.fail("git is not on PATH in a git checkout")
    untracked = subprocess.run(
        [git, "ls-files", "--others", "--ignored", "--exclude-standard", "--",
         "leaderboards/published/logs", "results", "methods/studies/reports",
         "benchmarks", "harness/factorial/examples"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()
    debris = ("eval-set.json", "logs.json")  # Inspect's eval-set bookkeeping: ignored on purpose
    logs = [p for p in untracked if p.endswith((".eval", ".json")) and "__pycache__" not in p
            and Path(p).name not in debris]
    assert not logs, f"committed boards/reports have logs left untracked (git add -f): {logs}"
