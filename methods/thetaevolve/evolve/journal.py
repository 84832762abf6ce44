"""The checkpoint of an evolution run: an append-only journal plus a per-step snapshot.

Why both: the journal gets one line per event, flushed and fsynced as it happens, so a
run killed at any moment loses at most the response being evaluated, never a candidate
already scored; the snapshot (the database after each finished step, written to a temp
file and renamed) makes resuming cheap and lets a person look at the population. On
resume the snapshot is loaded and the journal lines after its step are replayed; a last
line cut short by the kill is ignored.

Journal records (``kind``): ``seed`` (the initial program's evaluation), ``plan`` (the
parents chosen for a step, so a resumed step uses the same parents and seeds),
``candidate`` (one response: outcome, score, reward, diff, rollout) and ``step_done``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

JOURNAL = "journal.jsonl"
SNAPSHOT = "database.json"


class Journal:
    """One run's checkpoint directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / JOURNAL
        self.snapshot_path = directory / SNAPSHOT
        self._truncate_torn_tail()

    def records(self) -> list[dict[str, Any]]:
        """Every complete record, in order (a torn last line from a kill is skipped)."""
        if not self.path.exists():
            return []
        out = []
        with self.path.open(encoding="utf-8") as f:
            for line in f:
                if not line.endswith("\n"):
                    break  # written partly when the process died
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    break
        return out

    def append(self, record: dict[str, Any]) -> None:
        """Append one record durably (flush + fsync before returning)."""
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def _truncate_torn_tail(self) -> None:
        """Cut a partial last line (left by a kill) so new records start on a fresh line."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with self.path.open("r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)

    def write_snapshot(self, step: int, database: dict[str, Any]) -> None:
        """Atomically replace the snapshot with the database after ``step``."""
        tmp = self.snapshot_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"step": step, "database": database}), encoding="utf-8")
        os.replace(tmp, self.snapshot_path)

    def read_snapshot(self) -> tuple[int, dict[str, Any]] | None:
        """``(step, database)`` of the last snapshot, or None."""
        if not self.snapshot_path.exists():
            return None
        data = json.loads(self.snapshot_path.read_text(encoding="utf-8"))
        return int(data["step"]), data["database"]
