"""Fault injection on outputs: a full disk or a failure while writing leaves the previous
output whole (or none), never a plausible partial one, and names the file.

The disk is filled for real where this process may mount a small tmpfs (root, as in CI);
otherwise (and always, for the board) the writer is patched to fail the way a full disk
fails (``OSError(ENOSPC)`` from a write).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fault_support import offline_task
from inspect_ai import eval

from harness.atomic import OutputWriteError, atomic_path, write_text
from leaderboards.build import build


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("logs")
    eval(offline_task("writes", 4), model="mockllm/model", log_dir=str(folder),
         display="none")
    return folder


def _full_disk_on(monkeypatch: pytest.MonkeyPatch, after_bytes: int) -> None:
    """Make the atomic writer's file writes fail with ENOSPC past ``after_bytes``, after
    writing what fits, as a full disk does."""
    import harness.atomic

    real_open = open

    class Full:
        def __init__(self, handle: Any) -> None:
            self.handle, self.room = handle, after_bytes

        def write(self, data: bytes) -> int:
            if len(data) > self.room:
                self.handle.write(data[: self.room])
                self.room = 0
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.room -= len(data)
            return int(self.handle.write(data))

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: Any) -> None:
            self.handle.close()

    def full_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, mode, *args, **kwargs)
        return Full(handle) if "w" in mode else handle

    monkeypatch.setattr(harness.atomic, "open", full_open, raising=False)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_board_written_onto_a_full_disk_leaves_the_previous_one(
        logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "board"
    build(logs, out)
    before = _snapshot(out)
    assert before["leaderboard.csv"]  # a real board to lose

    real_write_text = Path.write_text

    def full_disk(self: Path, data: str, *args: Any, **kwargs: Any) -> int:
        """The disk fills while the Markdown is written (after the JSON): half a file."""
        if ".staging-" in str(self) and self.name == "leaderboard.md":
            real_write_text(self, data[:100])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real_write_text(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(OutputWriteError,
                       match=r"board/leaderboard.md: could not be written \(No space"):
        build(logs, out)
    monkeypatch.undo()
    assert _snapshot(out) == before  # every file as it was: no zero-byte CSV, no mix
    assert not [p for p in out.iterdir() if p.name.startswith(".staging-")]


def test_atomic_write_on_a_full_disk_names_the_file_and_keeps_the_old(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.json"
    target.write_text('{"old": true}\n')
    _full_disk_on(monkeypatch, after_bytes=10)
    with pytest.raises(OutputWriteError) as caught:
        write_text(target, json.dumps({"new": "x" * 1000}))
    monkeypatch.undo()
    assert str(caught.value).startswith(f"{target}: could not be written (No space left")
    assert target.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary left


def test_an_exception_while_writing_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    with pytest.raises(RuntimeError), atomic_path(target) as temporary:
        temporary.write_text("half")
        raise RuntimeError("killed mid-write")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, mounted for real (root only; skipped, saying why, elsewhere)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root; the patched-writer tests cover this")
    point = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
    point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(point)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"this sandbox refuses mount: {mounted.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=False)


def test_a_real_full_disk_keeps_the_previous_output(tiny_tmpfs: Path) -> None:
    target = tiny_tmpfs / "leaderboard.csv"
    write_text(target, "model,score\na,0.5\n")
    with pytest.raises(OutputWriteError, match="No space left on device"):
        write_text(target, "x" * 200_000)
    assert target.read_text() == "model,score\na,0.5\n"
    assert [p.name for p in tiny_tmpfs.iterdir()] == ["leaderboard.csv"]
