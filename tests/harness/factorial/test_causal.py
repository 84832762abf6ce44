"""Identification statements from a study's causal graph and design."""

from harness.factorial.causal import identification
from harness.factorial.design import fractional_factorial, full_factorial


def _by_factor(rows: list[dict]) -> dict[str, dict]:
    return {r["factor"]: r for r in rows}


def test_full_factorial_identifies_total_effects_and_names_unmanipulated_mediators() -> None:
    design = full_factorial({"model": ["a", "b"], "prompt_style": ["x", "y"], "seed": [1, 2]})
    rows = _by_factor(identification(
        ["model", "prompt_style", "seed"],
        [("model", "score"), ("prompt_style", "parsing"), ("parsing", "score")], design))
    assert rows["model"]["status"] == "identified" and rows["model"]["mediators"] == []
    assert rows["prompt_style"]["status"] == "identified"
    assert rows["prompt_style"]["mediators"] == ["parsing"]
    assert "not manipulated" in rows["prompt_style"]["reason"]
    assert rows["seed"]["status"] == "no path"


def test_resolution_three_fraction_flags_aliased_main_effects() -> None:
    design = fractional_factorial(["A", "B", "C"], generators=["C=AB"])
    rows = _by_factor(identification(["A", "B", "C"], [], design))
    assert rows["A"]["status"] == "aliased" and "B:C" in rows["A"]["reason"]
    # resolution V: main effects are clear of two-factor interactions
    design5 = fractional_factorial(["A", "B", "C", "D", "E"], resolution=5)
    rows5 = _by_factor(identification(["A", "B", "C", "D", "E"], [], design5))
    assert all(r["status"] == "identified" for r in rows5.values())


def test_edges_between_factors_are_ignored_with_a_reason() -> None:
    rows = identification(["a", "b"], [("a", "b"), ("b", "score")])
    by = _by_factor(rows)
    assert by["a->b"]["status"] == "ignored"
    assert by["a"]["status"] == "no path" and by["b"]["status"] == "identified"
