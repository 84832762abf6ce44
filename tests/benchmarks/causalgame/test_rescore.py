"""Rescoring CausalGame logs under the published protocol (auto-submitted -> N/A)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.causalgame.rescore import agent_submitted, main, rescore, summarise, to_markdown
from harness.stats import wilson_ci

ROOT = Path(__file__).resolve().parents[3]


def _ladder_causalgame_logs() -> Path:
    """The ladder board's committed CausalGame logs (the board folder was renamed from
    leaderboards/published to leaderboards/ladder; either layout is accepted)."""
    for board in ("ladder", "published"):
        folder = ROOT / "leaderboards" / board / "logs" / "causalgame"
        if folder.is_dir():
            return folder
    raise FileNotFoundError("no committed ladder CausalGame logs under leaderboards/")


LADDER_05B = _ladder_causalgame_logs() / "causalgame_all--embedded_qwen2.5-coder-0.5b"
AGENTIC_512_15B = (ROOT / "leaderboards/causalgame_validation/logs/causalgame/"
                   "published-agentic-9-512--embedded_qwen2.5-coder-1.5b")
PROMPTING_15B = (ROOT / "leaderboards/causalgame_validation/logs/causalgame/"
                 "published-prompting-subset--embedded_qwen2.5-coder-1.5b")


def _row(scenario: str, trial: int, value: float | None, *, auto: bool = False,
         submitted: bool = True) -> dict[str, object]:
    ok = submitted and not auto
    return {"scenario": scenario, "trial": trial, "suite": value,
            "published": value if ok else None, "auto_submitted": auto,
            "agent_submitted": ok, "errored": False, "compat": "original"}


def test_who_submitted_reads_old_and_new_metadata() -> None:
    assert agent_submitted({"auto_submitted": True, "submitted": True}) is False
    assert agent_submitted({"auto_submitted": False, "submitted": False}) is False
    assert agent_submitted({"auto_submitted": False, "submitted": True}) is True
    assert agent_submitted({"auto_submitted": False}) is True  # 1.0/1.1: every run had a design


def test_summary_counts_na_and_keeps_both_protocols_apart() -> None:
    rows = [_row("a", 1, 0.5), _row("a", 2, 0.7), _row("a", 3, 0.4, auto=True),
            _row("b", 1, 0.0, submitted=False), _row("b", 2, 0.6), _row("b", 3, 0.8)]
    s = summarise(rows)
    assert (s["episodes"], s["auto_submitted"], s["unsubmitted"], s["na_published"]) == (6, 1, 1, 2)
    assert s["suite_mean"] == pytest.approx(100 * (0.5 + 0.7 + 0.4 + 0.0 + 0.6 + 0.8) / 6, abs=0.01)
    # published: cell means of the submitted trials (a: 60, b: 70), then their mean
    assert s["published_mean"] == pytest.approx(65.0)
    na = wilson_ci(2, 6)
    assert s["na_rate"] == pytest.approx(2 / 6, abs=1e-4)
    assert s["na_ci"] == [pytest.approx(na.lo, abs=1e-4), pytest.approx(na.hi, abs=1e-4)]


def test_the_ladder_05b_board_run_is_all_na_under_the_published_protocol() -> None:
    (run,) = rescore([LADDER_05B])
    assert run["model"] == "embedded/qwen2.5-coder-0.5b" and run["episodes"] == 3
    assert run["auto_submitted"] == 3 and run["na_published"] == 3
    assert run["published_mean"] is None and run["suite_mean"] == pytest.approx(41.5, abs=0.1)
    assert run["na_ci"][0] > 0.4 and run["na_ci"][1] == 1.0
    assert "| 3 | 3 | 0 | 41.5 | — | 3 | 1.00 [0.44, 1.00] |" in to_markdown([run])


def test_a_published_log_keeps_its_na_and_has_no_suite_mean(capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    (run,) = rescore([PROMPTING_15B])
    assert run["protocol"] == "published" and run["na_published"] == 1
    assert run["suite_mean"] is None  # the N/A episode has no auto-submitted design
    # the reply cap is a column, so runs that differ only in budget stay apart
    assert run["max_tokens"] is None and "| published | default | 3 |" in to_markdown([run])
    (capped,) = rescore([AGENTIC_512_15B])
    assert capped["max_tokens"] == 512 and "| published | 512 | 9 |" in to_markdown([capped])
    assert main([str(PROMPTING_15B), "--json"]) == 0
    assert '"na_published": 1' in capsys.readouterr().out
    assert main([str(PROMPTING_15B), "--real-models"]) == 0


def test_pooled_counts_every_run_of_a_mode() -> None:
    from benchmarks.causalgame.rescore import pooled

    runs = rescore([LADDER_05B, PROMPTING_15B])
    by_mode = {p["mode"]: p for p in pooled(runs)}
    assert by_mode["agentic"]["episodes"] == 3 and by_mode["agentic"]["na_published"] == 3
    assert by_mode["prompting"]["na_published"] == 1
    assert "All agentic runs above: 3 episodes in 1 runs" in to_markdown(runs)
