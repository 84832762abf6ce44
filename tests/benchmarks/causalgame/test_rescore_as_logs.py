"""CausalGame's published-protocol rescoring as one use of ``harness rescore``.

The committed ladder logs are rescored into new logs with
``benchmarks/causalgame/rescore.py@published_protocol`` (Inspect's score API, the old
scores kept); the new logs must say what ``harness causalgame rescore``'s table says for
the same logs: which episodes are N/A, and the survival of the rest.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from benchmarks.causalgame.rescore import rescore as table_rescore
from harness.rescore import rescore
from harness.results import read_results

LOGS = Path(__file__).resolve().parents[3] / "leaderboards" / "ladder" / "logs" / "causalgame"
RUNS = [LOGS / "causalgame_all--embedded_qwen2.5-coder-0.5b",  # 3 episodes, all auto-submitted
        LOGS / "causalgame_all-3--benchmarks_causalgame_agents_oracle",  # 3 submitted
        # a model that need not be installed here: a rule-based scorer needs no model
        LOGS / "causalgame_all-antenna_trap--embedded_qwen2.5-coder-1.5b"]


@pytest.mark.slow
def test_published_protocol_scorer_agrees_with_the_rescore_table(tmp_path: Path) -> None:
    done = rescore(RUNS, "benchmarks/causalgame/rescore.py@published_protocol", tmp_path,
                   action="append")
    assert len(done) == 3
    for run, written in zip(RUNS, done, strict=True):
        assert Path(written.written).parent.name == run.name
        [table] = table_rescore([run])
        frame = read_results(written.written)
        wide = (frame.filter(pl.col("score_key").is_in(
            ["published_protocol/na", "published_protocol/survival",
             "causalgame_scorer/survival"]))
            .pivot(on="score_key", index="sample_id", values="score_value"))
        assert int(wide["published_protocol/na"].sum()) == table["na_published"]
        kept = wide.filter(pl.col("published_protocol/na") == 0)
        # where the agent submitted, the published value is the logged survival
        assert kept["published_protocol/survival"].to_list() == kept[
            "causalgame_scorer/survival"].to_list()
        if table["published_mean"] is None:
            assert kept.height == 0
        else:
            mean = 100 * float(kept["published_protocol/survival"].mean())  # type: ignore[arg-type]
            assert mean == pytest.approx(table["published_mean"], abs=0.05)
