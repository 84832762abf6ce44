"""The brain-compression method task on a tiny random Llama with a word-level tokenizer:
stable ids, and a compressed model that must move away from the uncompressed one (which
scores CKA 1 against itself, by definition)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

import methods.brain_compression.compress  # noqa: F401  (registers compressed, full)
from benchmarks.paper_tasks.brain_compression import brain_compression as task_module
from environments.brain_compression import minimal_pairs

needs_torch = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                                 reason="needs the cpu extra (torch, transformers)")


def test_ids_and_cells() -> None:
    task = task_module.brain_compression(n_seeds=2, schemes="rtn4,prune0.5")
    assert [s.id for s in task.dataset] == ["seed=0,scheme=rtn4", "seed=0,scheme=prune0.5",
                                            "seed=1,scheme=rtn4", "seed=1,scheme=prune0.5"]
    assert (task.dataset[1].metadata or {})["cell"]["config"] == {"scheme": "prune0.5"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = sorted({w for p in minimal_pairs(64, 0) for s in (p.good, p.bad)
                    for w in s.replace(".", " . ").split()})
    vocab = {"[UNK]": 0, "<eos>": 1, **{w: i + 2 for i, w in enumerate(words)}}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    folder = tmp_path_factory.mktemp("tiny_lm")
    PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]",
                            eos_token="<eos>").save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64, tie_word_embeddings=True)
    LlamaForCausalLM(config).save_pretrained(folder)
    return str(folder)


@needs_torch
@pytest.mark.slow
def test_compressed_cell_differs_from_the_uncompressed_model(tiny: str, tmp_path: Path) -> None:
    """Fails if the method is replaced by its baseline: CKA would be exactly 1 and the
    paired differences 0."""
    task = task_module.brain_compression(n_seeds=1, schemes="prune0.7", n_pairs=4,
                                         n_windows=6, window=8, layers="1,2", model=tiny)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    values: dict[str, float] = log.samples[0].scores["method_metrics"].value  # type: ignore[index,assignment]
    assert values["sparsity"] == pytest.approx(0.7, abs=0.01)
    assert values["baseline_cka"] == pytest.approx(1.0) and values["baseline_sparsity"] == 0
    assert values["cka"] < 0.999 and values["delta_cka"] < 0
    assert values["pair_agree"] < 1.0 or values["nll_increase"] != 0
    assert {"acc_agreement", "acc_anaphor", "acc_determiner", "acc_past_tense",
            "cka_l1", "cka_l2", "rsa"} <= set(values)
