"""Cycles-vs-clock calibration (issue 46, item 4): flags over 10%, and no ratio for a task
whose expert changed after the clock run (quantile in pack 2.3)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.formulacode import calibration


def _run(speedups: dict[str, float], timer: str) -> dict:
    return {"tasks": {f"evalsuite-pack_{slug}_1": {"oracle_speedup": s, "timer": timer,
                                                   "measure": "cycles"}
                      for slug, s in speedups.items()}}


def test_flags_differences_over_ten_percent_and_skips_changed_experts(tmp_path: Path) -> None:
    cycles = _run({"topk": 1.663, "dedup": 1.167, "quantile": 1.40}, "cycles")
    clock = _run({"topk": 1.411, "dedup": 1.150, "quantile": 1.327}, "process_cpu")
    table = calibration.compare(cycles, clock, expert_changed=frozenset({"quantile"}))
    assert table["topk"]["flagged"] and not table["dedup"]["flagged"]
    assert abs(table["topk"]["cycles_over_clock"] - 1.663 / 1.411) < 1e-12
    q = table["quantile"]
    assert q["quiet_clock_stale"] and q["cycles_over_clock"] is None and not q["flagged"]
    assert q["cycles_speedup"] == 1.40 and q["quiet_clock_speedup"] == 1.327
    assert "expert changed" in calibration.markdown(table)
    # without the option the same rows are compared (and quantile's 5% gap is not flagged)
    plain = calibration.compare(cycles, clock)
    assert plain["quantile"]["cycles_over_clock"] is not None

    paths = []
    for name, doc in (("c.json", cycles), ("q.json", clock)):
        paths.append(tmp_path / name)
        paths[-1].write_text(json.dumps(doc))
    out = tmp_path / "cal.json"
    assert calibration.main([*map(str, paths), str(out), "--expert-changed", "quantile"]) == 0
    written = json.loads(out.read_text())
    assert written["expert_changed"] == ["quantile"]
    assert written["flagged"] == ["topk"]
