"""The RL trainer on a tiny random byte Llama: it learns a reward it can reach, it is
deterministic, staleness uses rollouts of the stated old policy, and a run killed with
SIGKILL resumes to the same final weights as one never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from methods.recipes import tinylm  # noqa: E402
from methods.rl.rollouts import Item, SampledGroups  # noqa: E402
from methods.rl.trainer import STATE_FILE, RLConfig, latest_checkpoint, train  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
REWARD_MODULE = '''
def low_bytes(items, responses):
    """The fraction of a response's bytes below 0x40 (digits, space, punctuation)."""
    return [sum(b < 0x40 for b in r.encode()) / max(len(r.encode()), 1) for r in responses]
'''
ITEMS = [{"id": f"p{i}", "prompt": f"say {i}:", "target": ""} for i in range(6)]


def low_bytes(items: Any, responses: list[str]) -> list[float]:
    return [sum(b < 0x40 for b in r.encode()) / max(len(r.encode()), 1) for r in responses]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cfg = tinylm.TinyConfig(d_model=32, n_layers=2, n_heads=4, n_kv_heads=4, ffn=64,
                            max_positions=128)
    out = tmp_path_factory.mktemp("tiny")
    tinylm.save(tinylm.export(tinylm.build_model(cfg, 0), cfg), cfg, out)
    return out


def _cfg(**kw: Any) -> RLConfig:
    args: dict[str, Any] = {"steps": 12, "prompts_per_step": 3, "k": 4, "max_new_tokens": 5,
                            "lr": 3e-3, "ckpt_every": 4, "seed": 0, "kl_coef": 0.01}
    return RLConfig(**{**args, **kw})


def _source(cfg: RLConfig) -> SampledGroups:
    return SampledGroups([Item(**it) for it in ITEMS], low_bytes, cfg.prompts_per_step,
                         cfg.k, cfg.max_new_tokens, cfg.seed)


def _weights(folder: Path) -> bytes:
    return (folder / "model.safetensors").read_bytes()


def _log(folder: Path) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (folder / "train_log.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in ("wall_s", "cpu_s")} for r in rows]


@pytest.mark.parametrize("algo", ["grpo", "pmd-mean"])
@pytest.mark.slow
def test_learns_and_is_deterministic(base: Path, tmp_path: Path, algo: str) -> None:
    cfg = _cfg(algo=algo, steps=40, ckpt_every=40)
    a = train(cfg, base, tmp_path / "a", _source(cfg))
    b = train(cfg, base, tmp_path / "b", _source(cfg))
    assert _weights(a) == _weights(b)
    assert _log(tmp_path / "a") == _log(tmp_path / "b")
    assert _weights(a) != _weights(base)
    rows = _log(tmp_path / "a")
    first = sum(r["reward"] for r in rows[:10]) / 10
    last = sum(r["reward"] for r in rows[-10:]) / 10
    assert last > first + 0.1, (first, last)  # the reward is learnable in 40 steps
    assert all(r["tokens"] > 0 and r["kl"] >= 0 for r in rows)
    # the product is a plain model folder the white-box backend loads and decodes with
    from harness.models.whitebox import WhiteBoxLM

    lm = WhiteBoxLM.load(a)
    assert lm.generate("say 1:", max_new_tokens=3).output_tokens >= 1


def test_staleness_trains_on_rollouts_of_the_policy_s_steps_back(base: Path,
                                                                 tmp_path: Path) -> None:
    cfg = _cfg(staleness=2, steps=6, ckpt_every=6)
    train(cfg, base, tmp_path / "s2", _source(cfg))
    rows = _log(tmp_path / "s2")
    assert [r["batch_policy_step"] for r in rows] == [0, 0, 0, 1, 2, 3]
    # fresh batches are made only while some later step will use them
    assert [r["reward_fresh"] is not None for r in rows] == [True] * 4 + [False] * 2
    # on-policy, the ratio is exactly 1 when the loss is taken; stale, it is not
    on = _cfg(steps=3, ckpt_every=3)
    train(on, base, tmp_path / "s0", _source(on))
    assert all(r["log_ratio"] == 0.0 for r in _log(tmp_path / "s0"))
    assert all(r["log_ratio"] > 0 for r in rows[1:])


@pytest.mark.slow
def test_kill_and_resume_gives_the_same_weights(base: Path, tmp_path: Path) -> None:
    (tmp_path / "rewardmod.py").write_text(REWARD_MODULE)
    config = {"algo": "grpo", "steps": 16, "prompts_per_step": 3, "k": 4,
              "max_new_tokens": 5, "lr": 3e-3, "ckpt_every": 4, "staleness": 2,
              "kl_coef": 0.01, "seed": 3}

    def spec(run: Path) -> Path:
        path = run.with_suffix(".json")
        path.write_text(json.dumps({"base": str(base), "run_dir": str(run), "config": config,
                                    "reward": "rewardmod:low_bytes", "items": ITEMS}))
        return path

    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}",
           "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "methods.rl.trainer"]
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    subprocess.run([*cmd, str(spec(whole))], env=env, check=True, cwd=REPO,
                   capture_output=True, timeout=600)
    proc = subprocess.Popen([*cmd, str(spec(broken))], env=env, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ckpt = latest_checkpoint(broken) if broken.exists() else None
        if ckpt is not None and ckpt.name >= "ckpt-000008":
            break
        if proc.poll() is not None:
            pytest.fail("the run finished before it could be killed")
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = latest_checkpoint(broken)
    assert killed_at is not None and killed_at.name < "ckpt-000016", "killed too late"
    rows_before = len((broken / "train_log.jsonl").read_text().splitlines())
    subprocess.run([*cmd, str(spec(broken))], env=env, check=True, cwd=REPO,
                   capture_output=True, timeout=600)
    final_whole, final_broken = latest_checkpoint(whole), latest_checkpoint(broken)
    assert final_whole is not None and final_broken is not None
    assert final_whole.name == final_broken.name == "ckpt-000016"
    assert _weights(final_whole) == _weights(final_broken)
    assert _log(whole) == _log(broken)  # the log was cut back to the checkpoint and redone
    assert rows_before >= 8
    assert (final_broken / STATE_FILE).is_file()


def test_bad_config_is_refused() -> None:
    with pytest.raises(ValueError, match="algo"):
        RLConfig(algo="ppo")
    with pytest.raises(ValueError, match="k must be"):
        RLConfig(k=1)
    with pytest.raises(ValueError, match="trainable"):
        RLConfig(trainable="lora")


def test_recorded_rollouts_train_like_sampled_ones(base: Path, tmp_path: Path) -> None:
    """Rollouts made elsewhere (ThetaEvolve's journal shape: prompt, response, reward) are
    grouped, tokenised, given pi_old by the policy, and trained on."""
    from dataclasses import dataclass

    from methods.rl.rollouts import RecordedRollouts

    @dataclass
    class Rec:
        prompt: list[dict[str, str]]
        response: str
        reward: float
        parent: str

    recs = [Rec([{"role": "user", "content": f"q{p}"}], text, float(text.isdigit()), f"p{p}")
            for p in range(4) for text in ("12", "ab", "7", "xyz!")]
    recs.append(Rec([{"role": "user", "content": "lonely"}], "1", 1.0, "solo"))
    source = RecordedRollouts(recs, lambda r: r.parent, groups_per_batch=2)
    assert len(source.groups) == 4 and len(source) == 2  # the lone rollout is dropped
    cfg = _cfg(steps=4, ckpt_every=4)
    final = train(cfg, base, tmp_path / "rec", source)
    rows = _log(tmp_path / "rec")
    assert [r["reward"] for r in rows] == [0.5] * 4
    assert _weights(final) != _weights(base)
    with pytest.raises(ValueError, match="two or more"):
        RecordedRollouts(recs[-1:], lambda r: r.parent, 1)
