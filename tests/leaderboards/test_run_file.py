"""The run-file driver: which runs ``--only`` selects (by run name or by entry id)."""

from __future__ import annotations

from pathlib import Path

from leaderboards.runs.__main__ import main

RUN_FILE = """\
log_root: {root}
runs:
  - name: bench
    id: first
    task: benchmarks/arithmetic
    agents: [a.py@x]
  - name: bench
    id: second
    task: benchmarks/arithmetic
    agents: [a.py@x]
  - name: other
    task: benchmarks/arithmetic
    agents: [a.py@x]
"""


def _dry_run(tmp_path: Path, capsys, *only: str) -> list[str]:  # type: ignore[no-untyped-def]
    spec = tmp_path / "runs.yaml"
    spec.write_text(RUN_FILE.format(root=tmp_path / "logs"))
    argv = [str(spec), "--dry-run"]
    for name in only:
        argv += ["--only", name]
    assert main(argv) == 0
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("[run]")]


def test_only_selects_by_name_or_by_id(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert len(_dry_run(tmp_path, capsys)) == 3
    assert len(_dry_run(tmp_path, capsys, "bench")) == 2
    [line] = _dry_run(tmp_path, capsys, "second")
    assert "bench/second--" in line
    assert _dry_run(tmp_path, capsys, "nothing") == []
