"""Designs: full factorials, 2^(k-p) fractions (generators, resolution search), subsets.

Alias and resolution checks are made against the coded matrix itself (a defining word is
a product of columns that is constant over the runs), so they do not just restate the code.
"""

from __future__ import annotations

import hashlib
import itertools
import json

import numpy as np
import pytest

from harness.factorial.design import (
    cell_id,
    design_from_cli,
    design_json,
    fractional_factorial,
    full_factorial,
    random_subset,
)


def _column_product(design, word: str) -> np.ndarray:
    letters = {v: i for i, v in enumerate(design.letters.values())}
    X = design.matrix()
    body = word.lstrip("-")
    return np.prod(X[:, [letters[c] for c in body]], axis=1)


def _assert_orthogonal_balanced(X: np.ndarray) -> None:
    n = X.shape[0]
    assert np.all(X.sum(axis=0) == 0), "every column is balanced"
    assert np.array_equal(X.T @ X, n * np.eye(X.shape[1], dtype=int)), "columns are orthogonal"


def test_resolution_v_five_factors_matches_cli_contract() -> None:
    design = design_from_cli(
        ["A", "B", "C", "D", "E"], resolution=5, generators=None, fraction=None
    )
    out = design_json(design)
    assert set(out) == {"runs", "generators", "defining_relation", "aliases", "matrix"}
    assert out["runs"] == 16
    assert out["generators"] == ["E=ABCD"]
    assert out["defining_relation"] == ["I=ABCDE"]
    assert design.resolution == 5
    assert out["aliases"]["A"] == ["BCDE"]
    assert out["aliases"]["AB"] == ["CDE"]
    X = np.array(out["matrix"])
    assert X.shape == (16, 5) and set(np.unique(X)) == {-1, 1}
    _assert_orthogonal_balanced(X)
    assert np.all(X[:, 4] == X[:, :4].prod(axis=1))
    json.dumps(out)  # the CLI prints it


def test_resolution_iv_six_factors() -> None:
    design = fractional_factorial(list("ABCDEF"), resolution=4)
    assert design.n_cells == 16 and design.resolution == 4
    assert design.word_length_pattern[:2] == (0, 3)  # minimum aberration 2^(6-2)_IV
    _assert_orthogonal_balanced(design.matrix())
    for word in design.defining_relation:
        assert len(word.removeprefix("I=").lstrip("-")) == 4
        assert np.all(_column_product(design, word.removeprefix("I=")) == 1)
    # main effects are clear of two-factor interactions, some 2FIs are aliased together
    for main in "ABCDEF":
        assert all(len(a.lstrip("-")) >= 3 for a in design.aliases[main])
    assert any(len(a) == 2 for key in design.aliases if len(key) == 2 for a in design.aliases[key])


def test_resolution_iii_seven_factors_is_the_classic_saturated_design() -> None:
    design = fractional_factorial(list("ABCDEFG"), resolution=3)
    assert design.n_cells == 8 and design.resolution == 3
    assert design.generators == ("D=AB", "E=AC", "F=BC", "G=ABC")
    assert len(design.defining_relation) == 15
    _assert_orthogonal_balanced(design.matrix())
    assert "BD" in design.aliases["A"]  # A = BD since I = ABD


def test_explicit_generators_give_the_whole_defining_relation() -> None:
    design = fractional_factorial(list("ABCDEF"), generators=["E=ABC", "F=BCD"])
    assert set(design.defining_relation) == {"I=ABCE", "I=BCDF", "I=ADEF"}
    X = design.matrix()
    assert np.all(X[:, 4] == X[:, 0] * X[:, 1] * X[:, 2])
    for word in design.defining_relation:
        assert np.all(_column_product(design, word.removeprefix("I=")) == 1)


def test_negative_generator_and_named_factors() -> None:
    design = fractional_factorial(
        {"temp": ["lo", "hi"], "shots": [0, 5], "fmt": ["json", "prose"]}, generators=["C=-AB"]
    )
    assert design.defining_relation == ("I=-ABC",)
    X = design.matrix()
    assert np.all(X[:, 2] == -X[:, 0] * X[:, 1])
    assert {c.levels["temp"] for c in design.cells} == {"lo", "hi"}


@pytest.mark.parametrize(
    ("k", "resolution", "runs"),
    [
        (4, 4, 8),
        (5, 3, 8),
        (6, 4, 16),
        (7, 3, 8),
        (7, 4, 16),
        (8, 4, 16),
        (9, 4, 32),
        (8, 5, 64),
        (10, 5, 128),
        (11, 3, 16),
        (11, 4, 32),
        (11, 5, 128),
    ],
)
def test_search_finds_smallest_fraction_with_resolution(k: int, resolution: int, runs: int) -> None:
    design = fractional_factorial([f"x{i}" for i in range(k)], resolution=resolution)
    assert design.n_cells == runs
    assert design.resolution is not None and design.resolution >= resolution
    X = design.matrix()
    _assert_orthogonal_balanced(X)
    # no product of fewer than `resolution` columns is constant over the runs
    for r in range(1, resolution):
        for combo in itertools.combinations(range(k), r):
            assert abs(int(X[:, list(combo)].prod(axis=1).sum())) < runs


def test_minimum_aberration_word_length_patterns() -> None:
    # 2^(7-2)_IV: F=ABCD, G=ABDE up to relabelling -> one 4-letter and two 5-letter words
    assert fractional_factorial(list("ABCDEFG"), p=2).word_length_pattern[:3] == (0, 1, 2)
    # 2^(8-2)_V: two 5-letter words and one 6-letter word
    assert fractional_factorial(list("ABCDEFGH"), resolution=5).word_length_pattern[:4] == (
        0,
        0,
        2,
        1,
    )


def test_generators_below_requested_resolution_are_rejected() -> None:
    with pytest.raises(ValueError, match="resolution"):
        design_from_cli(list("ABCDE"), resolution=5, generators=["D=AB", "E=AC"], fraction=None)
    with pytest.raises(ValueError, match="unknown factor"):
        fractional_factorial(list("ABCD"), generators=["D=AXC"])


def test_full_factorial_cells_ids_and_order() -> None:
    design = full_factorial({"model": ["m1", "m2"], "prompt": ["p1", "p2", "p3"], "k": [0, 5]})
    assert design.n_cells == 12
    assert len({c.id for c in design.cells}) == 12
    assert [c.levels["model"] for c in design.cells[:2]] == ["m1", "m2"]  # first factor fastest
    again = full_factorial({"model": ["m1", "m2"], "prompt": ["p1", "p2", "p3"], "k": [0, 5]})
    assert [c.id for c in again.cells] == [c.id for c in design.cells]
    assert design.matrix().shape == (12, 3)
    assert set(design.matrix()[:, 1]) == {0, 1, 2}  # three levels coded by index


def test_cli_fraction_and_full() -> None:
    assert design_from_cli(list("ABCD"), None, None, None).n_cells == 16
    half = design_from_cli(list("ABCD"), None, None, 1)
    assert half.n_cells == 8 and half.resolution == 4


def test_random_subset_is_seeded_and_keeps_ids() -> None:
    design = full_factorial({"a": range(4), "b": range(5)})
    one = random_subset(design, 7, seed=3)
    two = random_subset(design, 7, seed=3)
    other = random_subset(design, 7, seed=4)
    assert [c.id for c in one.cells] == [c.id for c in two.cells]
    assert [c.id for c in one.cells] != [c.id for c in other.cells]
    assert one.n_cells == 7 and {c.id for c in one.cells} <= {c.id for c in design.cells}


def test_design_json_has_one_run_per_cell() -> None:
    design = fractional_factorial(list("ABCD"), generators=["D=ABC"])
    data = design_json(design)
    assert data["runs"] == 8 == design.n_cells
    assert data["matrix"] == [list(c.coded) for c in design.cells]


def test_cell_id_is_one_function_of_what_makes_the_cell() -> None:
    levels = {"model": "m1", "prompt": "p2"}
    assert cell_id(levels) == cell_id(dict(reversed(levels.items())))  # factor order
    full = full_factorial({"model": ["m1", "m2"], "prompt": ["p1", "p2"]})
    assert full.cell(cell_id(levels)).levels == levels
    study_cell = cell_id(levels, task="harness/arithmetic", task_args={"n": 3}, seed=1)
    assert study_cell != cell_id(levels)
    assert study_cell != cell_id(levels, task="harness/arithmetic", task_args={"n": 3}, seed=2)
    # the formula study logs record (changing it would orphan every existing study log)
    payload = {"task": "harness/arithmetic", "args": {"n": 3}, "levels": levels, "seed": None}
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    assert cell_id(levels, task="harness/arithmetic", task_args={"n": 3}) == "c" + digest[:10]
