"""Zero/one-layer progressive depth training on the tiny byte-level LM
(:mod:`methods.recipes.tinylm`), vs training at full depth from the first step.

The claim checked at small scale (Bu, "Scaling depth capacity via zero/one-layer model
expansion", arXiv 2511.04981): train a model with 0 transformer layers (embeddings, final
norm and tied head: a bigram model) or 1 layer for most of the run, expand it once to the
target depth late in training (~80% of the steps), and finish under a warmup-stable-decay
(WSD) schedule; the expanded model catches up with ("mixes into") the full-depth run, so
~80% of the compute (~5x) is saved at a comparable final loss.

What this recipe does (``start_layers`` < ``n_layers``):

1. The seeded full-depth initialisation is built first (``tinylm.build_model`` at
   ``n_layers``, the same weights the full-depth baseline starts from); the shallow model
   takes its embeddings, final norm and first ``start_layers`` layers.
2. Steps ``1 .. round(expand_at * steps)`` train the shallow model; then :func:`expand_depth`
   builds a ``n_layers`` Llama holding the trained embeddings, norm and layers (kept at the
   bottom of the stack) and new layers on top, initialised by ``init``:

   * ``random`` (default; the paper's choice alongside copying): each new layer is the
     layer the seeded full-depth initialisation had at that index (Llama init, std 0.02).
     The function changes at expansion.
   * ``copy``: new layer ``j`` is a copy of trained layer ``j mod start_layers`` (needs
     ``start_layers`` >= 1); the function changes.
   * ``zero``: like ``random`` but each new layer's output projections (``o_proj``,
     ``down_proj``) are zero, so every new block adds nothing to the residual stream and
     the expanded model computes exactly the shallow model's function (the
     function-preserving alternative the paper compares against).
3. The optimiser is rebuilt over the deeper model; with ``optimizer_state=keep`` (default)
   the AdamW moments and step counts of every carried parameter move across, and the new
   layers start with fresh state; ``reset`` starts all parameters fresh.
4. The learning rate follows ``schedule`` over the whole run, without a rewarmup at
   expansion: ``wsd`` = linear warmup over ``warmup`` steps, constant ``lr``, then a linear
   decay to 10% of ``lr`` over the last ``decay`` fraction of the steps (so with the
   defaults the expansion at 80% meets the start of the decay); ``cosine`` = tinylm's
   warmup + cosine decay to 10%.

``start_layers == n_layers`` is the full-depth baseline under the same schedule, data
stream and initialisation. Every step logs ``depth`` (the layers it ran) and its exact
FLOPs at that depth (``tinylm.step_flops`` of that depth's config), so ``flops_total`` in
``product.json`` is the compute the run really used. The product is always a plain
``n_layers`` Llama folder (``tinylm.save``).

Not reproduced: the paper's muP hyperparameter transfer (depth-scaled residual branches
and learning rates). The product must stay a stock ``LlamaForCausalLM`` (loadable by any
provider without remote code), so both phases use the same standard parametrisation and
learning rate.

:func:`compute_to_loss` and :func:`compute_savings` read the training logs back and give
the FLOPs each run needs to reach the full-depth run's final smoothed loss.

    harness recipes build progressive-depth -o start_layers=0 --seed 0
    harness study run methods/studies/progressive_depth/study.yaml
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.corpus import CORPORA, DEFAULT_CORPUS, Corpus
from harness.plugins.recipe import RecipeError, TrainLog, recipe

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import torch

    from methods.recipes.tinylm import TinyConfig

__all__ = ["DEFAULTS", "INITS", "SCHEDULES", "SMOOTH_WINDOW", "compute_savings",
           "compute_to_loss", "expand_depth", "expand_step", "progressive_depth",
           "smoothed_loss", "transfer_optimizer", "validate", "wsd_lr"]

INITS = ("random", "copy", "zero")
SCHEDULES = ("wsd", "cosine")
OPTIMIZER_STATE = ("keep", "reset")
SMOOTH_WINDOW = 20
"""Steps in the trailing mean that smooths the per-step training loss (each step's loss is
one batch of 8 x 256 bytes, so single steps are noisy)."""

DEFAULTS: dict[str, Any] = {
    "start_layers": 0, "n_layers": 6, "expand_at": 0.8, "init": "random",
    "schedule": "wsd", "decay": 0.2, "optimizer_state": "keep", "steps": 300,
    "d_model": 128, "n_heads": 16, "ffn": 352, "seq_len": 256, "batch": 8, "lr": 3e-3,
    "warmup": 20, "threads": 1, "corpus": DEFAULT_CORPUS,
}
"""The tiny LM of qkv-sharing (1.24M parameters at 6 layers). A 6-layer step is 20.0 GFLOP,
a 0-layer step 0.41 GFLOP (2%) and a 1-layer step 3.68 GFLOP (18%)."""


def expand_step(options: Mapping[str, Any]) -> int | None:
    """The last step run at ``start_layers`` (expansion happens after it), or ``None`` for
    the full-depth baseline."""
    if int(options["start_layers"]) == int(options["n_layers"]):
        return None
    return round(float(options["expand_at"]) * int(options["steps"]))


def validate(options: Mapping[str, Any]) -> None:
    """Reject options that cannot make a run, with the reason (before torch is imported)."""
    start, target, steps = (int(options["start_layers"]), int(options["n_layers"]),
                            int(options["steps"]))
    if target < 1:
        raise RecipeError(f"n_layers={target}: the product needs at least one layer")
    if not 0 <= start <= target:
        raise RecipeError(f"start_layers={start}: must be between 0 and n_layers={target}")
    if steps < 2:
        raise RecipeError(f"steps={steps}: need at least 2 steps")
    if not 0 <= int(options["warmup"]) < steps:
        raise RecipeError(f"warmup={options['warmup']}: must be in [0, steps={steps})")
    decay = float(options["decay"])
    if not 0.0 <= decay < 1.0:
        raise RecipeError(f"decay={decay}: the decay fraction must be in [0, 1)")
    if start < target:
        expand_at = float(options["expand_at"])
        if not 0.0 < expand_at < 1.0:
            raise RecipeError(f"expand_at={expand_at}: must be a fraction in (0, 1)")
        last = expand_step(options)
        assert last is not None
        if not 1 <= last < steps:
            raise RecipeError(f"expand_at={expand_at} x steps={steps} leaves no step at one "
                              "of the two depths")
        if options["init"] == "copy" and start == 0:
            raise RecipeError("init=copy needs start_layers >= 1 (there is no layer to copy); "
                              "use init=random or init=zero")


def wsd_lr(lr: float, steps: int, warmup: int, decay: float,
           floor: float = 0.1) -> Callable[[int], float]:
    """Warmup-stable-decay: linear warmup to ``lr`` over ``warmup`` steps, constant, then a
    linear decay to ``floor * lr`` over the last ``round(decay * steps)`` steps (the floor
    matches tinylm's cosine, so the two schedules end at the same rate)."""
    decay_steps = round(decay * steps)
    decay_start = steps - decay_steps

    def lr_at(step: int) -> float:
        if warmup and step <= warmup:
            return lr * step / warmup
        if decay_steps == 0 or step <= decay_start:
            return lr
        progress = min((step - decay_start) / decay_steps, 1.0)
        return lr * (1.0 - (1.0 - floor) * progress)

    return lr_at


def _layer_keys(state: Mapping[str, Any], index: int) -> dict[str, str]:
    """Suffix -> full key of layer ``index``'s entries in a Llama state dict."""
    prefix = f"model.layers.{index}."
    return {k[len(prefix):]: k for k in state if k.startswith(prefix)}


def expand_depth(model: Any, cfg: TinyConfig, n_layers: int, init: str,
                 fresh: Mapping[str, torch.Tensor]) -> Any:
    """A ``n_layers`` ``LlamaForCausalLM`` holding ``model``'s trained embeddings, final norm
    and layers (at the bottom) and new layers on top, initialised by ``init``.

    Args:
        model: The trained shallow Llama (``cfg.n_layers`` layers, possibly 0).
        cfg: Its config; the result's config is ``cfg`` with ``n_layers``.
        n_layers: The target depth (>= ``cfg.n_layers``).
        init: ``random`` (new layer ``j`` = ``fresh``'s layer ``j``), ``copy`` (trained
            layer ``j mod cfg.n_layers``) or ``zero`` (``random`` with ``o_proj`` and
            ``down_proj`` zeroed, so the function is unchanged).
        fresh: A state dict of the seeded ``n_layers`` initialisation (the source of the
            random layers).
    """
    import torch
    from transformers import LlamaForCausalLM

    from methods.recipes import tinylm

    if init not in INITS:
        raise ValueError(f"init must be one of {', '.join(INITS)}")
    if n_layers < cfg.n_layers:
        raise ValueError("expand_depth cannot remove layers")
    if init == "copy" and cfg.n_layers == 0:
        raise ValueError("init=copy needs at least one trained layer")
    trained = {k: v.detach().clone() for k, v in model.state_dict().items()}
    state: dict[str, torch.Tensor] = dict(trained)
    for j in range(cfg.n_layers, n_layers):
        if init == "copy":
            source = _layer_keys(trained, j % cfg.n_layers)
            for suffix, key in source.items():
                state[f"model.layers.{j}.{suffix}"] = trained[key].clone()
            continue
        for suffix, key in _layer_keys(fresh, j).items():
            value = fresh[key].detach().clone()
            if init == "zero" and suffix in ("self_attn.o_proj.weight", "mlp.down_proj.weight"):
                value = torch.zeros_like(value)
            state[f"model.layers.{j}.{suffix}"] = value
    deep = LlamaForCausalLM(tinylm.llama_config(replace(cfg, n_layers=n_layers)))
    deep.load_state_dict(state, strict=True)
    return deep


def transfer_optimizer(old_opt: torch.optim.Optimizer, old_model: Any, new_model: Any,
                       cfg: TinyConfig, keep: bool) -> torch.optim.Optimizer:
    """tinylm's AdamW over ``new_model``; with ``keep`` every parameter that ``old_model``
    had under the same name gets its AdamW state (moments, step) copied, the new layers
    start fresh."""
    from methods.recipes import tinylm

    opt = tinylm.make_optimizer(new_model, cfg)
    if not keep:
        return opt
    old_params = dict(old_model.named_parameters())
    for name, param in new_model.named_parameters():
        old = old_params.get(name)
        if old is not None and old in old_opt.state:
            opt.state[param] = {k: (v.detach().clone() if hasattr(v, "detach") else v)
                                for k, v in old_opt.state[old].items()}
    return opt


def _config(options: Mapping[str, Any], n_layers: int) -> TinyConfig:
    from methods.recipes import tinylm

    return tinylm.TinyConfig(
        d_model=int(options["d_model"]), n_layers=n_layers, n_heads=int(options["n_heads"]),
        n_kv_heads=int(options["n_heads"]), ffn=int(options["ffn"]),
        seq_len=int(options["seq_len"]), batch=int(options["batch"]),
        steps=int(options["steps"]), lr=float(options["lr"]), warmup=int(options["warmup"]),
        threads=int(options["threads"]))


@recipe("progressive-depth", extra="cpu", version="1", defaults=DEFAULTS,
        choices={"init": INITS, "schedule": SCHEDULES, "optimizer_state": OPTIMIZER_STATE,
                 "corpus": CORPORA},
        summary="zero/one-layer progressive depth (expand late under WSD) vs full depth, "
                "tiny byte LM")
def progressive_depth(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
                      log: TrainLog) -> None:
    """Train at ``start_layers``, expand to ``n_layers`` after ``expand_at`` of the steps
    (or train at full depth throughout), and save the ``n_layers`` product."""
    validate(options)
    from transformers import LlamaForCausalLM

    from methods.recipes import tinylm

    start, target, steps = (int(options["start_layers"]), int(options["n_layers"]),
                            int(options["steps"]))
    full = _config(options, target)
    lr_at = (wsd_lr(full.lr, steps, full.warmup, float(options["decay"]))
             if options["schedule"] == "wsd" else tinylm.cosine_lr(full))
    log.reset_clock()  # wall time from here: torch and transformers are imported
    with tinylm.deterministic(full.threads):
        batches = tinylm.window_batches(tinylm.text_bytes(corpus.train, full.seq_len),
                                        full, seed)
        model = tinylm.build_model(full, seed)  # the seeded full-depth initialisation
        last = expand_step(options)
        if last is None:  # the full-depth baseline
            opt = tinylm.make_optimizer(model, full)
            tinylm.train_steps(model, opt, range(1, steps + 1), batches, lr_at,
                               tinylm.step_flops(full), log.step, depth=target)
        else:
            fresh = {k: v.detach().clone() for k, v in model.state_dict().items()}
            small_cfg = replace(full, n_layers=start)
            small = LlamaForCausalLM(tinylm.llama_config(small_cfg))
            small.load_state_dict({k: fresh[k] for k in small.state_dict()}, strict=True)
            opt = tinylm.make_optimizer(small, small_cfg)
            tinylm.train_steps(small, opt, range(1, last + 1), batches, lr_at,
                               tinylm.step_flops(small_cfg), log.step, depth=start)
            model = expand_depth(small, small_cfg, target, str(options["init"]), fresh)
            opt = transfer_optimizer(opt, small, model, full,
                                     keep=options["optimizer_state"] == "keep")
            tinylm.train_steps(model, opt, range(last + 1, steps + 1), batches, lr_at,
                               tinylm.step_flops(full), log.step, depth=target)
        tinylm.save(tinylm.export(model, full), full, out_dir)


# ------------------------------------------------------------------------------ analysis


def smoothed_loss(frame: pl.DataFrame, window: int = SMOOTH_WINDOW) -> pl.DataFrame:
    """``frame`` (one product's training log) sorted by step with ``loss_smooth``, the
    trailing mean of the last ``window`` steps' losses (fewer at the start). A trailing
    mean uses no future step, so the FLOPs at which it crosses a level are FLOPs really
    spent; it lags a falling curve, which makes the crossing conservative."""
    import polars as pl

    if window < 1:
        raise ValueError("window must be >= 1")
    return frame.sort("step").with_columns(
        pl.col("loss").rolling_mean(window_size=window, min_samples=1).alias("loss_smooth"))


def compute_to_loss(frames: pl.DataFrame, target_loss: float,
                    window: int = SMOOTH_WINDOW) -> pl.DataFrame:
    """FLOPs each product in ``frames`` (``read_training_log`` frames, concatenated) spends
    before its smoothed loss first reaches ``target_loss``.

    Returns one row per product ``hash``: ``seed``, ``start_layers`` (when the frames carry
    ``opt_start_layers``), ``final_loss`` (the smoothed loss at the last step),
    ``flops_total``, ``step_to_target`` and ``flops_to_target`` (null when the run never
    reaches the target).
    """
    import polars as pl

    rows: list[dict[str, Any]] = []
    keys = ["hash"] if "hash" in frames.columns else []
    groups = frames.partition_by(keys, maintain_order=True) if keys else [frames]
    for group in groups:
        curve = smoothed_loss(group, window)
        hit = curve.filter(pl.col("loss_smooth") <= target_loss)
        rows.append({
            "hash": group["hash"][0] if keys else None,
            "seed": int(group["seed"][0]) if "seed" in group.columns else None,
            "start_layers": (int(group["opt_start_layers"][0])
                             if "opt_start_layers" in group.columns else None),
            "final_loss": float(curve["loss_smooth"][-1]),
            "flops_total": int(curve["flops_total"][-1]),
            "step_to_target": int(hit["step"][0]) if hit.height else None,
            "flops_to_target": int(hit["flops_total"][0]) if hit.height else None,
        })
    return pl.DataFrame(rows, schema={
        "hash": pl.String, "seed": pl.Int64, "start_layers": pl.Int64,
        "final_loss": pl.Float64, "flops_total": pl.Int64, "step_to_target": pl.Int64,
        "flops_to_target": pl.Int64})


def compute_savings(frames: pl.DataFrame, full_layers: int,
                    window: int = SMOOTH_WINDOW) -> pl.DataFrame:
    """Per seed and ``start_layers``, compute to equal loss against the full-depth run
    (``start_layers == full_layers``) of the same seed.

    Columns: ``target_loss`` (the full run's final smoothed loss), ``final_loss``,
    ``flops_total``, ``flops_to_target`` and ``ratio`` (``flops_to_target`` of this run /
    that of the full run; null when not reached), ``budget_ratio`` (this run's total FLOPs
    / the full run's), and the reverse view ``full_flops_at_this_loss`` / ``speedup``: the
    FLOPs the full run needed to reach this run's final smoothed loss, divided by this
    run's total FLOPs (> 1 means this run got to its loss with less compute than full
    depth needed for the same loss).
    """
    import polars as pl

    out: list[pl.DataFrame] = []
    for seed_frame in frames.partition_by("seed", maintain_order=True):
        full = seed_frame.filter(pl.col("opt_start_layers") == str(full_layers))
        if full.height == 0:
            raise ValueError(f"seed {seed_frame['seed'][0]} has no full-depth run")
        target = float(smoothed_loss(full, window)["loss_smooth"][-1])
        table = compute_to_loss(seed_frame, target, window)
        full_row = table.filter(pl.col("start_layers") == full_layers).row(0, named=True)
        reverse = []
        for final in table["final_loss"].to_list():
            hit = compute_to_loss(full, float(final), window)["flops_to_target"][0]
            reverse.append(hit)
        table = table.with_columns(
            pl.lit(target).alias("target_loss"),
            (pl.col("flops_to_target") / full_row["flops_to_target"]).alias("ratio"),
            (pl.col("flops_total") / full_row["flops_total"]).alias("budget_ratio"),
            pl.Series("full_flops_at_this_loss", reverse, dtype=pl.Int64),
        ).with_columns(
            (pl.col("full_flops_at_this_loss") / pl.col("flops_total")).alias("speedup"))
        out.append(table)
    return pl.concat(out).sort("seed", "start_layers")
