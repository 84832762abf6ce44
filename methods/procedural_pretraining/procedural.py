"""Procedural pretraining: front-load a share of procedural bytes (k-Dyck, copy or sort)
before the natural corpus, on the tiny byte-level LM (:mod:`methods.recipes.tinylm`).

The claim checked at small scale (Jiang et al., "Procedural Pretraining: Warming Up Language
Models with Abstract Data", 2026): a little procedural data first improves context recall
(needle in a haystack 10% -> 98% after Dyck pretraining, in their small-model diagnosis) and
lets the model reach the same natural-data loss with 55/67/86% of the data (C4 /
CodeParrot / DeepMind-Math, 0.1-0.3% procedural tokens front-loaded).

**The split is token-exact and substitutive.** A run of ``steps`` steps trains on
``T = steps x batch x seq_len`` target tokens; the first ``P = round(fraction x T)`` of them,
in (step, row, position) order, are procedural and the remaining ``T - P`` are the corpus.
Each step draws its corpus batch from the same seeded window stream as a corpus-only run
(:func:`methods.recipes.tinylm.window_batches`) and overwrites the procedural share of it:
rows wholly inside the first ``P`` tokens become procedural windows, and the one row that
straddles ``P`` keeps its corpus bytes after a procedural prefix. So ``fraction = 0`` *is*
the corpus-only run (bit-identical weights), every run sees the same total tokens and FLOPs,
and after the switch a run sees exactly the corpus windows the baseline sees at those steps
— the paper's substitutive setting (procedural tokens replace natural ones). Token-exact
matters at this scale: at the default 200 steps x 8 x 256 = 409,600 tokens, the paper's
0.1% is 410 tokens (1.6 windows, a fifth of one step), which step rounding would make 0.

Scale note, plainly: the paper's levels {0.1%, 0.3%, 1%} are 410 / 1,229 / 4,096 tokens
here — a few optimiser updates out of 200 — so they are kept for comparability but a
measurable effect is not expected from them; 10% and 30% (20 and 60 steps of procedural
data) are the levels that are meaningful at this scale.

Each procedural window is a fresh record stream
(:func:`methods.procedural_pretraining.procedural_data.stream`) seeded by (seed, step, row):
for ``dyck``
one balanced word of ``seq_len`` bytes over ``dyck_k`` bracket types (bytes 0x80..0xFF,
disjoint from the ASCII corpus); for ``copy`` / ``sort`` records of 63 random alphanumerics,
``|``, their copy or their sorted order, ``\\n`` (two records a 256-byte window; shorter
records in windows under 128 bytes). Each step's log line carries ``phase``
(``procedural``, ``mixed`` or ``corpus``) and ``procedural_tokens``.

Deviations from the paper: one continuous run with one warmup + cosine schedule and one
optimiser state (the paper's code trains a procedural model under its own schedule —
constant LR in its Dyck config — and initialises the natural-data model from a chosen subset
of its weights: attention, MLP, norms, embeddings or all); one shared byte vocabulary
instead of separate procedural token ids; the
paper's models are GPT-2 sized (up to 1.3B) on billions of tokens, ours has 1.24M parameters
and 410k tokens.

    harness recipes build procedural-pretraining -o kind=dyck -o fraction=0.1 --seed 0
    harness study run methods/studies/procedural_pretraining/study.yaml
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.corpus import CORPORA, DEFAULT_CORPUS, Corpus
from harness.plugins.recipe import TrainLog, recipe
from methods.procedural_pretraining.procedural_data import KINDS, MAX_K

__all__ = ["DEFAULTS", "KINDS", "Plan", "data_to_equal_loss", "front_loaded",
           "procedural_pretraining", "tiny_config", "window_bytes", "window_seed"]

DEFAULTS: dict[str, Any] = {
    "kind": "dyck", "fraction": 0.0, "dyck_k": MAX_K, "steps": 200, "d_model": 128,
    "n_layers": 6, "n_heads": 16, "ffn": 352, "seq_len": 256, "batch": 8, "lr": 3e-3,
    "warmup": 20, "threads": 1, "corpus": DEFAULT_CORPUS,
    "finetune_steps": 0, "finetune_lr": 1e-3, "finetune_items": 2048, "finetune_batch": 8,
}
"""The qkv-sharing recipe's default tiny LM (1.24M parameters, MHA, separate projections;
0.45-0.75 s a step on one shared CPU thread) with the procedural options in front;
``dyck_k`` 64 is the paper's bracket-type count. ``finetune_*``: after pretraining, fine-tune
on the needle task (:mod:`methods.procedural_pretraining.needle_finetune`) for
``finetune_steps`` steps (0: none, the pretrained product itself)."""


@dataclass(frozen=True)
class Plan:
    """Where the procedural tokens sit: the first ``procedural`` of ``total`` target tokens,
    counted in (step, row, position) order over windows of ``seq_len``."""

    steps: int
    batch: int
    seq_len: int
    fraction: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.fraction <= 1.0:
            raise ValueError("fraction must be in [0, 1]")

    @property
    def total(self) -> int:
        """Target tokens of the whole run."""
        return self.steps * self.batch * self.seq_len

    @property
    def procedural(self) -> int:
        """Procedural target tokens (token-exact, rounded half to even)."""
        return round(self.fraction * self.total)

    def row_tokens(self, step: int, row: int) -> int:
        """Procedural tokens at the start of ``row`` of ``step`` (1-based steps):
        ``seq_len`` for a wholly procedural row, 0 for a corpus row, between for the one
        row that straddles the switch."""
        start = ((step - 1) * self.batch + row) * self.seq_len
        return max(0, min(self.seq_len, self.procedural - start))

    def step_tokens(self, step: int) -> int:
        """Procedural tokens in ``step``."""
        return sum(self.row_tokens(step, row) for row in range(self.batch))

    def phase(self, step: int) -> str:
        """``procedural`` (every token), ``mixed`` (some) or ``corpus`` (none)."""
        tokens = self.step_tokens(step)
        if tokens == 0:
            return "corpus"
        return "procedural" if tokens == self.batch * self.seq_len else "mixed"

    def switch_step(self) -> int:
        """The first step with any corpus token (``steps + 1`` when there is none)."""
        full, rest = divmod(self.procedural, self.batch * self.seq_len)
        return full + 1 if full < self.steps or rest else self.steps + 1


def window_seed(seed: int, step: int, row: int) -> int:
    """The procedural stream seed of one window: a hash of (seed, step, row), so windows
    are independent and any one can be rebuilt alone."""
    digest = hashlib.sha256(f"procedural-window:{seed}:{step}:{row}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def window_bytes(kind: str, n_bytes: int, seed: int, step: int, row: int,
                 dyck_k: int = MAX_K) -> bytes:
    """The procedural window of ``n_bytes`` at (``step``, ``row``): one balanced Dyck word
    of the window's length, or whole copy/sort records of 63 symbols (fewer when the window
    is under 128 bytes, so at least one record fits)."""
    from methods.procedural_pretraining.procedural_data import COPY_LENGTH, stream

    if kind == "dyck":
        length = max(2, n_bytes + n_bytes % 2)
    else:
        length = max(1, min(COPY_LENGTH, (n_bytes - 2) // 2))
    return stream(kind, n_bytes, window_seed(seed, step, row), k=dyck_k, length=length)


def front_loaded(corpus_batches: Callable[[int], Any], plan: Plan, kind: str, seed: int,
                 dyck_k: int = MAX_K) -> Callable[[int], Any]:
    """``next_batch(step)``: the corpus batch of ``step`` with its first
    :meth:`Plan.row_tokens` target tokens per row replaced by procedural bytes (inputs are
    ``<|bos|>`` then the targets shifted, as in :func:`~methods.recipes.tinylm.window_batches`).
    The corpus batch is drawn every step, so the corpus stream stays the baseline's."""
    import torch

    from methods.recipes.tinylm import BOS

    def next_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        inputs, target = corpus_batches(step)
        if plan.step_tokens(step) == 0:
            return inputs, target
        target = target.clone()
        for row in range(plan.batch):
            m = plan.row_tokens(step, row)
            if m:
                # a partial row's Dyck prefix is the start of a full-window word
                data = window_bytes(kind, plan.seq_len, seed, step, row, dyck_k)[:m]
                target[row, :m] = torch.frombuffer(bytearray(data), dtype=torch.uint8).long()
        inputs = torch.cat([torch.full((plan.batch, 1), BOS), target[:, :-1]], dim=1)
        return inputs, target

    return next_batch


def tiny_config(options: dict[str, Any]) -> Any:
    """The :class:`~methods.recipes.tinylm.TinyConfig` of a product's options (MHA,
    separate projections)."""
    from methods.recipes import tinylm

    opts = {**DEFAULTS, **options}
    heads = int(opts["n_heads"])
    return tinylm.TinyConfig(
        d_model=int(opts["d_model"]), n_layers=int(opts["n_layers"]), n_heads=heads,
        n_kv_heads=heads, ffn=int(opts["ffn"]), seq_len=int(opts["seq_len"]),
        batch=int(opts["batch"]), steps=int(opts["steps"]), lr=float(opts["lr"]),
        warmup=int(opts["warmup"]), threads=int(opts["threads"]))


@recipe("procedural-pretraining", extra="cpu", version="1", defaults=DEFAULTS,
        choices={"kind": KINDS, "corpus": CORPORA},
        summary="front-load a token-exact share of k-Dyck / copy / sort bytes, tiny byte LM")
def procedural_pretraining(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
                           log: TrainLog) -> None:
    """Train the tiny LM with the first ``fraction`` of its tokens procedural; save it."""
    from methods.recipes import tinylm

    cfg = tiny_config(options)
    kind, dyck_k = str(options["kind"]), int(options["dyck_k"])
    if not 1 <= dyck_k <= MAX_K:
        raise ValueError(f"dyck_k must be in 1..{MAX_K}")
    plan = Plan(cfg.steps, cfg.batch, cfg.seq_len, float(options["fraction"]))
    log.reset_clock()  # wall time from here: torch and transformers are imported
    corpus_batches = tinylm.window_batches(tinylm.text_bytes(corpus.train, cfg.seq_len), cfg,
                                           seed)
    batches = front_loaded(corpus_batches, plan, kind, seed, dyck_k)

    def step_log(**row: Any) -> None:
        step = int(row["step"])
        log.step(**row, phase=plan.phase(step), procedural_tokens=plan.step_tokens(step))

    if int(options["finetune_steps"]) > 0:
        _finetuned(options, cfg, seed, out_dir, log)
        return
    model = tinylm.train(cfg, corpus.train, seed, step_log, next_batch=batches)
    tinylm.save(model, cfg, out_dir)


def _finetuned(options: dict[str, Any], cfg: Any, seed: int, out_dir: Path,
               log: TrainLog) -> None:
    """The needle fine-tune of the pretrained product with the same options and seed (built
    first, or found in the recipe cache, so arms x budgets share their pretraining)."""
    from harness.plugins.recipe import build_product
    from methods.procedural_pretraining import needle_finetune as ft
    from methods.recipes import tinylm

    base_options = {k: v for k, v in options.items() if not k.startswith("finetune_")}
    # out_dir is build_product's staging folder, <cache>/procedural-pretraining/.<key>-*:
    # the base goes into the same cache as the product
    base = build_product("procedural-pretraining", base_options, seed,
                         cache_root=out_dir.parent.parent)
    model = ft.load_product(base)
    rows = ft.needle_rows(ft.train_items(int(options["finetune_items"]), seed), ft.RECIPE_LOSS)
    ft.finetune(model, rows, int(options["finetune_steps"]), float(options["finetune_lr"]),
                int(options["finetune_batch"]), seed, cfg.threads,
                lambda **row: log.step(**row))
    tinylm.save(model, cfg, out_dir)
    (out_dir / "finetune.json").write_text(json.dumps({
        "base": base.name, "task": "needle", "items_stream": ft.TRAIN_STREAM + seed,
        "items": int(options["finetune_items"]), "steps": int(options["finetune_steps"]),
        "lr": float(options["finetune_lr"]), "batch": int(options["finetune_batch"]),
        "loss": ft.RECIPE_LOSS},
        indent=2) + "\n")


def data_to_equal_loss(baseline: Path, product: Path, window: int = 20) -> dict[str, Any]:
    """How much data ``product`` needs to reach the corpus-only ``baseline``'s final training
    loss (the paper's "same loss with 55/67/86% of the data"), from the two training logs.

    Both curves are the trailing mean of ``window`` corpus-phase steps (procedural and mixed
    steps are left out: their loss is not the corpus loss). The target is the baseline's last
    smoothed value; the answer is the first step at which the product's smoothed curve is at
    or below it, as a share of the baseline's tokens — counting every token
    (``share_total``, procedural included: the FLOPs share, since every step costs the same)
    and counting only corpus tokens (``share_corpus``, the paper's "original data"). ``None``
    when the product never gets there. Training loss on random windows is noisy, so read the
    shares to about +-``window`` steps."""
    from harness.results import read_training_log

    def smoothed(folder: Path) -> Any:
        import polars as pl

        log = read_training_log(folder)
        corpus_only = log.filter(pl.col("phase") == "corpus") if "phase" in log.columns else log
        corpus_tokens = (pl.col("tokens") - pl.col("procedural_tokens")
                         if "procedural_tokens" in log.columns else pl.col("tokens"))
        return (log.with_columns(corpus_tokens.cum_sum().alias("corpus_tokens_total"))
                .join(corpus_only.select("step"), on="step")
                .with_columns(pl.col("loss").rolling_mean(window).alias("smooth"))
                .drop_nulls("smooth"))

    base, run = smoothed(baseline), smoothed(product)
    target = float(base["smooth"][-1])
    total = int(base["tokens_total"][-1])
    reached = run.filter(run["smooth"] <= target)
    out: dict[str, Any] = {"target_loss": target, "final_loss": float(run["smooth"][-1]),
                           "step": None, "share_total": None, "share_corpus": None}
    if reached.height:
        first = reached.row(0, named=True)
        out.update(step=int(first["step"]), share_total=first["tokens_total"] / total,
                   share_corpus=first["corpus_tokens_total"] / total)
    return out
