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


def test_regenerate_check_passes_on_every_published_board(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``harness leaderboard regenerate --check`` from the repository root: every board
    folder with a committed site/ is what its committed logs build, file by file."""
    from leaderboards.runs.__main__ import published_boards, regenerate

    monkeypatch.chdir(REPO)
    boards = published_boards()
    assert Path("leaderboards/ladder") in boards
    lines: list[str] = []
    assert regenerate(boards, check=True, echo=lines.append) == 0, lines
    assert lines[-1] == f"{len(boards)} of {len(boards)} boards the same as their logs build"


def _copy_board(tmp_path: Path) -> Path:
    """The ladder board (run file, logs, site) under ``tmp_path``, at the path its run
    file's ``log_root`` names relative to the working directory."""
    import shutil

    board = tmp_path / "leaderboards" / "ladder"
    board.mkdir(parents=True)
    shutil.copy(BOARD / "board.yaml", board / "board.yaml")
    shutil.copytree(BOARD / "logs", board / "logs")
    shutil.copytree(PUBLISHED, board / "site")
    return board


@pytest.mark.slow
def test_regenerate_check_fails_after_a_log_is_edited(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A copied board checks clean; after one score in one log changes (the greedy
    WorldTravel planner's first scenario from 0 to 1) the check names the tables that now
    differ and the command exits 1."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from harness.cli import app

    board = _copy_board(tmp_path)
    monkeypatch.chdir(tmp_path)
    from typer.testing import CliRunner

    runner = CliRunner()
    clean = runner.invoke(app, ["leaderboard", "regenerate", "leaderboards/ladder", "--check"])
    assert clean.exit_code == 0, clean.output
    assert "the same as its logs build" in clean.output

    (log,) = (board / "logs" / "worldtravel" / "worldtravel--scripted_worldtravel-greedy"
              ).glob("*.eval")
    edited = read_eval_log(str(log))
    assert edited.samples
    score = edited.samples[0].scores["worldtravel_checker"]  # type: ignore[index]
    assert isinstance(score.value, dict) and score.value["feasible"] == 0
    score.value["feasible"] = 1
    write_eval_log(edited, str(log))

    failed = runner.invoke(app, ["leaderboard", "regenerate", "leaderboards/ladder", "--check"])
    assert failed.exit_code == 1, failed.output
    site = Path("leaderboards/ladder/site")
    for name in ("leaderboard.md", "entries.csv", "leaderboard.json", "worldtravel.svg"):
        assert f"FAIL {site / name}: differs from the board its logs build" in failed.output
    assert "0 of 1 boards the same as their logs build" in failed.output
    # the old alias fails the same way
    from leaderboards.runs.__main__ import main

    assert main(["leaderboards/ladder", "--check"]) == 1
    assert "worldtravel.html: differs" in capsys.readouterr().out


def test_a_check_names_stale_and_missing_files(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A file the logs no longer build and a built file that is not committed are
    differences too, not only a changed table."""
    from leaderboards.runs.__main__ import check_board, read_run_file

    board = _copy_board(tmp_path)
    monkeypatch.chdir(tmp_path)
    (board / "site" / "old-benchmark.html").write_text("<p>gone</p>")
    (board / "site" / "medversa.svg").unlink()
    problems = check_board(read_run_file(board / "board.yaml"), Path("leaderboards/ladder/site"))
    assert sorted(problems) == [
        "leaderboards/ladder/site/medversa.svg: not committed",
        "leaderboards/ladder/site/old-benchmark.html: stale (its logs no longer build it)"]


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
