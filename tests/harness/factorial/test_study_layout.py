"""A study is one folder with a fixed inside: study.yaml, its reports, logs/<run>/ for each
run it declares, and the summaries it declares.

Exercised on small synthetic study folders (a declared run, an undeclared log folder, a
summary command that rebuilds or drifts) and on the committed tree: every folder below
``methods/studies/*/logs/`` is a declared run, and no Inspect log is committed outside a
``logs/<run>/`` folder of a study or a board.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.factorial.report.regenerate import (
    layout_outcomes,
    study_folders,
    summary_outcomes,
)
from harness.factorial.run import default_log_dir
from harness.factorial.study import StudyError, load_study, parse_study

ROOT = Path(__file__).resolve().parents[3]

STUDY = """\
name: tiny
response: {tasks: [harness/arithmetic]}
factors:
  - {name: model, binds_to: model, levels: [{label: a, value: mockllm/model}]}
"""


def _folder(tmp_path: Path, extra: str = "") -> Path:
    folder = tmp_path / "studies" / "tiny"
    folder.mkdir(parents=True)
    (folder / "study.yaml").write_text(STUDY + extra)
    return folder


def test_a_study_folder_writes_each_declared_run_to_its_logs_folder(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "runs: {main: the study, seeds: again over seeds}\n")
    study = load_study(folder / "study.yaml")
    assert study.folder == folder
    assert default_log_dir(study) == folder / "logs" / "main"
    assert default_log_dir(study, "seeds") == folder / "logs" / "seeds"
    with pytest.raises(StudyError, match="run 'oracle' is not declared; runs: main, seeds"):
        default_log_dir(study, "oracle")


def test_the_copy_a_run_keeps_names_the_same_study_folder(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    copy = folder / "logs" / "main" / "study.yaml"
    copy.parent.mkdir(parents=True)
    copy.write_text(STUDY)
    assert load_study(copy).folder == folder
    assert study_folders(tmp_path) == [folder]


def test_a_loose_study_file_keeps_the_scratch_default(tmp_path: Path) -> None:
    path = tmp_path / "scratch.yaml"
    path.write_text(STUDY)
    study = load_study(path)
    assert study.folder is None
    assert default_log_dir(study) == Path("logs/studies/tiny")


def test_run_names_must_be_folder_names() -> None:
    with pytest.raises(StudyError, match="not a folder name"):
        parse_study(STUDY + "runs: {'../up': escapes the folder}\n")


def test_summaries_must_be_module_commands_with_an_out() -> None:
    with pytest.raises(StudyError, match="not 'python -m MODULE"):
        parse_study(STUDY + "summaries: ['bash make.sh {study}']\n")


def test_an_undeclared_log_folder_is_flagged(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "runs: {main: the study}\n")
    (folder / "logs" / "main").mkdir(parents=True)
    assert layout_outcomes(folder) == []
    (folder / "logs" / "copied_by_hand").mkdir()
    [flagged] = layout_outcomes(folder)
    assert flagged.status == "undeclared" and not flagged.ok
    assert flagged.report == folder / "logs" / "copied_by_hand"


def _summary_module(tmp_path: Path) -> str:
    """A tiny summary script (as a method's would be): counts the files of a folder."""
    (tmp_path / "count_files.py").write_text(
        "import sys, pathlib\n"
        "src = pathlib.Path(sys.argv[1])\n"
        "out = pathlib.Path(sys.argv[sys.argv.index('--out') + 1])\n"
        "out.write_text(f'{sum(1 for _ in src.iterdir())} files\\n')\n")
    return "count_files"


def test_a_declared_summary_is_rebuilt_and_checked(tmp_path: Path) -> None:
    module = _summary_module(tmp_path)
    folder = _folder(tmp_path, f"summaries: ['python -m {module} {{study}}/logs/main "
                               f"--out {{study}}/summary.md']\n")
    logs = folder / "logs" / "main"
    logs.mkdir(parents=True)
    (logs / "a.eval").write_text("x")
    [written] = summary_outcomes(folder, tmp_path, check=False)
    assert written.status == "rewritten"
    assert (folder / "summary.md").read_text() == "1 files\n"
    [same] = summary_outcomes(folder, tmp_path, check=True)
    assert same.status == "same"
    (logs / "b.eval").write_text("y")  # the logs moved on; the committed summary did not
    [drift] = summary_outcomes(folder, tmp_path, check=True)
    assert drift.status == "differs" and "line 1" in drift.detail
    assert (folder / "summary.md").read_text() == "1 files\n"  # --check writes nothing


def test_every_committed_study_folder_declares_its_log_folders() -> None:
    folders = study_folders(ROOT / "methods" / "studies")
    assert len(folders) >= 25
    flagged = [o for f in folders for o in layout_outcomes(f)]
    assert flagged == []


def test_no_inspect_log_is_committed_outside_a_run_folder() -> None:
    files = subprocess.run(["git", "ls-files", "*.eval"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()

    def in_a_run_folder(name: str) -> bool:
        parts = Path(name).parts
        if parts[:2] == ("methods", "studies"):  # methods/studies/<study>/logs/<run>/<log>
            return len(parts) == 6 and parts[3] == "logs"
        if parts[0] == "leaderboards":  # leaderboards/<board>/logs/<run>/[<entry>/]<log>
            return len(parts) >= 5 and parts[2] == "logs"
        return False

    outside = [f for f in files if not in_a_run_folder(f) and not f.startswith("tests/")]
    assert outside == [], outside[:5]


def test_benchmark_folders_hold_no_run_outputs() -> None:
    """Benchmark experiments are studies or boards too (issue 45): no results/ or logs/
    folder is committed inside benchmarks/."""
    files = subprocess.run(["git", "ls-files", "benchmarks"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    outputs = [f for f in files if {"results", "logs"} & set(Path(f).parts[:-1])]
    assert outputs == [], outputs[:5]


def test_the_old_reports_root_gets_a_pointer_not_a_traceback() -> None:
    done = subprocess.run([str(Path(sys.executable).parent / "harness"), "study", "regenerate",
                           "methods/studies/reports", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "harness study regenerate methods/studies" in done.stdout + done.stderr


def test_a_protocol_study_declares_runs_that_write_their_folders(tmp_path: Path) -> None:
    from harness.factorial.protocol_study import ProtocolStudy, load_study_folder

    folder = tmp_path / "proto"
    (folder / "logs" / "lifelong").mkdir(parents=True)
    (folder / "study.yaml").write_text(
        "name: proto\nkind: protocol\ndescription: a driver's runs\nruns:\n"
        "  lifelong: {note: curves, command: 'harness x --out proto/logs/lifelong'}\n")
    study = load_study_folder(folder)
    assert isinstance(study, ProtocolStudy) and list(study.runs) == ["lifelong"]
    assert layout_outcomes(folder) == []
    (folder / "logs" / "stray").mkdir()
    assert [o.report.name for o in layout_outcomes(folder)] == ["stray"]
    with pytest.raises(StudyError, match="has no cells to run"):
        load_study(folder / "study.yaml")
    (folder / "study.yaml").write_text(
        "name: proto\nkind: protocol\ndescription: d\nruns:\n"
        "  lifelong: {note: curves, command: 'harness x --out elsewhere'}\n")
    with pytest.raises(StudyError, match="must write logs/lifelong/"):
        load_study_folder(folder)


def test_regenerate_on_one_protocol_study_checks_its_layout(tmp_path: Path) -> None:
    """A protocol study has runs but no factorial report: checking that folder alone passes
    when its logs are as declared and fails on an undeclared log folder."""
    folder = tmp_path / "proto"
    (folder / "logs" / "full").mkdir(parents=True)
    (folder / "study.yaml").write_text(
        "name: proto\nkind: protocol\ndescription: a driver's runs\nruns:\n"
        "  full: {note: all, command: 'harness x --out proto/logs/full'}\n")
    cmd = [str(Path(sys.executable).parent / "harness"), "study", "regenerate", str(folder),
           "--check"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every log folder is a declared run" in done.stdout
    (folder / "logs" / "stray").mkdir()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1 and "undeclared" in done.stdout
