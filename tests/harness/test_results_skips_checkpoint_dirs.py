"""harness.results does not take Inspect's checkpoint folders for logs."""

from __future__ import annotations

from pathlib import Path

from harness.results import list_logs


def test_checkpoint_folders_are_not_searched(tmp_path: Path) -> None:
    log = tmp_path / "2026-01-01T00-00-00_task_abc.eval"
    log.write_bytes(b"")
    sample_dir = tmp_path / "2026-01-01T00-00-00_task_abc.checkpoints" / "s1__1"
    (sample_dir / "context").mkdir(parents=True)
    for name in ("ckpt-00001.json", "context/store.json", "context/events.json"):
        (sample_dir / name).write_text("{}")
    (tmp_path / "run.checkpoints.json").write_text("{}")  # a file so named is still a log
    assert list_logs(tmp_path) == [log, tmp_path / "run.checkpoints.json"]
    # named explicitly, a file inside is kept (as any explicitly named file)
    assert list_logs(sample_dir / "ckpt-00001.json") == [sample_dir / "ckpt-00001.json"]
