"""Black-box model merging: task-arithmetic coefficients per (task, layer group) found by
ES, CBO, OVI or the ES-OVI / CBO-OVI hybrids (:mod:`methods.bbo_merge.bbo`) under a fixed
budget of fitness evaluations — the language-model-merging use of the paper's hybrids
("CBO-OVI ... competitive on language model merging under limited evaluation budgets").

The checkpoints (recipe ``merge-ckpt``, each built once and cached): a base tiny LM
(:mod:`methods.recipes.tinylm`) trained on ``stdlib+pydoc`` (Python source plus Python's
language reference, both fixed for a given Python, so the checkpoints and the fitness
reproduce from a commit), and two fine-tunes of it, one on the ``stdlib`` files (code) and
one on the ``pydoc`` topics (prose). Task vectors ``tau_t = theta_t -
theta_base``; the merge is ``theta = theta_base + sum_t c[t, g] tau_t`` with one
coefficient per task and layer group ``g`` (``groups`` contiguous groups of the decoder
layers; the embedding goes with the first group, the final norm with the last), computed
as ``(1 - sum_t c[t, g]) theta_base + sum_t c[t, g] theta_t`` so that ``c = 0`` gives the
base and ``c = e_t`` gives checkpoint ``t`` bit for bit.

The fitness is bits per byte on a DEV split, computed in-process with
:func:`harness.models.logprobs.text_bits` (the same scoring as ``harness/bpb``). DEV split:
within each source's list of *training* files (the corpus's own train split, sorted), every
``DEV_EVERY``-th file (index ``% 8 == 7``) is DEV; no checkpoint trains on it, so the
fitness measures text no checkpoint saw, and it is disjoint from the corpus's held-out
files, which :func:`harness.corpus.held_out_windows` (what the engine scores) reads. The
DEV windows are the full-size ``window_bytes`` windows of the DEV text, ``dev_windows`` of
them evenly spaced.

``optimiser``: ``es``, ``cbo``, ``ovi``, ``es-ovi``, ``cbo-ovi`` search the coefficients in
``[low, high]`` starting around the uniform point, in exactly ``budget`` evaluations, seeded
by the product's seed (the checkpoints use ``ckpt_seed``, so every optimiser seed merges the
same checkpoints); ``uniform`` is plain task arithmetic, ``c = 1 / n_tasks`` everywhere (the
average of the fine-tunes); ``fixed`` applies ``coeffs`` (one per task, or one per task and
group), e.g. ``0,0`` (the base) or ``1,0`` (the stdlib fine-tune), so a study scores the
constituents through the same path. ``train_log.jsonl`` has one line per fitness
evaluation (``loss`` = its DEV bpb, plus the coefficients and the best so far);
``merge.json`` the chosen coefficients and the DEV bpb of the constituents and of the
uniform merge (those extra evaluations are outside the budget).

    harness recipes build bbo-merge -o optimiser=cbo-ovi --seed 0
    harness study run methods/studies/bbo_merge/study.yaml
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.corpus import Corpus, CorpusFile, held_out_windows, split_windows
from harness.plugins.recipe import TrainLog, build_product, recipe

__all__ = ["CKPT_DEFAULTS", "DEFAULTS", "DEV_EVERY", "OPTIMISERS", "PARTS", "TASKS",
           "checkpoint_files", "dev_files", "dev_windows", "group_of", "merge_into",
           "parse_coeffs"]

DEV_EVERY = 8
PARTS = ("base", "stdlib", "pydoc")
TASKS = ("stdlib", "pydoc")
"""The fine-tunes merged, in coefficient order."""
OPTIMISERS = ("es", "cbo", "ovi", "es-ovi", "cbo-ovi", "uniform", "fixed")

CKPT_DEFAULTS: dict[str, Any] = {
    "part": "base", "base_steps": 200, "ft_steps": 100, "lr": 3e-3, "ft_lr": 1e-3,
    "warmup": 20, "ft_warmup": 10, "d_model": 128, "n_layers": 6, "n_heads": 16,
    "ffn": 352, "seq_len": 256, "batch": 8, "threads": 1, "corpus": "stdlib+pydoc",
}
"""The tinylm default size (1.24M parameters); the base's 200 steps are the qkv-sharing
recipe's, each fine-tune 100 more steps at a third of the learning rate."""
_FT_ONLY = ("ft_steps", "ft_lr", "ft_warmup")
_CKPT_KEYS = tuple(k for k in CKPT_DEFAULTS if k != "part")

DEFAULTS: dict[str, Any] = {
    "optimiser": "cbo-ovi", "budget": 48, "popsize": 8, "groups": 3, "sigma0": 0.3,
    "low": -0.5, "high": 1.5, "kappa": 0.5, "rho": 0.5, "coeffs": "", "dev_windows": 8,
    "window_bytes": 256, "ckpt_seed": 0,
    **{k: v for k, v in CKPT_DEFAULTS.items() if k != "part"},
}
"""48 evaluations = 6 generations of 8; 3 layer groups x 2 tasks = 6 coefficients; 8 DEV
windows (2 KB; about 0.8 s an evaluation on one loaded CPU thread, so a search takes under
a minute); the
search starts around the uniform point (0.5) with scale 0.3 inside [-0.5, 1.5]."""


# --------------------------------------------------------------------------- the DEV split


def _train_by_source(corpus: Corpus) -> dict[str, list[CorpusFile]]:
    found: dict[str, list[CorpusFile]] = {}
    for f in corpus.files:
        if not f.held_out:
            found.setdefault(f.source, []).append(f)
    return found


def dev_files(corpus: Corpus) -> list[CorpusFile]:
    """The DEV files: every ``DEV_EVERY``-th training file of each source."""
    return [f for files in _train_by_source(corpus).values()
            for i, f in enumerate(files) if i % DEV_EVERY == DEV_EVERY - 1]


def checkpoint_files(corpus: Corpus, part: str) -> list[CorpusFile]:
    """The files a checkpoint trains on: the training files minus DEV, of every source
    (``base``) or of one (``stdlib``, ``pydoc``)."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}")
    return [f for source, files in _train_by_source(corpus).items()
            for i, f in enumerate(files)
            if i % DEV_EVERY != DEV_EVERY - 1 and part in ("base", source)]


def dev_windows(corpus: Corpus, window_bytes: int, n: int) -> list[str]:
    """``n`` full-size windows of the DEV text, evenly spaced (fixed for every model)."""
    text = "\n".join(f.text for f in dev_files(corpus))
    windows = [w for w in split_windows(text, window_bytes)
               if len(w.encode("utf-8")) > window_bytes - 4]
    if n < 1 or n > len(windows):
        raise ValueError(f"dev_windows must be in 1..{len(windows)}")
    step = len(windows) / n
    return [windows[int(i * step)] for i in range(n)]


def held_out_overlap(corpus: Corpus, window_bytes: int, n: int) -> int:
    """How many DEV windows also occur in the engine's held-out windows (0 by design)."""
    total = len([w for w in split_windows(corpus.held_out, window_bytes)
                 if len(w.encode("utf-8")) > window_bytes - 4])
    held = set(held_out_windows(corpus, window_bytes, total))
    return sum(w in held for w in dev_windows(corpus, window_bytes, n))


# --------------------------------------------------------------------------- checkpoints


def _config(options: dict[str, Any], fine_tune: bool) -> Any:
    from methods.recipes import tinylm

    return tinylm.TinyConfig(
        d_model=int(options["d_model"]), n_layers=int(options["n_layers"]),
        n_heads=int(options["n_heads"]), n_kv_heads=int(options["n_heads"]),
        ffn=int(options["ffn"]), seq_len=int(options["seq_len"]), batch=int(options["batch"]),
        steps=int(options["ft_steps" if fine_tune else "base_steps"]),
        lr=float(options["ft_lr" if fine_tune else "lr"]),
        warmup=int(options["ft_warmup" if fine_tune else "warmup"]),
        threads=int(options["threads"]))


def _cache_root(out_dir: Path) -> Path:
    """The cache a product is being built in: ``build_product`` trains in a staging folder
    ``<cache>/<recipe>/.<hash>-*``, so a nested checkpoint lands in the same cache."""
    return out_dir.parent.parent


def base_options(options: dict[str, Any]) -> dict[str, Any]:
    """The base checkpoint's options: the fine-tune-only options at their defaults, so
    every fine-tune setting shares one base (missing options take their defaults)."""
    options = {**CKPT_DEFAULTS, **options}
    return {**{k: options[k] for k in _CKPT_KEYS},
            **{k: CKPT_DEFAULTS[k] for k in _FT_ONLY}, "part": "base"}


@recipe("merge-ckpt", extra="cpu", version="1", defaults=CKPT_DEFAULTS,
        choices={"part": PARTS, "corpus": ("stdlib+pydoc",)},
        summary="tiny-LM checkpoints to merge: a base on stdlib+pydoc, fine-tunes on each part")
def merge_ckpt(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
               log: TrainLog) -> None:
    """The base (trained from scratch on the non-DEV training files) or a fine-tune of it
    on one source's non-DEV training files."""
    from methods.recipes import tinylm

    part = str(options["part"])
    text = "\n".join(f.text for f in checkpoint_files(corpus, part))
    if part == "base":
        cfg = _config(options, fine_tune=False)
        log.reset_clock()
        tinylm.save(tinylm.train(cfg, text, seed, log.step), cfg, out_dir)
        return
    import torch
    from transformers import LlamaForCausalLM

    base = build_product("merge-ckpt", base_options(options), seed,
                         cache_root=_cache_root(out_dir))
    cfg = _config(options, fine_tune=True)
    log.reset_clock()
    with tinylm.deterministic(cfg.threads):
        torch.manual_seed(seed)
        model = LlamaForCausalLM.from_pretrained(str(base))
        opt = tinylm.make_optimizer(model, cfg)
        batches = tinylm.window_batches(tinylm.text_bytes(text, cfg.seq_len), cfg,
                                        seed + 1 + PARTS.index(part))
        tinylm.train_steps(model, opt, range(1, cfg.steps + 1), batches,
                           tinylm.cosine_lr(cfg), tinylm.step_flops(cfg), log.step, base=part)
    model.eval()
    tinylm.save(model, cfg, out_dir)


# --------------------------------------------------------------------------- merging


def group_of(name: str, n_layers: int, groups: int) -> int:
    """The layer group of a parameter: decoder layer ``i`` is in group ``i * groups //
    n_layers``; the embedding (tied with the output head) goes with group 0 and the final
    norm with the last group."""
    if ".layers." in name:
        layer = int(name.split(".layers.")[1].split(".")[0])
    elif "embed_tokens" in name or "lm_head" in name:
        layer = 0
    else:
        layer = n_layers - 1
    return layer * groups // n_layers


def merge_into(model: Any, base: dict[str, Any], thetas: Sequence[dict[str, Any]],
               coeffs: Sequence[float], groups: int) -> None:
    """Set ``model``'s parameters to ``(1 - sum_t c[t, g]) base + sum_t c[t, g] theta_t``
    (``coeffs`` laid out task-major: ``c[t * groups + g]``), in place."""
    import torch

    n_layers = int(model.config.num_hidden_layers)
    if len(coeffs) != len(thetas) * groups:
        raise ValueError(f"{len(coeffs)} coefficients for {len(thetas)} tasks x {groups} "
                         "groups")
    with torch.no_grad():
        for name, param in model.named_parameters():
            g = group_of(name, n_layers, groups)
            cs = [float(coeffs[t * groups + g]) for t in range(len(thetas))]
            param.copy_(base[name])
            param.mul_(1.0 - sum(cs))
            for c, theta in zip(cs, thetas, strict=True):
                param.add_(theta[name], alpha=c)


def parse_coeffs(text: str, n_tasks: int, groups: int) -> list[float]:
    """``coeffs``: one value per task (repeated over the groups) or one per task and group
    (task-major)."""
    values = [float(v) for v in text.replace(" ", "").split(",") if v]
    if len(values) == n_tasks:
        return [v for v in values for _ in range(groups)]
    if len(values) == n_tasks * groups:
        return values
    raise ValueError(f"coeffs needs {n_tasks} or {n_tasks * groups} comma-separated values, "
                     f"got {text!r}")


def _params(folder: Path) -> dict[str, Any]:
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(str(folder))
    return {k: v.detach().clone() for k, v in model.named_parameters()}


@recipe("bbo-merge", extra="cpu", version="1", defaults=DEFAULTS,
        choices={"optimiser": OPTIMISERS, "corpus": ("stdlib+pydoc",)},
        summary="task-arithmetic merge of tiny-LM fine-tunes, coefficients by ES/CBO/OVI/hybrids")
def bbo_merge(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
              log: TrainLog) -> None:
    """Build (or find) the checkpoints, search the merge coefficients on DEV bpb, save the
    merged model."""
    from dataclasses import replace

    import numpy as np
    from transformers import AutoTokenizer, LlamaForCausalLM

    from harness.models.logprobs import text_bits
    from methods.bbo_merge import bbo
    from methods.recipes import tinylm

    ckpt = {k: options[k] for k in _CKPT_KEYS}
    ckpt_seed = int(options["ckpt_seed"])
    root = _cache_root(out_dir)
    base_dir = build_product("merge-ckpt", base_options(ckpt), ckpt_seed, cache_root=root)
    task_dirs = [build_product("merge-ckpt", {**ckpt, "part": t}, ckpt_seed, cache_root=root)
                 for t in TASKS]
    groups, method = int(options["groups"]), str(options["optimiser"])
    windows = dev_windows(corpus, int(options["window_bytes"]), int(options["dev_windows"]))
    dev_bytes = sum(len(w.encode("utf-8")) for w in windows)
    cfg = _config(ckpt, fine_tune=True)
    # forward-only matrix FLOPs of scoring the DEV windows, each one window_bytes + 1 token
    # sequence (step_flops counts forward + backward = 3 forwards)
    score_cfg = replace(cfg, seq_len=int(options["window_bytes"]) + 1, batch=1)
    eval_flops = tinylm.step_flops(score_cfg) // 3 * len(windows)
    log.reset_clock()
    with tinylm.deterministic(int(options["threads"])):
        tokenizer = AutoTokenizer.from_pretrained(str(base_dir))
        model = LlamaForCausalLM.from_pretrained(str(base_dir))
        model.eval()
        base = _params(base_dir)
        thetas = [_params(d) for d in task_dirs]

        def dev_bpb(coeffs: Sequence[float]) -> float:
            merge_into(model, base, thetas, coeffs, groups)
            return sum(text_bits(model, tokenizer, w)[0] for w in windows) / dev_bytes

        evals: list[tuple[list[float], float]] = []

        def fitness(coeffs: Any) -> float:
            value = dev_bpb(list(map(float, coeffs)))
            evals.append((list(map(float, coeffs)), value))
            log.step(len(evals), loss=value, tokens=dev_bytes, flops=eval_flops,
                     coeffs=[round(c, 6) for c in evals[-1][0]],
                     best=min(v for _, v in evals))
            return value

        n = len(TASKS) * groups
        uniform = [1.0 / len(TASKS)] * n
        if method == "uniform":
            chosen = uniform
            fitness(chosen)
        elif method == "fixed":
            chosen = parse_coeffs(str(options["coeffs"]), len(TASKS), groups)
            fitness(chosen)
        else:
            result = bbo.minimise(
                bbo.batched(fitness), np.array(uniform), budget=int(options["budget"]),
                seed=seed, method=method, bounds=(float(options["low"]), float(options["high"])),
                sigma0=float(options["sigma0"]), popsize=int(options["popsize"]),
                kappa=float(options["kappa"]), rho=float(options["rho"]))
            chosen = [float(c) for c in result.best_x]
        references = {"base": dev_bpb([0.0] * n), "uniform": dev_bpb(uniform),
                      **{f"ft-{t}": dev_bpb([float(i == j) for j in range(len(TASKS))
                                             for _ in range(groups)])
                         for i, t in enumerate(TASKS)}}
        merge_into(model, base, thetas, chosen, groups)
        chosen_bpb = dev_bpb(chosen)
    model.eval()
    tinylm.save(model, cfg, out_dir)
    (out_dir / "merge.json").write_text(json.dumps({
        "optimiser": method, "seed": seed, "tasks": list(TASKS), "groups": groups,
        "coeffs": chosen, "dev_bpb": chosen_bpb, "evaluations": len(evals),
        "dev_windows": len(windows), "dev_bytes": dev_bytes,
        "dev_files": [f.path for f in dev_files(corpus)],
        "checkpoints": {"base": base_dir.name, **{t: d.name for t, d in
                                                  zip(TASKS, task_dirs, strict=True)}},
        "reference_dev_bpb": references,
        "note": "reference_dev_bpb and dev_bpb are evaluated outside the budget",
    }, indent=2) + "\n")


# --------------------------------------------------------------------------- summary


def _product_of(options: dict[str, Any], seed: int) -> Path | None:
    """The newest cached bbo-merge product with these options (the others at their
    defaults) and seed. Searched rather than hashed: the corpus fingerprint (part of the
    hash) is fixed for a given Python, but the products may have been built under another
    Python than the one summarising; the newest product with these options is the study's
    (a product of an older corpus, e.g. the former ``stdlib+docs``, has other options).
    None when no cached product matches (the table then has no DEV column for it)."""
    from harness.plugins.recipe import recipe_cache, resolve_options

    wanted = resolve_options("bbo-merge", options)
    found = []
    for info in (recipe_cache() / "bbo-merge").glob("*/product.json"):
        doc = json.loads(info.read_text())
        if doc["options"] == wanted and doc["seed"] == seed:
            found.append((doc["created"], info.parent))
    return max(found)[1] if found else None


def summarise(log_dir: str | Path, score_key: str = "bpb/bpb") -> dict[str, Any]:
    """The study's merging table from its eval logs: per optimiser level, the held-out bpb
    pooled over seeds and windows with a 95% t interval clustered by window
    (:func:`harness.stats.mean_ci`), the per-seed means, and the paired difference to
    uniform task arithmetic and to each constituent (window by window, same seed, clustered
    by window; negative = lower bpb than the reference); plus each product's DEV bpb and
    coefficients from its ``merge.json``."""
    import polars as pl

    from harness.factorial.report.frame import study_frame
    from harness.stats import mean_ci

    # the study engine's reader gives each factor level as a column (optimiser, seed)
    frame = (study_frame(log_dir).filter(pl.col("score_key") == score_key)
             .with_columns(pl.col("seed").cast(pl.Int64)))
    levels = [lv for lv in ("base", "ft-stdlib", "ft-pydoc", "uniform", *OPTIMISERS[:5])
              if lv in set(frame["optimiser"])]
    by = {lv: frame.filter(pl.col("optimiser") == lv).sort(["seed", "sample_id"])
          for lv in levels}
    fixed = {"base": "0,0", "ft-stdlib": "1,0", "ft-pydoc": "0,1"}
    rows: list[dict[str, Any]] = []
    for lv in levels:
        part = by[lv]
        est = mean_ci(part["score_value"], cluster=part["sample_id"])
        row: dict[str, Any] = {"level": lv, "bpb": est.estimate, "lo": est.lo, "hi": est.hi,
                               "n": est.n, "per_seed": {}, "dev_bpb": {}, "coeffs": {}}
        for seed in sorted(set(part["seed"])):
            seed_part = part.filter(pl.col("seed") == seed)
            row["per_seed"][seed] = float(seed_part["score_value"].mean())  # type: ignore[arg-type]
            options: dict[str, Any] = ({"optimiser": "fixed", "coeffs": fixed[lv]}
                                       if lv in fixed else {"optimiser": lv})
            product = _product_of(options, seed)
            if product is not None and (product / "merge.json").is_file():
                info = json.loads((product / "merge.json").read_text())
                row["dev_bpb"][seed] = info["dev_bpb"]
                row["coeffs"][seed] = [round(c, 3) for c in info["coeffs"]]
        for ref in ("uniform", "base", "ft-stdlib", "ft-pydoc"):
            if ref == lv or ref not in by:
                continue
            joined = part.join(by[ref], on=["seed", "sample_id"], suffix="_ref")
            diff = mean_ci(joined["score_value"] - joined["score_value_ref"],
                           cluster=joined["sample_id"])
            row[f"vs_{ref}"] = {"diff": diff.estimate, "lo": diff.lo, "hi": diff.hi}
        rows.append(row)
    return {"score": score_key, "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m methods.bbo_merge.bbo_merge summarise LOG_DIR --out FILE.json``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m methods.bbo_merge.bbo_merge")
    sub = parser.add_subparsers(dest="command", required=True)
    summary = sub.add_parser("summarise", help="the merging table of a bbo_merge study")
    summary.add_argument("log_dir")
    summary.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    doc = summarise(args.log_dir)
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    for row in doc["rows"]:
        refs = "  ".join(f"{k[3:]} {v['diff']:+.4f} [{v['lo']:+.4f}, {v['hi']:+.4f}]"
                         for k, v in row.items() if k.startswith("vs_"))
        print(f"{row['level']:10s} {row['bpb']:.4f} [{row['lo']:.4f}, {row['hi']:.4f}]  {refs}")
    return 0


if __name__ == "__main__":
    import sys

    from harness.errors import guarded

    sys.exit(guarded(main))
