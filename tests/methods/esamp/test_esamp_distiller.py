"""ESamp's distiller loss record (issue 49): the per-group history keeps only steps with live
rows, ``loss_summary`` reduces a curve to head/tail/curve, ``finish`` puts it in each reply's
metadata, and the study summary reads it back paired over items."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

torch = pytest.importorskip("torch")

from methods.esamp.distiller import load, markdown, summarise  # noqa: E402
from methods.esamp.esamp import LOSS_WINDOW, Distillers, loss_summary  # noqa: E402

HIDDEN = 16


def test_history_keeps_live_steps_per_group_and_falls_on_a_fixed_mapping() -> None:
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(2, 1, HIDDEN, generator=gen)
    target = torch.nn.functional.layer_norm(x @ torch.randn(HIDDEN, HIDDEN, generator=gen),
                                            (HIDDEN,))
    d = Distillers([1, 2], [0, 1], HIDDEN, rank=8, lr=1e-2, device="cpu")
    for step in range(60):
        # group 1's only row finishes after 25 steps: its history must stop there
        mask = torch.tensor([[1.0], [1.0 if step < 25 else 0.0]])
        d.step(x, target, mask)
    assert [len(h) for h in d.history] == [60, 25]
    assert d.history[0][0] == pytest.approx(d.first_loss[0])
    summary = loss_summary(d.history[0])
    assert summary["esamp_trained_steps"] == 60
    assert summary["esamp_loss_tail"] < 0.5 * summary["esamp_loss_head"]


def test_loss_summary_by_hand() -> None:
    history = [float(v) for v in range(40, 0, -1)]  # 40, 39, ..., 1
    s = loss_summary(history, window=10, points=4)
    assert s["esamp_loss_head"] == pytest.approx(sum(range(31, 41)) / 10)
    assert s["esamp_loss_tail"] == pytest.approx(sum(range(1, 11)) / 10)
    assert s["esamp_loss_curve"] == pytest.approx([35.5, 25.5, 15.5, 5.5])
    short = loss_summary([3.0] * (2 * LOSS_WINDOW - 1))
    assert short["esamp_loss_head"] is None and short["esamp_loss_tail"] is None
    assert len(loss_summary([1.0, 2.0], points=16)["esamp_loss_curve"]) == 2


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    schema = {"arm": pl.String(), "sample_id": pl.String(), "tokens": pl.Float64(),
              "steps": pl.Float64(), "head": pl.Float64(), "tail": pl.Float64(),
              "curve": pl.List(pl.Float64())}
    return pl.DataFrame(rows, schema=schema)


def test_summary_pairs_head_and_tail_over_items() -> None:
    rows: list[dict[str, Any]] = [
        {"arm": "plain", "sample_id": f"i{i}", "tokens": 150.0 + i, "steps": None,
         "head": None, "tail": None, "curve": None} for i in range(4)]
    heads, tails = [4.0, 3.0, 5.0, 4.0], [3.0, 3.5, 2.0, 3.0]
    rows += [{"arm": "esamp", "sample_id": f"i{i}", "tokens": 140.0, "steps": 150.0,
              "head": h, "tail": t, "curve": [h, t]}
             for i, (h, t) in enumerate(zip(heads, tails, strict=True))]
    summary = summarise(_frame(rows))
    assert "distiller" not in summary["arms"]["plain"]
    assert summary["arms"]["plain"]["reply_tokens"]["estimate"] == pytest.approx(151.5)
    d = summary["arms"]["esamp"]["distiller"]
    diffs = [t - h for h, t in zip(heads, tails, strict=True)]
    assert d["tail_minus_head"]["estimate"] == pytest.approx(sum(diffs) / 4, abs=1e-4)
    assert d["tail_minus_head"]["lo"] < d["tail_minus_head"]["estimate"]
    assert d["share_fell"] == pytest.approx(0.75)
    assert d["curve_mean"] == pytest.approx([4.0, 2.875], abs=1e-4)
    text = markdown(summary)
    assert "| esamp | 4 |" in text and "| plain | 4 |" in text
    assert not math.isnan(d["loss_head"]["estimate"])


STUDY_LOGS = Path(__file__).resolve().parents[3] / "methods/studies/esamp_long/logs/main"


@pytest.mark.skipif(not STUDY_LOGS.is_dir(), reason="the esamp_long study's logs")
def test_summary_reads_the_committed_study_logs() -> None:
    """The real records: every esamp item carries a distiller curve of >= 2 windows of
    steps, no plain item carries one, and the replies the probe asked for are >= 100 tokens
    on average in both arms (the point of the chain family)."""
    frame = load(STUDY_LOGS)
    plain = frame.filter(pl.col("arm") == "plain")
    esamp = frame.filter(pl.col("arm") == "esamp_b0.1")
    assert plain.height == esamp.height > 0
    assert plain.get_column("head").null_count() == plain.height
    assert esamp.get_column("head").null_count() == 0
    assert (esamp.get_column("steps") >= 2 * LOSS_WINDOW).all()
    summary = summarise(frame)
    for arm in ("plain", "esamp_b0.1"):
        assert summary["arms"][arm]["reply_tokens"]["estimate"] >= 100
    assert len(summary["arms"]["esamp_b0.1"]["distiller"]["curve_mean"]) == 16
