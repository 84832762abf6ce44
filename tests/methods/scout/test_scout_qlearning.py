"""Tabular Q-learning scouts learn the games; the textualiser round-trips a trajectory."""

from __future__ import annotations

import numpy as np
import pytest

from environments.scout import FrozenLake, generate, shortest_path, verify
from methods.scout.qlearning import QConfig, greedy_rollout, train_scout
from methods.scout.textualise import START, dialogue, parse, turns

LAKE = ["SFFF", "FHFH", "FFFH", "HFFG"]  # Gymnasium's 4x4 map
OPTIONS = {"sliding": {"depth": 6}}  # the task's scramble depth


def test_q_learning_solves_the_4x4_frozenlake_without_shaping() -> None:
    game = FrozenLake(LAKE)
    run = train_scout(game, QConfig(episodes=500, shaping=False, epsilon_start=1.0), seed=0)
    traj = run.trajectory
    assert traj.solved
    assert len(traj.actions) == len(shortest_path(game) or [])  # greedy = optimal (6)
    assert verify(game, traj.actions, strict=True).solved
    assert 0 < run.transitions < 500 * 40 and run.cpu_s >= 0


def test_an_untrained_table_does_not_solve_it() -> None:
    game = FrozenLake(LAKE)
    assert not greedy_rollout(game, {}, 40).solved


@pytest.mark.parametrize("name", ["frozenlake", "sokoban", "sliding"])
def test_scouts_solve_most_generated_instances(name: str) -> None:
    solved = 0
    for seed in range(6):
        game = generate(name, 100 + seed, **OPTIONS.get(name, {}))
        run = train_scout(game, QConfig(), seed=seed)
        if run.trajectory.solved:
            solved += 1
            assert verify(game, run.trajectory.actions, strict=True).solved
    assert solved >= 5, f"{name}: the scout solved {solved}/6"


def test_scouts_are_deterministic_by_seed() -> None:
    game = generate("sokoban", 3)
    a = train_scout(game, QConfig(episodes=200), seed=5)
    b = train_scout(game, QConfig(episodes=200), seed=5)
    assert a.trajectory.actions == b.trajectory.actions and a.transitions == b.transitions
    assert sorted(map(str, a.q)) == sorted(map(str, b.q))
    assert all(np.array_equal(a.q[s], b.q[s]) for s in a.q)


def test_textualiser_round_trips() -> None:
    game = FrozenLake(LAKE)
    traj = train_scout(game, QConfig(epsilon_start=1.0), seed=1).trajectory
    assert traj.solved
    messages = dialogue("RULES", game, traj)
    assert [m["role"] for m in messages[:4]] == ["system", "user", "assistant", "tool"]
    assert messages[1]["content"] == game.observe(game.initial(), START)
    system, observations, actions = parse(messages)
    assert system == "RULES" and actions == traj.actions
    assert observations == [game.observe(traj.states[0], START)] + [
        game.observe(s, o) for s, o in zip(traj.states[1:], traj.outcomes, strict=True)]
    windows = turns(messages)
    assert [a for _, a in windows] == traj.actions
    assert all(w[0]["content"] == "RULES" and w[1]["role"] == "user" for w, _ in windows)
    assert windows[2][0][1]["content"] == observations[2]
    with pytest.raises(ValueError, match="pairs"):
        parse(messages[:-1])
