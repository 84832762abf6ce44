"""The workspace save/restore of FormulaCode's checkpoints on a host git repository.

``save_workspace`` and ``restore_workspace`` run unchanged against a local stand-in for the
sandbox (the same shell and git commands, in a temporary repository) and a dict store, so
every kind of edit is checked in a second, without docker or restic: the resumed
repository has the agent's edits, new files (binary too), deletions and staged changes,
and nothing it deleted comes back; git-ignored files are not carried; a repository that
is not at the base when the restore starts is reset first; a tampered delta is refused.
The docker kill-and-resume test (``test_formulacode_checkpoint.py``) checks the same hooks
inside Inspect.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.util import ExecResult

from benchmarks.formulacode import checkpoint
from environments.formulacode.images import WORKDIR
from environments.formulacode.pack import BASE_REF


class LocalSandbox:
    """The three sandbox calls the hooks make, run on the host with ``WORKDIR`` -> repo."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo

    async def exec(self, cmd: list[str], cwd: str | None = None,
                   **_: Any) -> ExecResult[str]:
        where = self.repo if cwd == WORKDIR else cwd
        done = subprocess.run(cmd, cwd=where, capture_output=True, text=True, check=False)
        return ExecResult(done.returncode == 0, done.returncode, done.stdout, done.stderr)

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        return Path(file).read_text() if text else Path(file).read_bytes()

    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode() if isinstance(contents, str) else contents
        Path(file).write_bytes(data)


class DictStore:
    def __init__(self) -> None:
        self.data: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self.data[key] = value


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          check=True).stdout


def _base_repo(path: Path) -> Path:
    """A small repository at its base commit tagged ``fc-base`` (what prepare_repo gives)."""
    (path / "pkg").mkdir(parents=True)
    (path / "pkg" / "core.py").write_text("def f(x):\n    return x + 1\n")
    (path / "pkg" / "old.py").write_text("OLD = 1\n")
    (path / "README").write_text("base\n")
    (path / ".gitignore").write_text("*.pyc\nbuild/\n")
    _git(path, "init", "-q")
    _git(path, "add", "-A")
    _git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    _git(path, "tag", BASE_REF)
    return path


def _state(repo: Path) -> dict[str, Any]:
    """What a resumed agent (and the grader) would see: status, file contents, modes."""
    files = {p.relative_to(repo).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
             for p in sorted(repo.rglob("*")) if p.is_file() and ".git" not in p.parts}
    return {"status": _git(repo, "status", "--porcelain", "--untracked-files=all"),
            "staged": _git(repo, "diff", "--cached", "--stat"), "files": files}


@pytest.fixture
def hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Point the hooks at a host repository and a dict store; returns both."""
    box = LocalSandbox(_base_repo(tmp_path / "agent"))
    shop = DictStore()
    monkeypatch.setattr(checkpoint, "sandbox", lambda: box)
    monkeypatch.setattr(checkpoint, "store", lambda: shop)
    monkeypatch.setattr(checkpoint, "_PATCH", str(tmp_path / "delta.patch"))
    monkeypatch.setattr(checkpoint, "_INDEX", str(tmp_path / "delta.index"))
    return {"box": box, "store": shop, "tmp": tmp_path}


def _edit(repo: Path) -> None:
    """An agent's work: every kind of change the grader can see, and some it cannot."""
    (repo / "pkg" / "core.py").write_text("def f(x):\n    return x + 2  # faster\n")
    (repo / "pkg" / "fast.py").write_text("FAST = True\n")
    (repo / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    _git(repo, "rm", "-q", "pkg/old.py")  # deleted and staged
    (repo / "README").unlink()  # deleted, not staged
    _git(repo, "add", "pkg/fast.py")  # a new file staged
    (repo / "build").mkdir()
    (repo / "build" / "out.txt").write_text("ignored\n")  # git-ignored: not carried


def _resume(hooks: dict[str, Any], fresh: Path) -> dict[str, Any]:
    hooks["box"].repo = fresh
    report = asyncio.run(checkpoint.restore_workspace(None, "resume"))  # type: ignore[arg-type]
    return dict(report.data or {})


def test_restore_puts_back_every_edit_and_no_deleted_file(hooks: dict[str, Any]) -> None:
    agent = hooks["box"].repo
    _edit(agent)
    asyncio.run(checkpoint.save_workspace(None))  # type: ignore[arg-type]
    saved = hooks["store"].get(checkpoint.WORKSPACE_KEY)
    assert saved["files"] == 6  # core.py, fast.py, blob.bin, run.sh, old.py, README

    fresh = _base_repo(hooks["tmp"] / "fresh")  # the new container, prepared again
    report = _resume(hooks, fresh)
    assert report["sha256"] == saved["sha256"] and report["reset_prepared_tree"] is False
    expected = _state(agent)
    del expected["files"]["build/out.txt"]  # git-ignored files are not restored
    assert _state(fresh) == expected
    assert not (fresh / "pkg" / "old.py").exists() and not (fresh / "README").exists()


def test_a_repository_off_its_base_is_reset_before_the_restore(
        hooks: dict[str, Any]) -> None:
    agent = hooks["box"].repo
    _edit(agent)
    asyncio.run(checkpoint.save_workspace(None))  # type: ignore[arg-type]
    fresh = _base_repo(hooks["tmp"] / "fresh")
    (fresh / "stray.txt").write_text("left by the image\n")
    (fresh / "README").write_text("changed\n")
    report = _resume(hooks, fresh)
    assert report["reset_prepared_tree"] is True
    assert not (fresh / "stray.txt").exists()
    assert _git(fresh, "status", "--porcelain", "--untracked-files=all") == _git(
        agent, "status", "--porcelain", "--untracked-files=all")


def test_an_unchanged_workspace_is_not_written_again(hooks: dict[str, Any]) -> None:
    asyncio.run(checkpoint.save_workspace(None))  # type: ignore[arg-type]
    first = hooks["store"].get(checkpoint.WORKSPACE_KEY)
    assert first["bytes"] == 0 and first["files"] == 0
    asyncio.run(checkpoint.save_workspace(None))  # type: ignore[arg-type]
    assert hooks["store"].get(checkpoint.WORKSPACE_KEY) is first  # no new store write
    fresh = _base_repo(hooks["tmp"] / "fresh")
    assert _resume(hooks, fresh)["files"] == 0


def test_a_restore_that_does_not_reproduce_the_delta_is_refused(
        hooks: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    _edit(hooks["box"].repo)
    asyncio.run(checkpoint.save_workspace(None))  # type: ignore[arg-type]
    fresh = _base_repo(hooks["tmp"] / "fresh")

    async def lose_the_index(patch: bytes, *flags: str) -> None:
        if not flags:  # the working tree comes back, the staged changes do not
            await original(patch, *flags)

    original = checkpoint._apply
    monkeypatch.setattr(checkpoint, "_apply", lose_the_index)
    with pytest.raises(RuntimeError, match="not the saved one"):
        _resume(hooks, fresh)


def test_an_oversized_delta_fails_the_checkpoint(hooks: dict[str, Any],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpoint, "MAX_DELTA_BYTES", 100)
    _edit(hooks["box"].repo)
    with pytest.raises(RuntimeError, match="over the 100-byte limit"):
        asyncio.run(checkpoint.save_workspace(None))  # type: ignore[arg-type]
    assert checkpoint.WORKSPACE_KEY not in hooks["store"].data
    assert shutil.which("git")
