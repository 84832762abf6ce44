"""The string world (environments/udm), the method task's scoring, and a tiny end-to-end
eval of ``harness/udm_grpo`` with both trainers."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

import methods.udm.plain  # noqa: F401  (registers udm-grpo and naive-grpo)
from benchmarks.paper_tasks.udm import udm as udm_module
from environments.udm import (
    constraint_reward,
    in_support,
    make_world,
    render,
    sample_corpus,
    satisfied,
)
from harness.method_tasks import summarise


def test_world_is_seeded_and_its_witness_solves_it() -> None:
    world = make_world(0)
    assert world == make_world(0) and world != make_world(1)
    assert constraint_reward(world.constraints, world.witness) == 1.0
    assert in_support(world, world.witness)
    assert {c["kind"] for c in world.constraints} == {"eq", "in"}
    corpus = sample_corpus(world, 200, 1)
    assert corpus == sample_corpus(world, 200, 1)
    assert all(in_support(world, s) for s in corpus)
    rewards = [constraint_reward(world.constraints, s) for s in corpus]
    assert 0.05 < sum(rewards) / len(rewards) < 0.8  # room for RL, not hopeless
    assert len(render(world.witness)) == world.length


def test_support_and_constraint_checks() -> None:
    world = make_world(2, vocab=4, length=4, branching=2)
    bad = next((a, b) for a in range(4) for b in range(4) if not world.allowed(a, b))
    assert not in_support(world, [bad[0], bad[1], *world.witness[2:]])
    assert not in_support(world, [0, 1, 2])
    assert satisfied([{"kind": "eq", "i": 0, "j": 1}, {"kind": "in", "i": 2, "tokens": [3]}],
                     [1, 1, 3, 0]) == 2
    with pytest.raises(ValueError, match="kind"):
        satisfied([{"kind": "gt", "i": 0}], [0])
    with pytest.raises(ValueError, match="branching"):
        make_world(0, vocab=3, branching=4)


def test_problem_scores_returned_samples_with_the_world_verifier() -> None:
    problem = udm_module.StringRLProblem(6, 8, 6, 100)
    inputs, world = problem.prepare({"seed": 0, "world": 0})
    assert len(inputs["corpus"]) == 100 and inputs["constraints"] == list(world.constraints)
    outputs = {"samples": [list(world.witness)] * 4,
               "samples_before": inputs["corpus"][:4], "train_collapse": 0.25}
    scores = problem.score(outputs, world, {})
    assert scores["reward"] == 1.0 and scores["solved"] == 1.0 and scores["in_support"] == 1.0
    assert scores["unique"] == 0.25 and scores["loss"] == 0.0
    assert scores["before_in_support"] == 1.0 and scores["train_collapse"] == 0.25
    assert scores["gain"] == pytest.approx(1.0 - scores["before_reward"])
    with pytest.raises(ValueError, match="tokens"):
        problem.score({"samples": [[9] * 8], "samples_before": [[0] * 8]}, world, {})
    with pytest.raises(ValueError, match="no samples"):
        problem.score({"samples": []}, world, {})


def test_task_ids_scale_and_option_errors() -> None:
    task = udm_module.udm_grpo(n_seeds=2, seed=4, rl_steps=100, scale=0.5)
    assert [s.id for s in task.dataset] == ["seed=4,world=0,rl_steps=50",
                                            "seed=5,world=0,rl_steps=50"]
    with pytest.raises(ValueError, match="JSON"):
        udm_module.udm_grpo(options="{nope")
    with pytest.raises(ValueError, match="algo"):
        udm_module.udm_grpo(options='{"algo": "naive"}')
    with pytest.raises(ValueError, match="registered: .*naive-grpo"):
        udm_module.udm_grpo(method="ppo")


@pytest.mark.slow
def test_end_to_end_eval_runs_both_trainers_on_a_tiny_world(tmp_path: Path) -> None:
    task = udm_module.udm_grpo(
        n_seeds=2, vocab=4, length=5, n_constraints=4, n_corpus=256, rl_steps=6, group=8,
        options='{"pretrain_steps": 40, "hidden": 32, "depth": 2, "sample_steps": 4, '
                '"n_eval": 32, "n_probe": 16}', cache_dir=str(tmp_path / "cache"))
    logs = inspect_eval(task, model="none", log_dir=str(tmp_path / "logs"),
                        display="none")
    assert logs[0].status == "success"
    rows = {r["metric"]: r for r in summarise(str(tmp_path / "logs"))}
    assert rows["reward"]["method"][3] == 2 and rows["reward"]["baseline"][3] == 2
    assert 0.0 <= rows["reward"]["method"][0] <= 1.0
    assert "train_collapse" in rows and "kl_ref_last" in rows


@pytest.mark.parametrize(("vocab", "length", "n_constraints"), [(12, 24, 32), (16, 32, 48)])
def test_harder_worlds_leave_room_above_the_pretraining_distribution(
        vocab: int, length: int, n_constraints: int) -> None:
    """The worlds piloted for methods/studies/udm_grpo_hard: reward 1 stays reachable inside
    the chain's support, while the chain's own strings (what pretraining imitates) score far
    below it and below the default world's, so RL has more than the claimed 0.27 to gain."""
    world = make_world(0, vocab=vocab, length=length, n_constraints=n_constraints)
    assert len(world.constraints) == n_constraints
    assert constraint_reward(world.constraints, world.witness) == 1.0
    assert in_support(world, world.witness)
    easy = make_world(0)
    corpus, easy_corpus = sample_corpus(world, 500, 1), sample_corpus(easy, 500, 1)
    mean = sum(constraint_reward(world.constraints, s) for s in corpus) / len(corpus)
    easy_mean = sum(constraint_reward(easy.constraints, s) for s in easy_corpus) / 500
    assert 0.05 < mean < easy_mean < 0.5
    assert max(constraint_reward(world.constraints, s) for s in corpus) < 0.73
