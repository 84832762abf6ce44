"""ThetaEvolve's parts on their own: diffs, rewards, the island database, the journal."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from methods.thetaevolve.evolve import (
    PENALTIES,
    Database,
    DiffError,
    Journal,
    Outcome,
    Program,
    RewardConfig,
    apply_diff,
    parse_diff,
    reward_for,
    shaped_reward,
)

CODE = "def f():\n    x = 1\n    return x\n"


def test_parse_and_apply_blocks_in_order() -> None:
    reply = (
        "Edit:\n<<<<<<< SEARCH\n    x = 1\n=======\n    x = 2\n>>>>>>> REPLACE\n"
        "and\n<<<<<<< SEARCH\n    return x\n=======\n    return x + 1\n>>>>>>> REPLACE\n"
    )
    blocks = parse_diff(reply)
    assert [b.search for b in blocks] == ["    x = 1\n", "    return x\n"]
    assert apply_diff(CODE, blocks) == "def f():\n    x = 2\n    return x + 1\n"


def test_trailing_whitespace_is_tolerated_but_missing_text_fails() -> None:
    blocks = parse_diff("<<<<<<< SEARCH\n    x = 1   \n=======\n    x = 3\n>>>>>>> REPLACE")
    assert apply_diff(CODE, blocks) == "def f():\n    x = 3\n    return x\n"
    missing = parse_diff("<<<<<<< SEARCH\n    y = 1\n=======\n    y = 3\n>>>>>>> REPLACE")
    with pytest.raises(DiffError, match="block 1: SEARCH text not found"):
        apply_diff(CODE, missing)


def test_text_without_blocks_is_no_diff() -> None:
    assert parse_diff("I think the program is fine.\n```python\nx = 1\n```") == []


def test_penalties_and_shaping() -> None:
    config = RewardConfig()
    assert reward_for(Outcome.NO_DIFF, None, config) == -0.4
    assert reward_for(Outcome.IDENTICAL, None, config) == -0.3
    assert reward_for(Outcome.EXEC_ERROR, None, config) == -0.2
    assert set(PENALTIES) == {Outcome.NO_DIFF, Outcome.IDENTICAL, Outcome.EXEC_ERROR}
    assert reward_for(Outcome.VALID, 0.7, config) == 0.7
    assert reward_for(Outcome.INVALID, 0.7, config) == 0.0
    shaping = RewardConfig(shaping=True, lo=1.0, hi=3.0)
    assert shaped_reward(2.0, shaping) == pytest.approx(5 * 0.5**3)
    assert shaped_reward(0.0, shaping) == 0.0 and shaped_reward(9.0, shaping) == 5.0
    with pytest.raises(ValueError):
        RewardConfig(shaping=True, lo=1.0, hi=1.0)


def _db(**kwargs: object) -> Database:
    db = Database(**kwargs)  # type: ignore[arg-type]
    db.seed("code", 1.0)
    return db


def test_islands_keep_their_best_under_eviction() -> None:
    db = _db(num_islands=2, population_size=6)
    for i in range(10):
        db.add(Program(f"p{i}", f"c{i}", float(i % 4), "init-0", 0, 1))
    assert len(db.islands[0]) == 3  # 6 programs over 2 islands
    assert db.best(0).score == 3.0 and db.best(1).id == "init-1"
    assert db.best().score == 3.0


def test_exploitation_draws_elites_and_migration_moves_the_best() -> None:
    db = _db(num_islands=2, elite_size=1, exploitation=1.0)
    db.add(Program("star", "c", 9.0, "init-0", 0, 1))
    rng = random.Random(0)
    assert {db.sample_parent(0, rng).id for _ in range(20)} == {"star"}
    db.migrate()
    assert db.best(1).score == 9.0 and db.best(1).parent_id == "star"
    again = Database.from_json(json.loads(json.dumps(db.to_json())))
    assert again.to_json() == db.to_json()


def test_journal_skips_and_repairs_a_torn_last_line(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.append({"kind": "seed", "score": 1.0})
    with journal.path.open("a") as f:
        f.write('{"kind": "candidate", "id": "s1-')  # the process died mid-write
    reopened = Journal(tmp_path)
    assert reopened.records() == [{"kind": "seed", "score": 1.0}]
    reopened.append({"kind": "step_done", "step": 1})
    assert [r["kind"] for r in reopened.records()] == ["seed", "step_done"]
    reopened.write_snapshot(1, {"x": 1})
    assert reopened.read_snapshot() == (1, {"x": 1})
