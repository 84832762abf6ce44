"""The per-rank SCD comparison pairs items within a rank and reports each method pair."""

from __future__ import annotations

import polars as pl
import pytest


def test_paired_table_pairs_items_within_rank() -> None:
    from methods.scd.scd_compare import markdown, paired_table

    rows = []
    for rank, shift in (("none", 0.0), ("16", 0.3)):
        for item in range(5):
            base = 0.1 * item
            rows += [{"method": "reuse", "rank": rank, "sample_id": item, "score_value": base},
                     {"method": "patch", "rank": rank, "sample_id": item,
                      "score_value": base + shift + (0.01 if item % 2 else -0.01)}]
    table = paired_table(pl.DataFrame(rows))
    assert table.height == 2 and set(table["a"]) == {"patch"}
    at16 = table.filter(pl.col("rank") == "16").row(0, named=True)
    assert at16["a_minus_b"] == pytest.approx(0.3 - 0.002)  # 2 items +0.01, 3 items -0.01
    assert at16["lo"] < at16["a_minus_b"] < at16["hi"] and at16["hi"] - at16["lo"] < 0.05
    assert at16["n"] == 5 and "| 16 | patch | reuse |" in markdown(table)
