"""MedVersa task: units, record_to_sample, white-box runner, and both scoring paths end to end."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.medversa.medversa import medversa, record_to_sample, training_summary
from benchmarks.medversa.policies import UNKNOWN, read_answer
from benchmarks.medversa.protocol import make_units, run_whitebox_unit
from benchmarks.medversa.whitebox import WhiteBoxRunner
from environments.medversa import load_dataset
from harness.plugins.editor import make_editor

REPO = Path(__file__).resolve().parents[3]
REAL_TEST = (REPO / "../shared/reference-data/medversa/test.json").resolve()


def test_units_per_protocol() -> None:
    cases = load_dataset("sample")
    n = len(cases)
    single = make_units(cases, "single", 10, seed=0)
    assert len(single) == n and all(len(u) == 1 for u in single)
    batch = make_units(cases, "batch", 10, seed=0)
    assert [len(u) for u in batch] == [10] * (n // 10) + ([n % 10] if n % 10 else [])
    seq = make_units(cases, "sequential", 10, seed=0)
    assert [len(u) for u in seq] == [10] * (n // 10)
    assert [c.id for u in batch for c in u] == [c.id for u in single for c in u]
    assert make_units(cases, "single", 1, seed=1)[0] != single[0] or n < 2
    with pytest.raises(ValueError, match="sequential"):
        make_units(cases, "sequential", 100, seed=0)


@pytest.mark.skipif(not REAL_TEST.is_file(), reason="reference MedVersa test.json not present")
def test_record_to_sample_on_a_real_record() -> None:
    case = load_dataset(REAL_TEST)[0]
    sample = record_to_sample([case], "single", 0)
    assert sample.id == "15038" and sample.target == "Opiates"
    assert sample.input == "What substance in blood is detected using the Cavett test?"
    meta: Any = sample.metadata
    gun = "What instrument is used to examine the bore of a gun?"
    assert meta["cases"][0]["locality"][0][1] == gun
    batch = record_to_sample([case, case], "batch", 3)
    assert batch.id == "batch-0003" and len(batch.metadata["cases"]) == 2  # type: ignore[index]


def test_unknown_editor_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="editor"):
        medversa(editor="no-such-editor")


# --- white-box runner on a tiny random Llama ---------------------------------------------

class _Tok:
    eos_token_id = 1
    pad_token_id = None

    def __call__(self, text: str, add_special_tokens: bool = True) -> Any:
        return SimpleNamespace(input_ids=[2 + (b % 62) for b in text.encode()])

    def decode(self, ids: Any, skip_special_tokens: bool = True) -> str:
        return " ".join(chr(97 + (int(i) % 26)) * 2 for i in ids)


@pytest.fixture(scope="module")
def tiny() -> WhiteBoxRunner:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048))
    model.eval()
    return WhiteBoxRunner(model, _Tok())


def test_cached_context_prefix_matches_a_full_forward(tiny: WhiteBoxRunner) -> None:
    import torch

    ike = make_editor("ike")
    cases = load_dataset("sample")[:3]
    from harness.plugins.editor import Edit

    ike.apply([Edit(c.prompt, c.target_new) for c in cases])
    probes = [tiny.probe(c.rephrase_prompt, c.target_new) for c in cases]
    got = tiny.argmax(probes, ike)
    ctx = tiny.tokenize(ike.context("x"))
    for probe, pred in zip(probes, got, strict=True):
        ids = torch.tensor([ctx + probe.forced.inputs])
        with torch.inference_mode():
            full = tiny.model(input_ids=ids).logits[0, len(ctx):].argmax(-1).tolist()
        assert pred == full


def test_unedited_unit_keeps_locality_and_ike_changes_predictions(tiny: WhiteBoxRunner) -> None:
    cases = load_dataset("sample")[:4]
    none = run_whitebox_unit(tiny, make_editor("none"), cases, "batch")
    assert all(s["locality"] == 1.0 for s in none.scores)
    assert all(s["false_retrieval"] == 0.0 for s in none.scores)
    ike = run_whitebox_unit(tiny, make_editor("ike"), cases, "batch", fluency_tokens=8, seed=1)
    assert all(s["false_retrieval"] == 1.0 for s in ike.scores)
    assert all(s["retrieval_precision"] == pytest.approx(0.25) for s in ike.scores)
    assert min(s["locality"] for s in ike.scores) < 1.0  # 4 facts in context move some argmax
    assert ike.fluency is not None and ike.fluency > 0


# --- black-box path with the scripted reader -------------------------------------------------

def test_reader_policy() -> None:
    msg = "Updated facts (x):\nWhat is X? Foo\nWhat is Y? Bar\n\nQuestion: What is X?"
    assert read_answer(msg) == "Foo"
    assert read_answer(msg.replace("Question: What is X?", "Question: Z?")) == "Bar"
    assert read_answer("Question: What is X?") == UNKNOWN


def _metrics(tmp_path: Path, **args: Any) -> dict[str, float]:
    log = inspect_eval(medversa(**args), model="scripted/medversa-reader",
                       log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    assert log.results is not None
    return {k: v.value for k, v in log.results.scores[0].metrics.items()}


@pytest.mark.slow
def test_black_box_none_and_ike_on_the_reader(tmp_path: Path) -> None:
    none = _metrics(tmp_path, editor="none", n=12)
    assert none["efficacy"] == 0.0 and none["locality"] == 100.0
    single = _metrics(tmp_path, editor="ike", n=12)
    assert single["efficacy"] == 100.0
    batch = _metrics(tmp_path, editor="ike", protocol="batch", batch_size=6, n=12)
    assert batch["efficacy"] == 100.0  # verbatim questions are found among all facts
    assert batch["locality"] == 0.0  # the reader is distracted by any fact in context
    assert batch["false_retrieval"] == 100.0


@pytest.mark.slow
def test_black_box_retrieval_keeps_locality_in_batch(tmp_path: Path) -> None:
    ike = _metrics(tmp_path, editor="ike", protocol="batch", batch_size=20, n=40)
    retr = _metrics(tmp_path, editor="retrieval", protocol="batch", batch_size=20, n=40)
    assert retr["locality"] >= ike["locality"] + 50
    assert retr["generality"] > ike["generality"]
    assert retr["locality"] == pytest.approx(100 - retr["false_retrieval"])


@pytest.mark.slow
def test_white_box_end_to_end_on_the_embedded_model(tmp_path: Path) -> None:
    logs = inspect_eval([medversa(editor=e, n=3, fluency=False) for e in ("none", "ike")],
                        model="whitebox/smollm2-135m", log_dir=str(tmp_path), display="none")
    got = {}
    for log in logs:
        assert log.status == "success", log.error
        assert log.results is not None
        got[log.eval.task_args["editor"]] = {k: v.value for k, v in
                                             log.results.scores[0].metrics.items()}
    assert got["none"]["locality"] == 100.0
    assert got["ike"]["efficacy"] > got["none"]["efficacy"]




def test_a_trained_editor_names_its_weights_in_the_sample() -> None:
    class Trained:
        train_report = {"key": "k1", "steps": 30, "records": 197, "cached": True,
                        "weights_digest": "abcd", "platform": "cpu; avx2; torch 2",
                        "losses": [{"rel": 1.0}], "config": {"steps": 30}}

    summary = training_summary(Trained())  # type: ignore[arg-type]
    assert summary == {"key": "k1", "steps": 30, "records": 197, "cached": True,
                       "weights_digest": "abcd", "platform": "cpu; avx2; torch 2"}
    assert training_summary(make_editor("none")) is None
