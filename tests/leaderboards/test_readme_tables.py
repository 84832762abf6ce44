"""The README blocks' wall-time line: one entry per command, its latest successful run."""

from __future__ import annotations

import json
from pathlib import Path

from leaderboards.runs.readme_tables import _walls


def test_a_rerun_supersedes_the_earlier_entry_of_the_same_command(tmp_path: Path) -> None:
    rows = [
        {"name": "wt", "label": "oracle", "command": "eval a", "exit": 0, "wall_s": 4.0,
         "load_avg": 0.8},
        {"name": "wt", "label": "model", "command": "eval b", "exit": 0, "wall_s": 900.0,
         "load_avg": 2.0},
        {"name": "other", "label": "x", "command": "eval c", "exit": 0, "wall_s": 1.0,
         "load_avg": 0.1},
        {"name": "wt", "label": "oracle", "command": "eval a", "exit": 0, "wall_s": 6.0,
         "load_avg": 4.5},
        {"name": "wt", "label": "model", "command": "eval b", "exit": 1, "wall_s": 3.0,
         "load_avg": 1.0},  # a failed rerun does not replace the last good one
    ]
    journal = tmp_path / "runs.jsonl"
    journal.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _walls(journal, "wt") == "model 900 s (load 2.0); oracle 6 s (load 4.5)"
    assert _walls(tmp_path / "missing.jsonl", "wt") == ""
