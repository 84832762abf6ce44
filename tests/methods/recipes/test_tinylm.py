"""The tiny byte-level LM: sharing ties, export equal to training, exact counts, byte
tokenizer, and bit-identical weights from one seed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from methods.recipes import tinylm  # noqa: E402
from methods.recipes.tinylm import SHARING, TinyConfig  # noqa: E402

TEXT = "def f(x):\n    return x + 1  # é\n" * 200


def _cfg(sharing: str = "qkv", kv: int = 2, **kw: int) -> TinyConfig:
    base = dict(d_model=32, n_layers=2, n_heads=4, n_kv_heads=kv, ffn=48, seq_len=32,
                batch=2, steps=5, warmup=2)
    base.update(kw)
    return TinyConfig(sharing=sharing, **base)  # type: ignore[arg-type]


def _repeat(weight: Any, cfg: TinyConfig) -> Any:
    heads = weight.reshape(cfg.n_kv_heads, cfg.head_dim, cfg.d_model)
    return heads.repeat_interleave(cfg.group, dim=0).reshape(-1, cfg.d_model)


@pytest.mark.parametrize("sharing", SHARING)
def test_export_equals_training_model_and_stores_the_ties(sharing: str) -> None:
    cfg = _cfg(sharing)
    model = tinylm.build_model(cfg, seed=0)
    plain = tinylm.export(model, cfg)
    x = torch.tensor([[tinylm.BOS, *b"hello world"]])
    model.eval()
    with torch.no_grad():
        assert torch.equal(model(input_ids=x).logits, plain(input_ids=x).logits)
    attn = plain.model.layers[1].self_attn
    q, k, v = attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight
    assert torch.equal(v, k) == (sharing in ("q-kv", "q=k=v"))
    assert torch.equal(q, _repeat(k, cfg)) == (sharing in ("qk-v", "q=k=v"))
    unique = {p.data_ptr(): p.numel() for p in model.parameters()}
    assert sum(unique.values()) == tinylm.trained_parameters(cfg)


def test_flops_are_the_matrix_products() -> None:
    cfg = _cfg("qkv", kv=4, n_layers=1, batch=1)
    t, d = cfg.seq_len, cfg.d_model
    per_token = 2 * d * (3 * d) + 2 * d * d + 2 * 3 * d * cfg.ffn + 2 * 2 * t * d
    assert tinylm.step_flops(cfg) == 3 * t * (per_token + 2 * d * tinylm.VOCAB)
    counts = {s: tinylm.step_flops(_cfg(s)) for s in SHARING}
    assert counts["qkv"] > counts["q-kv"] > counts["q=k=v"]
    assert counts["qkv"] > counts["qk-v"] > counts["q=k=v"]


def test_same_seed_same_bits_and_other_seed_other_bits() -> None:
    cfg = _cfg("q-kv", steps=20)
    losses: list[list[float]] = [[], []]
    a = tinylm.train(cfg, TEXT, 7, lambda **row: losses[0].append(row["loss"]))
    b = tinylm.train(cfg, TEXT, 7, lambda **row: losses[1].append(row["loss"]))
    c = tinylm.train(cfg, TEXT, 8)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert losses[0] == losses[1] and len(losses[0]) == 20
    assert losses[0][-1] < losses[0][0]
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)


def test_saved_folder_is_a_plain_llama_with_a_byte_tokenizer(tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cfg = _cfg("q=k=v", kv=1)
    plain = tinylm.export(tinylm.build_model(cfg, 0), cfg)
    tinylm.save(plain, cfg, tmp_path)
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(tmp_path, local_files_only=True)
    assert type(loaded).__name__ == "LlamaForCausalLM"
    assert loaded.config.qkv_sharing == "q=k=v" and loaded.config.num_key_value_heads == 1
    text = "naïve ✓ code\n\tpass"
    ids = tok(text, add_special_tokens=False).input_ids
    assert ids == list(text.encode("utf-8")) and tok.decode(ids) == text
    assert (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id) == (256, 257, 258)
    chat = tok.apply_chat_template([{"role": "user", "content": "abc\nab"}], tokenize=False,
                                   add_generation_prompt=True)
    assert chat == "abc\nab"
    x = torch.tensor([[tinylm.BOS, *ids]])
    with torch.no_grad():
        assert torch.equal(loaded(input_ids=x).logits, plain(input_ids=x).logits)
        out = loaded.generate(x, max_new_tokens=4, do_sample=False, pad_token_id=258)
    assert out.shape[1] == x.shape[1] + 4
