"""Pretraining and both GRPO trainers on a small toy: each improves the verifiable reward;
same seed, same numbers; a killed run resumes to the uninterrupted result; the cache and
the curves summary; bad options are clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from environments.udm import constraint_reward, make_world, sample_corpus
from methods.udm.curves import load_runs, summarise
from methods.udm.train import RESULT_FILE, STATE_FILE, UDMConfig, run

WORLD = make_world(3, vocab=4, length=5, n_constraints=4)
INPUTS: dict[str, Any] = {
    "vocab": WORLD.vocab, "length": WORLD.length,
    "corpus": sample_corpus(WORLD, 512, 4), "constraints": [dict(c) for c in WORLD.constraints],
}
TOY: dict[str, Any] = {"hidden": 64, "depth": 2, "pretrain_steps": 300, "rl_steps": 40,
                       "group": 32, "sample_steps": 5, "lr": 3e-3, "ckpt_every": 10,
                       "n_eval": 256, "n_probe": 64}


def _reward(samples: list[list[int]]) -> float:
    return sum(constraint_reward(WORLD.constraints, s) for s in samples) / len(samples)


def _strip(out: dict[str, Any]) -> dict[str, Any]:
    """A run's outputs without its timings."""
    curve = [{k: v for k, v in row.items() if k != "cpu_s"} for row in out["curve"]]
    return {"samples": out["samples"], "before": out["samples_before"], "curve": curve}


class _Killed(Exception):
    pass


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    cache = tmp_path_factory.mktemp("udm")
    return {algo: run(INPUTS, {**TOY, "algo": algo, "cache_dir": str(cache)}, 0)
            for algo in ("naive", "udm")} | {"_cache": {"path": str(cache)}}


@pytest.mark.parametrize("algo", ["naive", "udm"])
def test_each_trainer_improves_the_reward(runs: dict[str, dict[str, Any]], algo: str) -> None:
    out = runs[algo]
    before, after = _reward(out["samples_before"]), _reward(out["samples"])
    assert after > before + 0.05, (algo, before, after)
    curve = out["curve"]
    first = sum(r["reward"] for r in curve[:10]) / 10
    last = sum(r["reward"] for r in curve[-10:]) / 10
    assert last > first, (algo, first, last)
    assert len(curve) == TOY["rl_steps"] and "kl_ref" in curve[-1]


def test_both_algorithms_start_from_the_same_pretrained_model(
        runs: dict[str, dict[str, Any]]) -> None:
    assert runs["naive"]["samples_before"] == runs["udm"]["samples_before"]
    assert runs["naive"]["samples"] != runs["udm"]["samples"]


def test_same_seed_same_numbers_and_another_seed_differs(
        runs: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    again = run(INPUTS, {**TOY, "algo": "udm", "cache_dir": str(tmp_path)}, 0)
    assert _strip(again) == _strip(runs["udm"])
    other = run(INPUTS, {**TOY, "algo": "udm", "rl_steps": 2, "cache_dir": str(tmp_path)}, 1)
    assert other["samples_before"] != runs["udm"]["samples_before"]


def test_a_killed_run_resumes_to_the_uninterrupted_result(
        runs: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    options = {**TOY, "algo": "naive", "cache_dir": str(tmp_path)}

    def kill_at_27(step: int) -> None:
        if step == 27:
            raise _Killed

    with pytest.raises(_Killed):
        run(INPUTS, options, 0, on_step=kill_at_27)
    states = list(tmp_path.glob(f"runs/*/{STATE_FILE}"))
    assert len(states) == 1 and not list(tmp_path.glob(f"runs/*/{RESULT_FILE}"))
    done: list[int] = []
    resumed = run(INPUTS, options, 0, on_step=done.append)
    assert done == list(range(21, TOY["rl_steps"] + 1))  # from the step-20 checkpoint
    assert _strip(resumed) == _strip(runs["naive"])
    assert not states[0].exists()
    # a finished run comes back from the cache without training
    cached: list[int] = []
    assert _strip(run(INPUTS, options, 0, on_step=cached.append)) == _strip(resumed)
    assert cached == []


def test_curves_summary_pairs_the_algorithms(runs: dict[str, dict[str, Any]]) -> None:
    cache = Path(runs["_cache"]["path"])
    found = load_runs(cache, {k: v for k, v in TOY.items()})
    assert [(r["algo"], r["seed"]) for r in found] == [("naive", 0), ("udm", 0)]
    summary = summarise(found)
    assert set(summary["algos"]) == {"naive", "udm"}
    naive = summary["algos"]["naive"]
    assert len(naive["reward_mean_per_step"]) == TOY["rl_steps"]
    assert naive["reward_mean_per_step"] == [r["reward"] for r in runs["naive"]["curve"]]
    diff = summary["paired_udm_minus_naive"]["reward_last"]
    assert diff["n"] == 1
    expected = (summary["algos"]["udm"]["per_seed"]["0"]["reward_last"]
                - naive["per_seed"]["0"]["reward_last"])
    assert diff["mean"] == pytest.approx(expected)
    json.dumps(summary)
    assert load_runs(cache, {"rl_steps": "999"}) == []


def test_bad_options_and_inputs_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown UDM options"):
        UDMConfig.from_mapping({"learning_rate": 1})
    with pytest.raises(ValueError, match="algo"):
        UDMConfig.from_mapping({"algo": "ppo"})
    with pytest.raises(ValueError, match="group"):
        UDMConfig.from_mapping({"group": 1})
    bad = {**INPUTS, "constraints": [{"kind": "eq", "i": 0, "j": 9}]}
    with pytest.raises(ValueError, match="positions"):
        run(bad, {**TOY, "cache_dir": str(tmp_path)}, 0)
    with pytest.raises(ValueError, match="lack"):
        run({"vocab": 4}, {**TOY, "cache_dir": str(tmp_path)}, 0)
    assert not list(tmp_path.iterdir())
