"""The board says, per CausalGame entry, how many episodes were auto-submitted."""

from __future__ import annotations

import json
from pathlib import Path

from leaderboards.build import auto_submitted_count, build

ROOT = Path(__file__).resolve().parents[3]


def _ladder_causalgame_logs() -> Path:
    """The ladder board's committed CausalGame logs (the board folder was renamed from
    leaderboards/published to leaderboards/ladder; either layout is accepted)."""
    for board in ("ladder", "published"):
        folder = ROOT / "leaderboards" / board / "logs" / "causalgame"
        if folder.is_dir():
            return folder
    raise FileNotFoundError("no committed ladder CausalGame logs under leaderboards/")


LOGS = _ladder_causalgame_logs()
MODEL_LOG = LOGS / "causalgame_all--embedded_qwen2.5-coder-0.5b"
ORACLE_LOG = LOGS / "causalgame_all--benchmarks_causalgame_agents_oracle"


def test_counts_only_for_causalgame_and_only_auto_submissions() -> None:
    assert auto_submitted_count("causalgame_all", list(MODEL_LOG.glob("*.eval"))) == 3
    assert auto_submitted_count("causalgame_all", list(ORACLE_LOG.glob("*.eval"))) == 0
    assert auto_submitted_count("arithmetic", list(MODEL_LOG.glob("*.eval"))) is None


def test_a_board_of_the_ladder_logs_shows_the_count(tmp_path: Path) -> None:
    paths = build([MODEL_LOG, ORACLE_LOG], tmp_path / "board")
    document = json.loads(paths["json"].read_text())
    (bench,) = document["benchmarks"]
    counts = {e["model"]: e.get("n_auto_submitted") for e in bench["entries"]}
    assert counts == {"embedded/qwen2.5-coder-0.5b": 3, "none/none": 0}
    assert "0 (3 auto-submitted)" in paths["md"].read_text()
