"""The bpb probe: fixed held-out windows, exact log-prob scoring, a clear error for models
that give no log-probabilities; and the induction task's items."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.probes.bpb import bpb
from benchmarks.probes.induction import induction
from harness.models.logprobs import LogprobsUnavailable, causal_lm_of


def test_windows_are_fixed_and_sized() -> None:
    task = bpb(n=8, corpus="stdlib")
    again = bpb(n=8, corpus="stdlib")
    assert [s.input for s in task.dataset] == [s.input for s in again.dataset]
    assert all(253 <= (s.metadata or {})["bytes"] <= 256 for s in task.dataset)
    assert len({s.id for s in task.dataset}) == 8
    assert (task.metadata or {})["corpus"]["corpus"] == "stdlib"


def test_models_without_logprobs_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(LogprobsUnavailable, match="whitebox/NAME -M model_path=DIR"):
        causal_lm_of(SimpleNamespace(model_name="gpt-x"))
    from inspect_ai import eval as inspect_eval

    log = inspect_eval(bpb(n=1, corpus="stdlib"), model="mockllm/model", display="none",
                       log_dir=str(tmp_path))[0]
    assert log.status == "error" and log.error is not None
    assert "gives no prompt log-probabilities" in log.error.message


def test_text_bits_is_the_sum_of_next_token_losses() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from harness.models.logprobs import text_bits
    from methods.recipes import tinylm

    cfg = tinylm.TinyConfig(d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, ffn=32)
    model = tinylm.export(tinylm.build_model(cfg, 0), cfg)
    class Bytes:
        bos_token_id, eos_token_id = tinylm.BOS, tinylm.EOS

        def __call__(self, text: str, add_special_tokens: bool = False) -> SimpleNamespace:
            return SimpleNamespace(input_ids=list(text.encode()))

    bits, n = text_bits(model, Bytes(), "abc")
    ids = [tinylm.BOS, *b"abc"]
    expected = 0.0
    with torch.no_grad():  # one prefix at a time: no batching or masking shortcuts
        for i in range(1, len(ids)):
            logits = model(input_ids=torch.tensor([ids[:i]])).logits[0, -1]
            expected -= float(torch.log_softmax(logits, -1)[ids[i]]) / math.log(2)
    assert n == 3 and bits == pytest.approx(expected, rel=1e-5)
    assert causal_lm_of(SimpleNamespace(model=model, tokenizer=Bytes()))[0] is model


def test_induction_items_build() -> None:
    task = induction(n=4)
    assert len(task.dataset) == 4
    for sample in task.dataset:
        letters, cue = str(sample.input).split("\n")
        assert letters.startswith(cue) and letters[len(cue):].startswith(str(sample.target))
