"""ThetaEvolve's edit classifier (diff / full rewrite / nothing), its shares, and the
MAP-Elites grid's insertion and replacement rule, on real program text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from methods.thetaevolve.evolve import Database, Program, classify, edit_shares, rewrite_child

REPO = Path(__file__).resolve().parents[3]
CIRCLES = (REPO / "environments/open_problems/initial_programs/circle_packing.py").read_text()

VALID_DIFF = """I will run the hill climbing for longer.

<<<<<<< SEARCH
ITERATIONS = 0
=======
ITERATIONS = 3000
>>>>>>> REPLACE
"""
BROKEN_DIFF = """<<<<<<< SEARCH
ITERATIONS = 10
=======
ITERATIONS = 3000
>>>>>>> REPLACE

```python
ITERATIONS = 3000
STEP_SIZE = 0.01
```
"""
WHOLE_PROGRAM = "Here is an improved version:\n```python\n" + CIRCLES.replace(
    "STEP_SIZE = 0.02", "STEP_SIZE = 0.05") + "```\n"
BLOCK_ONLY = """```python
ITERATIONS = 800
STEP_SIZE = 0.02
SEED = 1


def initial_centers():
    cells = [((i + 0.5) / 6, (j + 0.5) / 5) for j in range(5) for i in range(6)]
    return np.array(cells[:N])


def max_radii(centers):
    return np.full(len(centers), 0.05)


def construct_packing():
    centers = initial_centers()
    return centers, max_radii(centers)
```"""
PROSE = "The program looks good. You could increase ITERATIONS to improve the score."
BAD_PYTHON = "```python\ndef f(:\n    return\n```"


def test_a_diff_that_applies_is_a_valid_diff() -> None:
    edit = classify(CIRCLES, VALID_DIFF)
    assert edit.kind == "diff" and edit.child is not None
    assert "ITERATIONS = 3000\n" in edit.child and "ITERATIONS = 0\n" not in edit.child
    assert edit.diff_text.startswith("<<<<<<< SEARCH")


def test_a_broken_diff_is_not_rescued_by_the_code_around_it() -> None:
    edit = classify(CIRCLES, BROKEN_DIFF)
    assert edit.kind == "diff_failed" and edit.child is None
    assert "SEARCH text not found" in edit.reason


def test_whole_program_is_accepted_as_it_stands() -> None:
    edit = classify(CIRCLES, WHOLE_PROGRAM)
    assert edit.kind == "rewrite"
    assert edit.child == CIRCLES.replace("STEP_SIZE = 0.02", "STEP_SIZE = 0.05")


def test_code_without_markers_replaces_the_evolve_block_only() -> None:
    child = rewrite_child(CIRCLES, BLOCK_ONLY)
    assert child is not None
    head, rest = child.split("# EVOLVE-BLOCK-START\n")
    body, tail = rest.split("# EVOLVE-BLOCK-END")
    assert head == CIRCLES.split("# EVOLVE-BLOCK-START\n")[0]  # the fixed parts are kept
    assert tail == CIRCLES.split("# EVOLVE-BLOCK-END")[1]
    assert body.startswith("ITERATIONS = 800\n") and "np.full(len(centers), 0.05)" in body
    compile(child, "child.py", "exec")


def test_prose_and_broken_code_propose_nothing_and_the_fallback_can_be_off() -> None:
    assert classify(CIRCLES, PROSE).kind == "none"
    assert classify(CIRCLES, BAD_PYTHON).kind == "none"
    off = classify(CIRCLES, WHOLE_PROGRAM, full_rewrite=False)
    assert off.kind == "none" and off.child is None


def test_shares_count_real_responses() -> None:
    replies = [VALID_DIFF, VALID_DIFF, BROKEN_DIFF, WHOLE_PROGRAM, BLOCK_ONLY, PROSE, BAD_PYTHON,
               PROSE]
    shares = edit_shares(classify(CIRCLES, r).kind for r in replies)
    assert shares["responses"] == 8
    assert (shares["n_diff"], shares["n_diff_failed"], shares["n_rewrite"], shares["n_none"]) \
        == (2, 1, 2, 3)
    assert shares["diff_share"] == 2 / 8
    assert shares["diff_found_share"] == 3 / 8
    assert shares["rewrite_share"] == 2 / 8
    assert edit_shares([])["diff_share"] == 0.0
    with pytest.raises(ValueError, match="unknown edit kinds"):
        edit_shares(["diff", "patch"])


# ----------------------------------------------------------------------------- the grid


def _grid(bins: int = 4) -> Database:
    db = Database(num_islands=1, feature_bins=bins)
    db.seed(CIRCLES, 2.0)
    return db


def _prog(pid: str, code: str, score: float) -> Program:
    return Program(pid, code, score, "init-0", 0, 1)


def test_features_place_programs_in_cells() -> None:
    db = _grid(4)
    assert db.features(CIRCLES) == (1.0, 0.0)
    assert db.cell_of(CIRCLES) == "2,0"  # length ratio 1 of [0, 2) -> bin 2; identical -> 0
    assert db.cell_of("x = 1\n") == "0,3"  # tiny and unlike the seed
    assert db.cell_of(CIRCLES * 3).startswith("3,")  # longer than twice goes to the last bin
    with pytest.raises(ValueError, match="no grid"):
        Database(num_islands=1).cell_of(CIRCLES)


def test_a_cell_keeps_only_its_fittest_program() -> None:
    db = _grid(4)
    same_cell = CIRCLES.replace("ITERATIONS = 0", "ITERATIONS = 5")
    assert db.cell_of(same_cell) == db.cell_of(CIRCLES)
    assert not db.add(_prog("worse", same_cell, 1.5))  # loses to the seed: not kept
    assert not db.add(_prog("tie", same_cell, 2.0))  # a tie keeps the incumbent
    assert db.islands[0] == ["init-0"]
    assert db.add(_prog("better", same_cell, 2.5))  # strictly better: replaces it
    assert db.islands[0] == ["better"] and db.cells[0]["2,0"] == "better"
    other = "x = 1\n"
    assert db.add(_prog("niche", other, 0.1))  # an empty cell takes even a weak program
    assert sorted(db.islands[0]) == ["better", "niche"]
    assert db.best().id == "better"
    assert db.add(_prog("better", same_cell, 9.0))  # replaying a journal changes nothing
    assert db.programs["better"].score == 2.5
    again = Database.from_json(json.loads(json.dumps(db.to_json())))
    assert again.to_json() == db.to_json()
    assert not again.add(_prog("late", same_cell, 2.4))


def test_capacity_eviction_frees_the_cell() -> None:
    db = Database(num_islands=1, population_size=2, feature_bins=4)
    db.seed(CIRCLES, 2.0)
    db.add(_prog("a", "x = 1\n", 0.1))
    db.add(_prog("b", CIRCLES + "\n# a comment line\n" * 40, 3.0))
    assert sorted(db.islands[0]) == ["b", "init-0"]  # the weakest left the island
    assert "a" not in db.cells[0].values()
    assert db.cell_of("x = 2\n") == "0,3"  # the freed cell
    assert db.add(_prog("c", "x = 2\n", 0.05)) is False  # takes it, then is the weakest
    assert "0,3" not in db.cells[0] and sorted(db.islands[0]) == ["b", "init-0"]
