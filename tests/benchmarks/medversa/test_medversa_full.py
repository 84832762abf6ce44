"""Full-protocol pieces: the train split in the task, the runner's forward cache, batched
sampling, multiple choice, and the per-record statistics of benchmarks.medversa.full."""

from __future__ import annotations

import argparse
from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks.medversa import full
from benchmarks.medversa.medversa import make_split, medversa, train_records
from benchmarks.medversa.protocol import run_whitebox_unit
from benchmarks.medversa.whitebox import WhiteBoxRunner
from environments.medversa import load_dataset
from environments.medversa.split import texts
from harness.plugins.editor import Edit, make_editor


class _Tok:
    eos_token_id = 1
    pad_token_id = None

    def __call__(self, text: str, add_special_tokens: bool = True) -> Any:
        return SimpleNamespace(input_ids=[2 + (b % 62) for b in text.encode()])

    def decode(self, ids: Any, skip_special_tokens: bool = True) -> str:
        return " ".join(chr(97 + (int(i) % 26)) * 2 for i in ids)


@pytest.fixture(scope="module")
def model() -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    m = LlamaForCausalLM(LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048))
    m.eval()
    return m


def test_task_scores_only_records_outside_the_train_split() -> None:
    split = make_split("sample")
    task = medversa(editor="none", data="sample")
    meta: Any = task.metadata
    assert meta["n_eval"] == len(split.eval) == len(task.dataset)
    assert meta["n_train"] == len(split.train) > 0
    seen = set().union(*(texts(c) for c in split.train))
    for sample in task.dataset:
        case: Any = sample.metadata
        assert case["cases"][0]["prompt"].strip().lower() not in seen
    rows = train_records(split.train)
    assert all(len(r) == 5 for r in rows) and rows[0][3] == split.train[0].target_new


def test_forward_cache_gives_the_same_scores_with_fewer_forwards(model: Any) -> None:
    cases = load_dataset("sample")[:4]
    plain, cached = WhiteBoxRunner(model, _Tok()), WhiteBoxRunner(model, _Tok(), cache=True)
    scores = {}
    for label, runner in (("plain", plain), ("cached", cached)):
        scores[label] = [run_whitebox_unit(runner, make_editor(name), cases, "batch").scores
                         for name in ("none", "ike", "none", "ike")]
    assert scores["plain"] == scores["cached"]
    assert cached.forwards < plain.forwards


def test_forward_cache_misses_after_an_in_place_weight_change(model: Any) -> None:
    import torch

    runner = WhiteBoxRunner(model, _Tok(), cache=True)
    probe = runner.probe("What is X?", "Foo")
    first = runner.argmax([probe])
    n = runner.forwards
    runner.argmax([probe])
    assert runner.forwards == n  # a hit
    weight = model.lm_head.weight
    saved = weight.detach().clone()
    try:
        with torch.no_grad():
            weight.mul_(-1.0)
        flipped = runner.argmax([probe])
        assert runner.forwards == n + 1 and flipped != first
    finally:
        with torch.no_grad():
            weight.copy_(saved)


def test_batched_greedy_sampling_matches_one_row_at_a_time(model: Any) -> None:
    runner = WhiteBoxRunner(model, _Tok())
    prompts = ["What is X?", "Which short question is a longer one here?"]
    batched = runner.sample_batch(prompts, None, 6, top_k=1, seed=0)
    alone = [runner.continuation(p, None, 6, top_k=1, seed=0) for p in prompts]
    assert batched == alone


def test_choose_picks_the_best_option_token(model: Any) -> None:
    import torch

    runner = WhiteBoxRunner(model, _Tok())
    prompt = "Question: X?\nA. a\nB. b\nAnswer:"
    choices = [10, 20, 30]
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([_Tok()(prompt).input_ids])).logits[0, -1]
    assert runner.choose([prompt], choices) == [int(logits[choices].argmax())]
    ike = make_editor("ike")
    ike.apply([Edit("What is Y?", "Bar")])
    assert len(runner.choose([prompt], choices, ike)) == 1


def test_full_runner_pieces_on_the_tiny_model(model: Any) -> None:
    cases = load_dataset("sample")[:12]
    runner = WhiteBoxRunner(model, _Tok(), cache=True)
    rows = []
    for name in ("none", "ike"):
        rows += full.protocol_rows(runner, name, make_editor(name), cases, [4], seed=0, n=8)
    assert len(rows) == 2 * (8 + 8)
    summary = full.summarize(rows, seed=0)
    none_single = next(s for s in summary if s["editor"] == "none" and s["protocol"] == "single")
    assert none_single["locality"]["mean"] == 100.0 and none_single["n"] == 8
    assert none_single["locality"]["lo"] == 100.0
    ike_b4 = next(s for s in summary if s["editor"] == "ike" and s["batch_size"] == 4)
    assert ike_b4["n_units"] == 2
    assert full.shared_cells(rows, "ike", "none") == [("single", 1), ("batch", 4)]
    single_only = [r for r in rows if r["editor"] == "none" or r["protocol"] == "single"]
    assert full.shared_cells(single_only, "ike", "none") == [("single", 1)]
    diff = full.paired(rows, "ike", "none", "batch", 4, "locality", seed=0)
    assert diff["hi"] <= 0.0 or diff["mean"] <= 0.0  # context can only move the argmax
    subjects = full.per_subject(rows, seed=0)
    assert {s["subject"] for s in subjects} == {r["subject"] for r in rows}
    hops = full.portability_rows(runner, "ike", make_editor("ike"), cases[:6])
    assert hops and all(0.0 <= h["portability"] <= 1.0 for h in hops)
    args = argparse.Namespace(retention_edits=3, mcq_n=5, seed=0, fluency_n=3, fluency_tokens=4,
                              fluency_batch=2, fluency_editors=["none", "ike"])
    editors = {"none": make_editor("none"), "ike": make_editor("ike")}
    ret = full.retention(runner, editors, cases, cases[:3], args)
    assert [r["editor"] for r in ret] == ["none", "ike"] and ret[0]["change"]["mean"] == 0.0
    flu = full.fluency(runner, editors, cases, args)
    assert [f["n"] for f in flu] == [3, 3] and all(f["mean"] > 0 for f in flu)
    text = full.markdown({"model": "tiny", "dtype": "float32", "data": "sample", "seed": 0,
                          "split": {}, "summary": summary, "per_subject": subjects,
                          "retention": ret, "fluency": flu, "timings": {}})
    assert "| none | single | 1 | 8 |" in text

