"""The MVR-cache workload: per item an original, same-answer variants, a repeat, near misses."""

from __future__ import annotations

import random
from collections import Counter

from benchmarks.probes.mvr_workload import make_workload, near_miss
from environments.arithmetic import evaluate


def test_near_miss_changes_the_answer() -> None:
    rng = random.Random(0)
    for expression in ("3 + 4", "10 * 2 - 5", "7 - 7"):
        moved = near_miss(expression, rng)
        assert moved != expression and evaluate(moved) != evaluate(expression)
        assert len(moved.split()) == len(expression.split())


def test_workload_structure_and_gold() -> None:
    samples = make_workload(5, seed=0)
    assert len(samples) == 5 * 7 and len({s.id for s in samples}) == len(samples)
    kinds = Counter(s.metadata["kind"] for s in samples)  # type: ignore[index]
    assert kinds == {"original": 5, "repeat": 5, "variant": 15, "near_miss": 10}
    by_item: dict[str, list] = {}
    for s in samples:
        by_item.setdefault(s.metadata["item"], []).append(s)  # type: ignore[index]
    for item in by_item.values():
        original = next(s for s in item if s.metadata["kind"] == "original")
        for s in item:
            same = s.metadata["kind"] in ("original", "repeat", "variant")
            assert (s.target == original.target) == same
            if s.metadata["kind"] == "repeat":
                assert s.input == original.input
            if s.metadata["kind"] == "variant":
                assert s.input != original.input and s.metadata.get("interventions")
    assert [s.id for s in make_workload(5, seed=0)] == [s.id for s in samples]
