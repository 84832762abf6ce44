"""The committed leaderboard in ``leaderboards/ladder/site`` is valid and matches its logs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from leaderboards.exports import SCHEMA_PATH

REPO = Path(__file__).resolve().parents[2]
BOARD = REPO / "leaderboards" / "ladder"
PUBLISHED = BOARD / "site"
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


def test_the_board_is_what_its_logs_build() -> None:
    """``harness leaderboard run leaderboards/ladder --check``: the board folder's logs,
    built with its run file's board options, give the committed tables and exports."""
    from leaderboards.runs.__main__ import check_board, read_run_file, run_file

    spec = read_run_file(run_file(BOARD))
    assert spec["log_root"] == "leaderboards/ladder/logs"
    assert check_board(spec, PUBLISHED) == []


def test_a_board_check_finds_a_changed_table(tmp_path: Path) -> None:
    import shutil

    from leaderboards.runs.__main__ import check_board, read_run_file, run_file

    site = tmp_path / "site"
    shutil.copytree(PUBLISHED, site)
    (site / "leaderboard.md").write_text((site / "leaderboard.md").read_text() + "edited\n")
    problems = check_board(read_run_file(run_file(BOARD)), site)
    assert f"{site / 'leaderboard.md'}: differs from the board its logs build" in problems


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
         "leaderboards/ladder/logs", "results", "methods/studies",
         "benchmarks", "harness/factorial/examples"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()
    debris = ("eval-set.json", "logs.json")  # Inspect's eval-set bookkeeping: ignored on purpose
    logs = [p for p in untracked if p.endswith((".eval", ".json")) and "__pycache__" not in p
            and Path(p).name not in debris]
    assert not logs, f"committed boards/reports have logs left untracked (git add -f): {logs}"
