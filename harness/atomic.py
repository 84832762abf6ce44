"""Outputs written whole or not at all.

Why: a board, report, export or journal that a full disk or a kill cut short looked
complete (a zero-byte ``leaderboard.csv`` beside the other files). Every output is written
to a temporary file in the same folder, flushed to disk, then renamed over the target: a
rename within one file system is atomic, so a reader sees the previous file or the new
one, never half of one. A failed write removes its temporary file and raises
:class:`OutputWriteError`, one line naming the file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["OutputWriteError", "atomic_path", "staged_folder", "write_bytes", "write_text"]


class OutputWriteError(OSError):
    """An output could not be written; the previous version (if any) is untouched."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        super().__init__(f"{path}: could not be written ({reason}); the previous version, "
                         "if any, is untouched")


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on a clean exit it replaces ``path``.

    For writers that take a path (``polars.DataFrame.write_csv``, ``zipfile``): write to the
    yielded path. On an exception the temporary file is removed and ``path`` is untouched;
    an ``OSError`` (a full disk) becomes :class:`OutputWriteError`.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part",
                                    dir=target.parent)
        os.close(fd)
    except OSError as exc:
        raise OutputWriteError(target, _reason(exc)) from None
    temporary = Path(name)
    try:
        yield temporary
        with open(temporary, "rb+") as handle:
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise OutputWriteError(target, _reason(exc)) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see the module docstring)."""
    with atomic_path(path) as temporary, open(temporary, "wb") as handle:
        handle.write(data)
    return Path(path)


def write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see the module docstring)."""
    return write_bytes(path, text.encode(encoding))


@contextlib.contextmanager
def staged_folder(out: str | Path) -> Iterator[Path]:
    """Yield an empty staging folder inside ``out``; on a clean exit, move every file
    written there to the same place under ``out`` (each by an atomic rename).

    For outputs of many files (a board: Markdown, JSON, CSVs, site pages): everything is
    written first, so a full disk or an exception while writing leaves the previous output
    whole and unmixed; only the final renames, which allocate nothing, touch ``out``.
    """
    import shutil

    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder))
    except OSError as exc:
        raise OutputWriteError(folder, _reason(exc)) from None
    try:
        yield stage
        files = sorted(p for p in stage.rglob("*") if p.is_file())
        for file in files:
            with open(file, "rb") as handle:
                os.fsync(handle.fileno())
        for file in files:
            target = folder / file.relative_to(stage)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(file, target)
    except OSError as exc:
        raise OutputWriteError(_final_name(exc, stage, folder), _reason(exc)) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _final_name(exc: OSError, stage: Path, folder: Path) -> Path:
    """The output a failed write was for: its place in ``folder``, not in the staging."""
    name = getattr(exc, "filename", None)
    if not name:
        return folder
    try:
        return folder / Path(name).relative_to(stage)
    except ValueError:
        return Path(name)
