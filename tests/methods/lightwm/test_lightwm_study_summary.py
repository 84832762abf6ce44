"""The agent-study summary: rebuilt from committed logs, and any score keys as columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from methods.lightwm.study_summary import main, summary

REPORTS = Path(__file__).resolve().parents[3] / "methods" / "studies"


def test_the_committed_household_summary_rebuilds_from_its_logs() -> None:
    folder = REPORTS / "lightwm_household_qwen"
    assert summary(folder / "logs" / "main") == (folder / "summary.md").read_text()


def test_columns_follow_the_keys_asked_for(tmp_path: Path) -> None:
    logs = REPORTS / "lightwm_household_qwen" / "logs" / "main"
    out = tmp_path / "s.md"
    assert main([str(logs), "--out", str(out), "--keys", "household_score/success",
                 "household_score/prompt_tokens", "household_score/no_such_key"]) == 0
    header = out.read_text().splitlines()[0]
    # a key the logs lack is left out; a 0/1 key gets a Wilson interval (never below 0)
    assert header == "| agent | n | success | prompt_tokens |"
    assert "| react | 10 | 0 [0, 0.278] |" in out.read_text()


def test_two_keys_with_one_column_name_are_refused() -> None:
    logs = REPORTS / "lightwm_household_qwen" / "logs" / "main"
    with pytest.raises(ValueError, match="share a column name"):
        summary(logs, score_keys=["household_score/success", "other/success"])
