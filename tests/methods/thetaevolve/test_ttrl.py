"""Test-time RL for ThetaEvolve on a tiny random byte Llama: an update consumes a step's
recorded rollouts (grouped per parent prompt), checkpoints a loadable model folder, is
redone exactly after a restart, and ThetaEvolve with ``rl=True`` samples from and trains
its own copy of the weights between steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from inspect_ai import Task  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.scorer import match  # noqa: E402
from inspect_ai.solver import use_tools  # noqa: E402
from inspect_ai.tool import Tool, tool  # noqa: E402

from methods.recipes import tinylm  # noqa: E402
from methods.rl.trainer import latest_checkpoint, load_policy  # noqa: E402
from methods.thetaevolve.thetaevolve import STORE_SUMMARY, RLSettings, Rollout, thetaevolve  # noqa: E402
from methods.thetaevolve.ttrl import LOG_FILE, TestTimeRL  # noqa: E402

SETTINGS = RLSettings(algo="grpo", lr=3e-3, trainable="all", max_response_tokens=16)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cfg = tinylm.TinyConfig(d_model=32, n_layers=2, n_heads=4, n_kv_heads=4, ffn=64,
                            max_positions=1024)
    out = tmp_path_factory.mktemp("tiny")
    tinylm.save(tinylm.export(tinylm.build_model(cfg, 0), cfg), cfg, out)
    return out


PROGRAM = "# EVOLVE-BLOCK-START\nITERATIONS = 0\n# EVOLVE-BLOCK-END\nprint('hi')\n"


@tool
def fake_evaluator() -> Tool:
    async def execute(code: str) -> str:
        """Every program runs and scores its length (the tiny model never gets this far).

        Args:
            code: Program source.
        """
        return json.dumps({"ran": True, "valid": True, "combined_score": len(code) / 1e4,
                           "objective": len(code), "reason": "ok"})

    return execute


def _rollouts(step: int) -> list[Rollout]:
    """Two parents x 3 responses with spread rewards, one parent whose rewards tie, and a
    lone response (no group)."""
    rows = []
    for parent, rewards in (("p0", (0.9, -0.4, 0.1)), ("p1", (-0.4, 0.5, 0.2)),
                            ("p2", (-0.4, -0.4))):
        prompt = [{"role": "user", "content": f"improve {parent}"}]
        for j, reward in enumerate(rewards):
            rows.append(Rollout("k", f"s{step}-{parent}{j}", step, parent, prompt,
                                f"ITERATIONS = {j}00", reward, "valid"))
    rows.append(Rollout("k", f"s{step}-solo", step, "p3", [{"role": "user", "content": "x"}],
                        "y", 1.0, "valid"))
    return rows


def _weights(folder: Path) -> bytes:
    return (folder / "model.safetensors").read_bytes()


def test_an_update_consumes_the_recorded_rollouts_of_a_step(base: Path, tmp_path: Path) -> None:
    rl = TestTimeRL(base, SETTINGS, tmp_path / "rl")
    assert rl.restore(0, {}) == []
    row = rl.update(1, _rollouts(1))
    assert row["responses"] == 9 and row["groups"] == 3 and row["flat_groups"] == 1
    assert row["updates"] == 1 and row["tokens"] > 0
    # 6 of the 9 responses are in groups with spread rewards (|A| ~ 1 each), 2 tie (A = 0)
    assert 0.5 < row["mean_abs_advantage"] < 1.0
    assert row["delta_norm"] > 0 and row["drift_norm"] == pytest.approx(row["delta_norm"])
    assert row["drift_from"] == "base"
    assert row["reward_mean"] == pytest.approx(sum(r.reward for r in _rollouts(1)) / 9)
    ckpt = latest_checkpoint(tmp_path / "rl")
    assert ckpt is not None and ckpt.name == "ckpt-000001"
    assert _weights(ckpt) != _weights(base)
    load_policy(ckpt)  # a plain model folder
    logged = [json.loads(x) for x in (tmp_path / "rl" / LOG_FILE).read_text().splitlines()]
    assert [r["step"] for r in logged] == [1]
    lone = rl.update(2, _rollouts(2)[-1:])
    assert lone["updates"] == 0 and "two or more" in lone["skipped"]
    assert rl.summary()["checkpoint"].endswith("ckpt-000002")


def test_a_step_whose_groups_all_tie_leaves_the_weights_where_they_were(
        base: Path, tmp_path: Path) -> None:
    rl = TestTimeRL(base, SETTINGS, tmp_path / "rl")
    rl.restore(0, {})
    tied = [r for r in _rollouts(1) if r.parent_id == "p2"]  # both -0.4: no diff, no diff
    row = rl.update(1, tied)
    assert row["groups"] == 1 and row["flat_groups"] == 1
    assert row["mean_abs_advantage"] == 0.0 and row["delta_norm"] == 0.0
    ckpt = latest_checkpoint(tmp_path / "rl")
    assert ckpt is not None
    base_sd = load_policy(base).model.state_dict()
    assert all(torch.equal(t, base_sd[k]) for k, t in load_policy(ckpt).model.state_dict().items())


def test_per_step_format_counts_each_step() -> None:
    from methods.thetaevolve.ttrl_transfer import per_step_format

    cands = [{"step": 1, "edit": "none", "format_credit": 0.2},
             {"step": 1, "edit": "diff", "format_credit": 0.0},
             {"step": 2, "edit": "rewrite", "format_credit": None}]
    out = per_step_format(cands, 3)
    assert out == {"responses_per_step": [2, 1, 0], "valid_diffs_per_step": [1, 0, 0],
                   "rewrites_per_step": [0, 1, 0], "format_credit_per_step": [0.1, 0.0, None]}


def test_a_restart_redoes_the_lost_update_exactly(base: Path, tmp_path: Path) -> None:
    whole = TestTimeRL(base, SETTINGS, tmp_path / "whole")
    whole.restore(0, {})
    whole.update(1, _rollouts(1))
    whole.update(2, _rollouts(2))

    broken = TestTimeRL(base, SETTINGS, tmp_path / "broken")
    broken.restore(0, {})
    broken.update(1, _rollouts(1))
    # the process died after step 2's candidates were journaled, before its update
    again = TestTimeRL(base, SETTINGS, tmp_path / "broken")
    rows = again.restore(2, {1: _rollouts(1), 2: _rollouts(2)})
    assert [r["step"] for r in rows] == [2]  # step 1 came from its checkpoint
    final_whole = latest_checkpoint(tmp_path / "whole")
    final_broken = latest_checkpoint(tmp_path / "broken")
    assert final_whole is not None and final_broken is not None
    assert _weights(final_whole) == _weights(final_broken)


def test_thetaevolve_with_rl_samples_from_and_trains_its_own_weights(base: Path,
                                                                       tmp_path: Path) -> None:
    task = Task(dataset=[Sample(id="toy", input="Make ITERATIONS large.",
                                metadata={"initial_program": PROGRAM})],
                setup=use_tools(fake_evaluator()),
                solver=thetaevolve(steps=2, parents_per_step=1, responses_per_parent=3,
                                   num_islands=1, max_tokens=12, rl=True, rl_trainable="all",
                                   rl_lr=1e-3, evaluator_tool="fake_evaluator",
                                   checkpoint_dir=str(tmp_path / "ckpt")),
                scorer=match())
    log = inspect_eval(task, model="whitebox/tiny", model_args={"model_path": str(base)},
                       display="none", log_dir=str(tmp_path / "logs"))[0]
    assert log.status == "success", log.error
    sample = log.samples[0]  # type: ignore[index]
    assert not [e for e in sample.events if e.event == "model"]  # the learner generated
    summary = sample.store[STORE_SUMMARY]
    assert summary["candidates"] == 6 and summary["tokens_used"] > 0
    rl = summary["rl"]
    assert [u["step"] for u in rl["updates"]] == [1, 2]
    assert all(u["responses"] == 3 and u["groups"] == 1 for u in rl["updates"])
    ckpt = Path(rl["checkpoint"])
    assert ckpt.name == "ckpt-000002" and ckpt.parent.parent == Path(summary["checkpoint"])
    load_policy(ckpt)
    journal = Path(summary["checkpoint"]) / "journal.jsonl"
    kinds = [json.loads(x)["kind"] for x in journal.read_text().splitlines()]
    assert kinds.count("rl_update") == 2


def test_a_model_without_trainable_weights_is_refused() -> None:
    from methods.thetaevolve.ttrl import base_folder

    with pytest.raises(ValueError, match="whitebox/"):
        base_folder(object())
    with pytest.raises(ValueError, match="rl_algo"):
        TestTimeRL(Path("."), RLSettings(algo="ppo"), Path("/tmp/unused-ttrl"))
