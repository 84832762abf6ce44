"""Cost on boards (issue 51 item 8): tokens, time and, with an Inspect model-cost config,
dollars per sample, score per dollar and cost per point, for each entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _lb_synth import write_log

from leaderboards.build import build, load_pricing
from leaderboards.runs.__main__ import build_board
from leaderboards.tables import Options

PRICES = """\
m/alpha:
  input: 2.0
  output: 8.0
  input_cache_write: 2.5
  input_cache_read: 0.2
beta:
  input: 0.5
  output: 1.5
"""


def _logs(root: Path) -> Path:
    write_log(root / "logs", "a", model="m/alpha", scores=[1.0, 1.0, 0.0, 1.0],
              tokens=(1000, 200), time=4.0)
    write_log(root / "logs", "b", model="m/beta", scores=[0.0, 0.0, 0.0, 0.0],
              tokens=(500, 100), time=2.0)
    write_log(root / "logs", "o", model="none/none", solver="synth/agents.py@oracle",
              scores=[1.0] * 4, tokens=(0, 0), time=0.1)
    (root / "prices.yaml").write_text(PRICES)
    return root / "logs"


def _entries(out: Path) -> dict[str, dict]:
    doc = json.loads((out / "leaderboard.json").read_text())
    return {e["name"]: e for e in doc["benchmarks"][0]["entries"]}


def test_a_priced_board_shows_dollars_and_score_per_dollar(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    build(logs, tmp_path / "out", Options(pricing=load_pricing(tmp_path / "prices.yaml")))
    entries = _entries(tmp_path / "out")
    alpha, beta, oracle = (entries["alpha · generate"], entries["beta · generate"],
                           entries["oracle (agent)"])
    per_sample = (1000 * 2.0 + 200 * 8.0) / 1e6
    assert alpha["cost_per_sample"] == pytest.approx(per_sample)
    assert alpha["cost"] == pytest.approx(4 * per_sample)
    assert alpha["score_per_dollar"] == pytest.approx(0.75 / per_sample)
    assert alpha["cost_per_point"] == pytest.approx(per_sample / 0.75)
    assert alpha["tokens_per_point"] == pytest.approx(1200 / 0.75)
    # priced by its name without the provider; at score 0 a point has no price
    assert beta["cost_per_sample"] == pytest.approx((500 * 0.5 + 100 * 1.5) / 1e6)
    assert beta["score_per_dollar"] == 0.0 and beta["cost_per_point"] is None
    # the scripted oracle has no model to price: no dollars, not $0
    assert oracle["cost_per_sample"] is None and oracle["score_per_dollar"] is None
    md = (tmp_path / "out" / "leaderboard.md").read_text()
    assert "| $/sample | score/$ |" in md
    assert f"| {per_sample:.5f} | {0.75 / per_sample:.1f} |" in md


def test_a_board_file_names_its_pricing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _logs(tmp_path)
    monkeypatch.chdir(tmp_path)
    spec = {"log_root": str(logs), "board": {"pricing": "prices.yaml"}}
    build_board(spec, tmp_path / "priced")
    build_board({"log_root": str(logs)}, tmp_path / "plain")
    assert _entries(tmp_path / "priced")["alpha · generate"]["cost_per_sample"] > 0
    assert _entries(tmp_path / "plain")["alpha · generate"]["cost_per_sample"] is None
