"""Judges that deliver: a forced verdict tool, retries that show the parse error, misses counted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from inspect_ai.model import get_model

import benchmarks.causalgame.policies  # noqa: F401  (registers scripted/*)
from benchmarks.causalgame.judges import agreement, episodes, judge_all
from benchmarks.causalgame.scorer import VERDICT_TOOL, judge_once, verdict_tool
from environments.causalgame.rubric import CRITERIA_IDS
from harness.models.ladder import find as find_rung
from harness.models.ladder import status as rung_status

ROOT = Path(__file__).resolve().parents[3]


def _ladder_causalgame_logs() -> Path:
    """The ladder board's committed CausalGame logs (the board folder was renamed from
    leaderboards/published to leaderboards/ladder; either layout is accepted)."""
    for board in ("ladder", "published"):
        folder = ROOT / "leaderboards" / board / "logs" / "causalgame"
        if folder.is_dir():
            return folder
    raise FileNotFoundError("no committed ladder CausalGame logs under leaderboards/")


LADDER_LOG = _ladder_causalgame_logs() / "causalgame_all--embedded_qwen2.5-coder-0.5b"


def _reply(ids: tuple[str, ...] | list[str], verdict: str = "SATISFIED") -> str:
    return json.dumps({c: {"verdict": verdict, "reasoning": "r"} for c in ids})


def test_the_verdict_tool_schema_is_one_enum_object_per_criterion() -> None:
    tool = verdict_tool(CRITERIA_IDS)
    assert tool.name == VERDICT_TOOL and tool.parameters.required == list(CRITERIA_IDS)
    cr1 = tool.parameters.properties["CR1"]
    assert cr1.properties is not None
    assert cr1.properties["verdict"].enum == ["SATISFIED", "PARTIALLY_SATISFIED", "NOT_SATISFIED"]


def test_a_cut_reply_is_retried_for_the_missing_criteria_only() -> None:
    cut = _reply(CRITERIA_IDS[:3])[:-1] + ', "ED1": {"verdict": "SATIS'
    judge = get_model("scripted/sequence",
                      steps=json.dumps([cut, _reply(CRITERIA_IDS[3:], "NOT_SATISFIED")]))
    got = asyncio.run(judge_once(judge, "grade"))
    assert got["attempts"] == 2 and got["missing"] == []
    assert [got["criteria"][c]["score"] for c in CRITERIA_IDS] == [1, 1, 1, 0, 0, 0]
    assert "---" in got["raw"]  # both replies kept


def test_a_judge_that_never_answers_is_counted_not_hidden() -> None:
    judge = get_model("scripted/sequence", steps=json.dumps(["I cannot grade this."] * 3))
    got = asyncio.run(judge_once(judge, "grade", retries=2))
    assert got["attempts"] == 3 and got["missing"] == list(CRITERIA_IDS)
    assert all(v["verdict"] == "MISSING" for v in got["criteria"].values())


def test_agreement_reports_the_returned_share_and_icc_intervals() -> None:
    eps = episodes([str(LADDER_LOG)])
    judges = ["scripted/sequence;steps=" + json.dumps([_reply(CRITERIA_IDS, v)] * 3)
              for v in ("SATISFIED", "PARTIALLY_SATISFIED")]
    judges.append("scripted/sequence;steps=" + json.dumps(["nothing"] * 9))
    results = asyncio.run(judge_all(eps, judges, budget=2000, max_tokens=50, retries=0))
    out = agreement(results)
    assert out["ratings"] == 3 * 6 * 3 and out["missing_verdicts"] == 3 * 6
    assert out["returned_share"] == pytest.approx(2 / 3)
    assert out["returned_ci"][0] < 2 / 3 < out["returned_ci"][1]
    assert "icc2_1_ci" in out["criterion_level"]


@pytest.mark.slow
def test_a_ladder_judge_returns_every_verdict_under_the_grammar() -> None:
    """The real 0.5B model through the embedded grammar: all six verdicts, first try."""
    rung = find_rung("qwen2.5-coder-0.5b")
    if rung is None or not rung_status(rung)["ready"]:
        pytest.skip("qwen2.5-coder-0.5b is not installed")
    (ep,) = episodes([str(LADDER_LOG)], limit=1)
    results = asyncio.run(judge_all([ep], ["embedded/qwen2.5-coder-0.5b"], budget=1500,
                                    max_tokens=400))
    judgement = results[0]["judgements"][0]
    assert judgement["missing"] == []
    assert {v["verdict"] for v in judgement["criteria"].values()} <= {
        "SATISFIED", "PARTIALLY_SATISFIED", "NOT_SATISFIED"}
