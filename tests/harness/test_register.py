"""The inspect_evals Register entries (``register/<eval>/eval.yaml``, :mod:`harness.register`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from harness.register import REGISTERED, RegisterEntry, load_source, run, validate_file

REPO = Path(__file__).resolve().parents[2]


def test_the_committed_entries_are_in_step_with_the_benchmarks() -> None:
    """Every registered benchmark has an entry equal to what its eval.yaml gives, valid
    against the documented fields, and true of the pinned commit."""
    assert run(REPO, write=False) == []
    for name in REGISTERED:
        entry = RegisterEntry.model_validate(
            yaml.safe_load((REPO / "register" / name / "eval.yaml").read_text()))
        assert [t.name for t in entry.tasks] == [name]
        assert (REPO / entry.tasks[0].task_path).is_file()
    assert load_source(REPO).repository_commit == entry.source.repository_commit


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": "worldtravel"}, "id"),                          # injected by the Register
        ({"tags": ["planning"]}, "tags"),                       # deprecated
        ({"arxiv": "2602.08367"}, "arxiv"),                      # a URL, not an id
        ({"source": {"repository_url": "https://x.org/r", "repository_commit": "main",
                     "maintainers": ["a"]}}, "repository_commit"),  # a branch, not a SHA
        ({"tasks": []}, "tasks"),
    ],
)  # fmt: skip
def test_the_documented_fields_are_enforced(tmp_path: Path, change: dict, message: str) -> None:
    data = yaml.safe_load((REPO / "register" / "worldtravel" / "eval.yaml").read_text())
    data.update(change)
    path = tmp_path / "eval.yaml"
    path.write_text(yaml.safe_dump(data))
    problems = validate_file(path)
    assert problems and any(message in str(p) for p in problems), problems


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout.strip()  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small repository holding one benchmark (worldtravel's eval.yaml and a task file)."""
    root = tmp_path / "repo"
    (root / "benchmarks" / "worldtravel").mkdir(parents=True)
    (root / "register").mkdir()
    shutil.copy(REPO / "benchmarks" / "worldtravel" / "eval.yaml",
                root / "benchmarks" / "worldtravel" / "eval.yaml")
    (root / "benchmarks" / "worldtravel" / "worldtravel.py").write_text(
        "@task\ndef worldtravel():\n    ...\n")
    shutil.copy(REPO / "register" / "source.yaml", root / "register" / "source.yaml")
    _git(root, "init", "-q")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "x",
         "--allow-empty")
    _git(root, "add", ".")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "benchmark")
    return root


def test_write_then_check_and_what_breaks_it(repo: Path) -> None:
    from harness.register import pin

    names = ("worldtravel",)
    pin(repo, "HEAD")
    assert run(repo, write=True, names=names) == []
    assert run(repo, write=False, names=names) == []

    # the benchmark's description changes: the entry is stale until rewritten
    spec = repo / "benchmarks" / "worldtravel" / "eval.yaml"
    spec.write_text(spec.read_text().replace("150 generated", "151 generated"))
    stale = {p.path for p in run(repo, write=False, names=names) if "differs" in p.message}
    assert stale == {"register/worldtravel/eval.yaml"}  # the README shows no description
    assert run(repo, write=True, names=names) == []

    # a version bump after the pin: the pinned commit no longer holds what the entry says
    spec.write_text(spec.read_text().replace('version: "2.1.0"', 'version: "2.2.0"'))
    problems = run(repo, write=True, names=names)
    assert any("has version 2.1.0" in str(p) for p in problems), problems
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "bump")
    pin(repo, "HEAD")
    assert run(repo, write=True, names=names) == []

    # a pin before the task file existed
    pin(repo, "HEAD~2")
    problems = run(repo, write=True, names=names)
    assert any("is not in commit" in str(p) for p in problems), problems
