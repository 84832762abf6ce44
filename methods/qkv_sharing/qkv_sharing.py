"""QKV projection sharing: separate Q, K, V vs K=V vs Q=K vs one projection, crossed with
MHA / GQA-4 / MQA, on the tiny byte-level LM (:mod:`methods.recipes.tinylm`).

The claim checked at small scale: sharing the key and value projection (K=V) halves the KV
cache at a small perplexity cost, and stacks with grouped/multi-query attention — 50% (K=V),
87.5% (GQA-4 + K=V) and 96.9% (MQA + K=V) less cache than MHA with separate projections at
16 heads — while sharing Q=K makes attention symmetric (``q_i . k_j = q_j . k_i`` up to
RoPE's relative rotation), which a directional task such as induction (attend to the token
*after* an earlier copy of the current one) should expose.

``attention``: ``mha`` = ``n_heads`` key/value heads; ``gqa4`` = 4 query heads per
key/value head (``n_heads / 4`` KV heads); ``mqa`` = 1 KV head. Every product has the
same ``d_model``, depth and MLP, so the parameter count falls with each saving.

``data``: ``corpus`` trains on the shipped corpus (the perplexity side of the claim).
The two synthetic levels test directionality, each a stream of repeated random letter
strings ``S\nS\n`` (:func:`methods.recipes.synthetic.induction_stream`) whose products are
scored by ``harness/induction`` (their bits per byte on the corpus mean nothing):

* ``copy``: every ``S`` has the induction probe's length (24), so the second copy is the
  letter 25 positions back — a fixed-offset (positional) copy. Under RoPE a Q=K head
  scores ``(W x_i) . R(i - j) (W x_j)``; for a content-independent component ``u`` of
  ``W x`` that is ``sum_p |u_p|^2 cos(theta_p (i - j))``, largest at offset 0, so a shared
  query/key projection cannot point a head at a fixed earlier offset rather than at the
  current token itself — the direction the copy needs.
* ``induction``: lengths uniform in 8..40, so only content matching (attend after the
  earlier copy of the current letter) predicts the copy. Not learnt at these sizes and
  budgets: separate projections stay near the unigram loss (3.30 nats) after 300 steps at
  the default size and reach 3.16 after 2,000 steps at 2 layers x 64 wide.

    harness recipes build qkv-sharing -o sharing=q-kv -o attention=gqa4 --seed 0
    harness study run methods/studies/qkv_sharing/study.yaml
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.corpus import CORPORA, DEFAULT_CORPUS, Corpus
from harness.plugins.recipe import TrainLog, recipe

__all__ = ["ATTENTION", "COPY_LENGTH", "DATA", "DEFAULTS", "SHARING", "kv_config", "n_kv_heads",
           "qkv_sharing"]

SHARING = ("qkv", "q-kv", "qk-v", "q=k=v")
ATTENTION = ("mha", "gqa4", "mqa")
DATA = ("corpus", "copy", "induction")
COPY_LENGTH = 24
"""``data=copy``'s string length: the induction probe's default ``length``."""
INDUCTION_BYTES = 1 << 20
"""Bytes of the induction training stream (random windows are drawn from it as from a
corpus): 1 MiB, far more distinct strings than any run's windows can exhaust."""
DEFAULTS: dict[str, Any] = {
    "sharing": "qkv", "attention": "mha", "steps": 200, "d_model": 128, "n_layers": 6,
    "n_heads": 16, "ffn": 352, "seq_len": 256, "batch": 8, "lr": 3e-3, "warmup": 20,
    "threads": 1, "corpus": DEFAULT_CORPUS, "data": "corpus",
}
"""About 1.2M parameters (MHA, separate projections); 0.45-0.75 s a step on one shared CPU
thread, so the default 200 steps take 1.5-2.5 minutes."""


def n_kv_heads(attention: str, n_heads: int) -> int:
    """Key/value heads of an ``attention`` kind with ``n_heads`` query heads."""
    if attention == "mha":
        return n_heads
    if attention == "gqa4":
        if n_heads % 4:
            raise ValueError("gqa4 needs n_heads divisible by 4")
        return n_heads // 4
    if attention == "mqa":
        return 1
    raise ValueError(f"attention must be one of {', '.join(ATTENTION)}")


def kv_config(options: dict[str, Any]) -> dict[str, Any]:
    """The architecture facts of a product (``config.json`` keys), without building it."""
    opts = {**DEFAULTS, **options}
    heads = int(opts["n_heads"])
    return {"num_hidden_layers": int(opts["n_layers"]), "num_attention_heads": heads,
            "num_key_value_heads": n_kv_heads(str(opts["attention"]), heads),
            "head_dim": int(opts["d_model"]) // heads, "hidden_size": int(opts["d_model"]),
            "qkv_sharing": str(opts["sharing"]), "torch_dtype": "float32"}


@recipe("qkv-sharing", extra="cpu", version="1", defaults=DEFAULTS,
        choices={"sharing": SHARING, "attention": ATTENTION,
                 "corpus": CORPORA, "data": DATA},
        summary="QKV projection sharing (qkv, q-kv, qk-v, q=k=v) x MHA/GQA-4/MQA, tiny byte LM")
def qkv_sharing(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
                log: TrainLog) -> None:
    """Train the tiny LM with the chosen sharing and attention; save it to ``out_dir``."""
    from methods.recipes import tinylm

    cfg = tinylm.TinyConfig(
        d_model=int(options["d_model"]), n_layers=int(options["n_layers"]),
        n_heads=int(options["n_heads"]),
        n_kv_heads=n_kv_heads(str(options["attention"]), int(options["n_heads"])),
        ffn=int(options["ffn"]), sharing=str(options["sharing"]),
        seq_len=int(options["seq_len"]), batch=int(options["batch"]),
        steps=int(options["steps"]), lr=float(options["lr"]), warmup=int(options["warmup"]),
        threads=int(options["threads"]),
    )
    log.reset_clock()  # wall time from here: torch and transformers are imported
    if options["data"] in ("copy", "induction"):
        from methods.recipes.synthetic import induction_stream

        lengths = (COPY_LENGTH, COPY_LENGTH) if options["data"] == "copy" else (8, 40)
        text = induction_stream(INDUCTION_BYTES, seed, *lengths)
    else:
        text = corpus.train
    model = tinylm.train(cfg, text, seed, log.step)
    tinylm.save(model, cfg, out_dir)
