"""Continual pre-training (CPT) spectra and attention-head rewinding on SmolLM2-135M.

The claims checked at small scale (Diffract, "Spectral View of LLM Domain Adaptation"):
CPT leaves the singular-value spectra of the weight matrices nearly invariant (adaptation
lives in the singular vectors); attention heads differ strongly in how much they change;
rewinding the low-importance heads' updates to the pre-trained weights removes up to 60% of
head updates without quality loss (and can even help, up to +4%); and interpolating linearly
between the base and the CPT checkpoint moves smoothly between the domains.

Two recipes:

* ``cpt``: continue pre-training a local transformers causal LM (``base``, default the
  suite's SmolLM2-135M folder) on the shipped ``stdlib`` corpus (Python source, the domain)
  for ``steps`` AdamW steps of ``batch`` x ``seq_len`` tokens, seeded and deterministic.
* ``head-rewind``: from the cached ``cpt`` product (built through
  :func:`harness.plugins.recipe.build_product`, so every rewind level reuses one CPT run) and the
  base, rank heads by :func:`head_importance`, rewind the lowest ``rewind`` fraction of them
  to the base weights, and scale the remaining update by ``alpha``
  (``theta = base + alpha * mask * (theta_cpt - base)``); saved as a loadable folder.

The head-importance criterion. The paper defines a criterion over the heads' slices of the
attention projections; its exact formula was not found in the public sources we could read
(the Diffract toolkit's docs list spectral and alignment kernels, not the criterion), so ours
is stated here and is the option ``criterion``: the *relative update norm* of a head,
``||delta_h||_F / ||W_h||_F`` over its slices (``rel-norm``, the default: scale-free across
layers, whose weight norms differ), the absolute ``||delta_h||_F`` (``norm``), or a seeded
random order (``random``, the control that says whether the criterion matters). A query head
``h`` owns rows ``h*d:(h+1)*d`` of ``q_proj`` and columns ``h*d:(h+1)*d`` of ``o_proj``; a
key/value head ``g`` owns the same rows of ``k_proj`` and ``v_proj``. SmolLM2 uses grouped-
query attention (9 query heads, 3 KV heads per layer), so the two kinds are ranked
separately and the same fraction of each is rewound (``floor(rewind * count)`` of the 270
query heads and of the 90 KV heads). MLPs, norms and embeddings keep their (alpha-scaled)
update: the method removes head updates only.

Exact endpoints: the blend is ``torch.lerp(base, cpt, w)`` with ``w = alpha * mask``, which is
exact at ``w = 0`` (the base's bits) and ``w = 1`` (the CPT's bits), so ``rewind=0, alpha=1``
is the CPT product and ``alpha=0`` the base, bit for bit.

FLOPs in ``train_log.jsonl``: ``6 * N * tokens`` per step (N = the model's distinct
parameters, tied embeddings once; forward + backward), the standard dense approximation:
attention-score FLOPs over the window (``~ 12 * layers * d * T`` per token, ~3% here at
T = 128) are not counted; the tied embedding matrix is counted once, as the output head's
product (its input lookup is no multiply).

    harness recipes build cpt --seed 0
    harness recipes build head-rewind -o rewind=0.4 --seed 0
    python -m methods.cpt_rewind.cpt_rewind spectra --out spectra.json
    harness study run methods/studies/cpt_rewind/study.yaml
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.corpus import CORPORA, Corpus
from harness.plugins.recipe import TrainLog, build_product, recipe

__all__ = ["CPT_DEFAULTS", "CRITERIA", "REWIND_DEFAULTS", "TOKENIZER_FILES", "blend_state",
           "cpt", "head_importance", "head_rewind", "head_slices", "main", "paired_table",
           "resolve_base", "rewind_mask", "spectra", "spectra_summary", "study_bpb",
           "weights_fingerprint"]

CPT_DEFAULTS: dict[str, Any] = {
    "base": "smollm2-135m", "steps": 60, "lr": 1e-4, "warmup": 6, "seq_len": 128,
    "batch": 4, "threads": 1, "corpus": "stdlib",
}
"""One 4 x 128-token step of SmolLM2-135M costs ~4 s on one free CPU thread (measured:
3.8-4.7 s), 6-8 s under the shared machine's load, so 60 steps (30,720 tokens) take 4-8
minutes. lr 1e-4 (AdamW, linear warmup then cosine to 10%): a CPT learning rate well below
the model's pre-training peak, large enough that 60 steps move the domain loss."""

CRITERIA = ("rel-norm", "norm", "random")
"""``rel-norm`` (the default) and ``norm`` rank by the head's update; ``random`` is the control
(a seeded random order, the product's seed), so the criterion's own effect can be read."""
REWIND_DEFAULTS: dict[str, Any] = {**CPT_DEFAULTS, "rewind": 0.0, "alpha": 1.0,
                                   "criterion": "rel-norm"}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                   "chat_template.jinja", "generation_config.json", "vocab.json", "merges.txt",
                   "tokenizer.model", "added_tokens.json")
"""Files copied from the base next to a product's weights (whatever of them the base has)."""

CPT_INFO = "cpt.json"
REWIND_INFO = "rewind.json"
_ATTN = ("q_proj", "k_proj", "v_proj", "o_proj")


# --------------------------------------------------------------------------- base model


def resolve_base(base: str) -> Path:
    """The folder of ``base``: the suite's SmolLM2-135M copy for its names (dequantised from
    the bundled GGUF once if missing, nothing downloaded), else a local transformers folder."""
    from harness.models.weights import SMOLLM2_NAMES, hf_cache_dir

    if base.lower() in SMOLLM2_NAMES:
        folder = hf_cache_dir()
        if not (folder / "config.json").is_file():
            from harness.models.whitebox import ensure_hf_copy

            folder = ensure_hf_copy()
        return folder
    folder = Path(base).expanduser()
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"base {base!r} is neither a SmolLM2 name nor a model folder")
    return folder


def weights_fingerprint(folder: Path) -> str:
    """sha256 of the folder's weight files (sorted): which base a product was made from."""
    digest = hashlib.sha256()
    files = sorted(folder.glob("*.safetensors")) or sorted(folder.glob("*.bin"))
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 22), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _copy_tokenizer(src: Path, out: Path) -> None:
    for name in TOKENIZER_FILES:
        if (src / name).is_file():
            shutil.copy2(src / name, out / name)


def _load(folder: Path) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True,
                                                 dtype=torch.float32)
    model.eval()
    return model


# --------------------------------------------------------------------------- cpt


def _token_stream(folder: Path, text: str) -> Any:
    import torch
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    ids = tokenizer(text, add_special_tokens=False).input_ids
    return torch.tensor(ids, dtype=torch.long)


@recipe("cpt", extra="cpu", version="1", defaults=CPT_DEFAULTS,
        choices={"corpus": CORPORA},
        summary="continual pre-training of SmolLM2-135M (or a local LM) on the code corpus")
def cpt(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
        log: TrainLog) -> None:
    """Continue pre-training ``base`` on ``corpus.train`` (random token windows, seeded);
    save the model with the base's tokenizer and ``cpt.json`` (the base's fingerprint)."""
    import torch

    from methods.recipes import tinylm

    base = resolve_base(str(options["base"]))
    steps, batch, seq_len = int(options["steps"]), int(options["batch"]), int(options["seq_len"])
    schedule = tinylm.TinyConfig(steps=steps, lr=float(options["lr"]),
                                 warmup=int(options["warmup"]), weight_decay=0.01)
    with tinylm.deterministic(int(options["threads"])):
        torch.manual_seed(seed)
        data = _token_stream(base, corpus.train)
        if data.numel() <= seq_len + 1:
            raise ValueError("the training text is shorter than one window")
        model = _load(base)
        n_params = sum(p.numel() for p in model.parameters())
        opt = tinylm.make_optimizer(model, schedule)
        gen = torch.Generator().manual_seed(seed)
        offsets = torch.arange(seq_len + 1)

        def next_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
            starts = torch.randint(0, data.numel() - seq_len - 1, (batch, 1), generator=gen)
            window = data[starts + offsets]
            return window[:, :-1], window[:, 1:]

        log.reset_clock()
        tinylm.train_steps(model, opt, range(1, steps + 1), next_batch,
                           tinylm.cosine_lr(schedule), 6 * n_params * batch * seq_len,
                           log.step)
        model.eval()
        model.save_pretrained(str(out_dir))
    _copy_tokenizer(base, out_dir)
    (out_dir / CPT_INFO).write_text(json.dumps(
        {"base": str(base), "base_weights_sha256": weights_fingerprint(base),
         "parameters": n_params, "train_tokens_available": int(data.numel())}, indent=2) + "\n")


# --------------------------------------------------------------------------- heads


def head_slices(config: Any) -> list[tuple[str, int, int, list[tuple[str, int, slice]]]]:
    """Every attention head as ``(kind, layer, head, [(param name, dim, index slice)])``:
    kind ``q`` (its rows of ``q_proj``, columns of ``o_proj``) or ``kv`` (its rows of
    ``k_proj`` and ``v_proj``)."""
    layers = int(config.num_hidden_layers)
    heads = int(config.num_attention_heads)
    kv = int(getattr(config, "num_key_value_heads", None) or heads)
    dim = int(getattr(config, "head_dim", None) or config.hidden_size // heads)
    out: list[tuple[str, int, int, list[tuple[str, int, slice]]]] = []
    for layer in range(layers):
        pre = f"model.layers.{layer}.self_attn."
        for h in range(heads):
            rows = slice(h * dim, (h + 1) * dim)
            out.append(("q", layer, h, [(pre + "q_proj.weight", 0, rows),
                                        (pre + "o_proj.weight", 1, rows)]))
        for g in range(kv):
            rows = slice(g * dim, (g + 1) * dim)
            out.append(("kv", layer, g, [(pre + "k_proj.weight", 0, rows),
                                         (pre + "v_proj.weight", 0, rows)]))
    return out


def _part(tensor: Any, dim: int, index: slice) -> Any:
    return tensor[index] if dim == 0 else tensor[:, index]


def head_importance(base: Mapping[str, Any], tuned: Mapping[str, Any], config: Any) -> Any:
    """A polars frame, one row per head: ``kind``, ``layer``, ``head``, ``update_norm``
    (``||delta_h||_F`` over its slices), ``base_norm`` (``||W_h||_F``) and ``rel_update``
    (their ratio). The criterion ranks heads by ``rel_update`` (``rel-norm``) or
    ``update_norm`` (``norm``); bias terms (none in SmolLM2) are not part of a head."""
    import polars as pl

    rows = []
    for kind, layer, head, parts in head_slices(config):
        upd = base_sq = 0.0
        for name, dim, index in parts:
            b = _part(base[name], dim, index).double()
            t = _part(tuned[name], dim, index).double()
            upd += float(((t - b) ** 2).sum())
            base_sq += float((b ** 2).sum())
        rows.append({"kind": kind, "layer": layer, "head": head,
                     "update_norm": math.sqrt(upd), "base_norm": math.sqrt(base_sq),
                     "rel_update": math.sqrt(upd) / max(math.sqrt(base_sq), 1e-30)})
    return pl.DataFrame(rows)


def rewind_mask(importance: Any, rewind: float, criterion: str = "rel-norm",
                seed: int = 0) -> Any:
    """``importance`` with a boolean ``rewound`` column: within each kind (``q``, ``kv``),
    the ``floor(rewind * count)`` heads of lowest criterion value (ties: lower layer, then
    head index first); ``random`` ranks by a uniform draw seeded by ``seed``."""
    import random

    import polars as pl

    if not 0.0 <= rewind <= 1.0:
        raise ValueError(f"rewind must be in [0, 1], got {rewind}")
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}")
    key = {"rel-norm": "rel_update", "norm": "update_norm", "random": "random_key"}[criterion]
    if criterion == "random":
        draw = random.Random(seed)
        importance = importance.with_columns(
            pl.Series("random_key", [draw.random() for _ in range(importance.height)]))
    parts = []
    for kind in ("q", "kv"):
        sub = importance.filter(pl.col("kind") == kind).sort([key, "layer", "head"])
        n = math.floor(rewind * sub.height + 1e-9)
        parts.append(sub.with_columns(
            (pl.int_range(pl.len()) < n).alias("rewound"),
            pl.int_range(pl.len()).alias("rank")))
    return pl.concat(parts).sort(["kind", "layer", "head"])


def blend_state(base: Mapping[str, Any], tuned: Mapping[str, Any], config: Any,
                rewound: list[tuple[str, int, int]], alpha: float) -> dict[str, Any]:
    """``base + alpha * mask * (tuned - base)`` per tensor, ``mask`` 0 on the slices of the
    ``rewound`` heads (``(kind, layer, head)``) and 1 elsewhere, as ``torch.lerp`` (exact at
    weight 0 and 1)."""
    import torch

    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    chosen = set(rewound)
    masks: dict[str, Any] = {}
    for kind, layer, head, parts in head_slices(config):
        if (kind, layer, head) not in chosen:
            continue
        for name, dim, index in parts:
            mask = masks.setdefault(name, torch.ones_like(base[name]))
            _part(mask, dim, index).zero_()
    out: dict[str, Any] = {}
    for name, b in base.items():
        t = tuned[name]
        if name in masks:
            out[name] = torch.lerp(b, t, masks[name] * alpha)
        elif alpha == 1.0:
            out[name] = t.clone()
        elif alpha == 0.0:
            out[name] = b.clone()
        else:
            out[name] = torch.lerp(b, t, alpha)
    return out


@recipe("head-rewind", extra="cpu", version="1", defaults=REWIND_DEFAULTS,
        choices={"corpus": CORPORA, "criterion": CRITERIA},
        summary="rewind low-importance heads of a CPT model to the base; interpolate by alpha")
def head_rewind(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
                log: TrainLog) -> None:
    """Build (or find) the ``cpt`` product of the same CPT options and seed, rewind the
    lowest-importance ``rewind`` fraction of heads, scale the update by ``alpha``, save."""
    import torch

    cpt_options = {k: options[k] for k in CPT_DEFAULTS}
    cpt_dir = build_product("cpt", cpt_options, seed, cache_root=out_dir.parent.parent)
    base = resolve_base(str(options["base"]))
    info = json.loads((cpt_dir / CPT_INFO).read_text())
    if info["base_weights_sha256"] != weights_fingerprint(base):
        raise RuntimeError(f"the cpt product {cpt_dir} was trained from other base weights "
                           f"than {base}; remove it so it rebuilds")
    with torch.no_grad():
        model = _load(base)
        tuned = _load(cpt_dir).state_dict()
        base_sd = model.state_dict()
        importance = head_importance(base_sd, tuned, model.config)
        ranked = rewind_mask(importance, float(options["rewind"]), str(options["criterion"]),
                             seed)
        chosen = [(r["kind"], r["layer"], r["head"])
                  for r in ranked.iter_rows(named=True) if r["rewound"]]
        state = blend_state(base_sd, tuned, model.config, chosen, float(options["alpha"]))
        model.load_state_dict(state, strict=True)
        model.save_pretrained(str(out_dir))
    _copy_tokenizer(base, out_dir)
    key = {"rel-norm": "rel_update", "norm": "update_norm"}.get(str(options["criterion"]),
                                                               "random_key")
    total = float((ranked["update_norm"] ** 2).sum())
    kept = float((ranked.filter(~ranked["rewound"])["update_norm"] ** 2).sum())
    product = json.loads((cpt_dir / "product.json").read_text())
    (out_dir / REWIND_INFO).write_text(json.dumps(
        {"cpt_product": str(cpt_dir), "cpt_hash": product["hash"],
         "cpt_totals": product["totals"], "base": str(base), "criterion": options["criterion"],
         "rewind": options["rewind"], "alpha": options["alpha"],
         "heads_rewound": {k: int(ranked.filter((ranked["kind"] == k) & ranked["rewound"]).height)
                           for k in ("q", "kv")},
         "heads_total": {k: int(ranked.filter(ranked["kind"] == k).height) for k in ("q", "kv")},
         "head_update_energy_kept": kept / total if total else 1.0,
         "heads": ranked.select(["kind", "layer", "head", key, "rank", "rewound"]).to_dicts()},
        indent=1) + "\n")


# --------------------------------------------------------------------------- spectra


def _kind(name: str) -> str:
    for part in (*_ATTN, "gate_proj", "up_proj", "down_proj"):
        if f".{part}." in name:
            return part.removesuffix("_proj")
    return "embed" if "embed" in name else "other"


def spectra(base_dir: Path | str, cpt_dir: Path | str, top_k: int = 16,
            null_seed: int = 0) -> Any:
    """A polars frame, one row per weight matrix (2-D tensor) of the two checkpoints:

    * ``sv_rel_change``: ``||s_cpt - s_base||_2 / ||s_base||_2`` (the whole spectrum);
    * ``sv_top_rel_change``: the same over the ``top_k`` largest singular values;
    * ``update_rel``: ``||W_cpt - W_base||_F / ||W_base||_F`` (how far the matrix moved;
      Weyl's inequality bounds the spectrum's change by it, so ``sv_rel_change`` well below
      ``update_rel`` is the "spectrum invariant" finding);
    * ``u_change`` / ``v_change``: ``1 - mean_i |<u_i, u'_i>|`` over the ``top_k`` left /
      right singular vectors (same index; 0 = unchanged, sign-gauge free);
    * ``u_subspace``: ``||U_k^T U'_k||_F^2 / k``, the overlap of the top-``k`` left subspaces
      (1 = the same subspace);
    * ``u_angle`` / ``v_angle``: the mean angle (radians) ``arccos |<u_i, u'_i>|`` over the
      ``top_k`` vectors, first order in the update like ``sv_rel_change`` (``u_change`` is
      second order: ``1 - cos t ~ t^2 / 2``);
    * ``sv_rel_change_null`` / ``u_angle_null``: the same two for the base plus a *random*
      Gaussian update of the same Frobenius norm (seeded by ``null_seed`` and the matrix's
      index). Why: a small update of a ``m x n`` matrix moves its spectrum only by its
      projections ``u_i^T dW v_i``, which for an unstructured update is ``~ 1/sqrt(n)`` of
      its norm, so "the spectrum barely changes" is only a finding where the CPT's change
      is small *against this null*.
    """
    import polars as pl
    import torch

    base = _load(Path(base_dir)).state_dict()
    tuned = _load(Path(cpt_dir)).state_dict()
    rows = []
    with torch.no_grad():
        for index, (name, b) in enumerate(base.items()):
            if b.dim() != 2 or name not in tuned or (name == "lm_head.weight" and torch.equal(
                    b, base.get("model.embed_tokens.weight", torch.empty(0)))):
                continue  # a tied output head is the embedding, already listed
            b64, t64 = b.double(), tuned[name].double()
            ub, sb, vbh = torch.linalg.svd(b64, full_matrices=False)
            ut, st, vth = torch.linalg.svd(t64, full_matrices=False)
            k = min(top_k, sb.numel())
            cos_u = (ub[:, :k] * ut[:, :k]).sum(0).abs()
            cos_v = (vbh[:k] * vth[:k]).sum(1).abs()
            gen = torch.Generator().manual_seed(null_seed * 100_003 + index)
            noise = torch.randn(b64.shape, generator=gen, dtype=torch.float64)
            noise *= (t64 - b64).norm() / noise.norm().clamp_min(1e-300)
            un, sn, _ = torch.linalg.svd(b64 + noise, full_matrices=False)
            cos_n = (ub[:, :k] * un[:, :k]).sum(0).abs()
            layer = name.split(".")[2] if name.startswith("model.layers.") else None
            rows.append({
                "name": name, "kind": _kind(name),
                "layer": int(layer) if layer is not None else -1,
                "rows": int(b.shape[0]), "cols": int(b.shape[1]),
                "sv_rel_change": float((st - sb).norm() / sb.norm()),
                "sv_top_rel_change": float((st[:k] - sb[:k]).norm() / sb[:k].norm()),
                "update_rel": float((t64 - b64).norm() / b64.norm()),
                "u_change": float(1 - cos_u.mean()), "v_change": float(1 - cos_v.mean()),
                "u_subspace": float((ub[:, :k].T @ ut[:, :k]).pow(2).sum() / k),
                "u_angle": float(cos_u.clamp(max=1).arccos().mean()),
                "v_angle": float(cos_v.clamp(max=1).arccos().mean()),
                "sv_rel_change_null": float((sn - sb).norm() / sb.norm()),
                "u_angle_null": float(cos_n.clamp(max=1).arccos().mean()),
            })
    return pl.DataFrame(rows)


def spectra_summary(frame: Any, heads: Any | None = None) -> dict[str, Any]:
    """Medians over the matrices (all, and per kind), plus the heads' heterogeneity (the
    spread of ``rel_update``: max/min ratio and coefficient of variation) when given."""
    import polars as pl

    cols = ["sv_rel_change", "sv_top_rel_change", "update_rel", "u_change", "v_change",
            "u_subspace", "u_angle", "v_angle", "sv_rel_change_null", "u_angle_null"]
    out: dict[str, Any] = {"matrices": frame.height,
                           "median": {c: float(frame[c].median()) for c in cols},
                           "median_by_kind": {}}
    for kind in sorted(set(frame["kind"].to_list())):
        sub = frame.filter(pl.col("kind") == kind)
        out["median_by_kind"][kind] = {c: float(sub[c].median()) for c in cols}
    if heads is not None:
        out["heads"] = {}
        for kind in ("q", "kv"):
            rel = heads.filter(pl.col("kind") == kind)["rel_update"]
            out["heads"][kind] = {
                "count": rel.len(), "min": float(rel.min()), "median": float(rel.median()),
                "max": float(rel.max()),
                "max_over_min": float(rel.max()) / lo if (lo := float(rel.min())) else math.inf,
                "cv": float(rel.std()) / mean if (mean := float(rel.mean())) else 0.0}
    return out


def paired_table(frame: Any, refs: tuple[str, ...] = ("cpt", "base")) -> Any:
    """Per (``probe``, ``variant``): mean bpb with a 95% t-interval over the windows, and the
    window-paired difference to each reference variant (``d_<ref>``, its 95% CI, and the
    relative change ``pct_<ref>`` in % of the reference's mean). ``frame`` has columns
    ``probe``, ``variant``, ``sample_id`` and ``bpb`` (one row per window and product)."""
    import polars as pl

    from harness.stats import mean_ci, paired_difference_ci

    def ci(values: list[float]) -> tuple[float, float, float]:
        est = mean_ci(values)
        return est.estimate, est.lo, est.hi

    rows = []
    for probe in frame["probe"].unique(maintain_order=True).to_list():
        sub = frame.filter(pl.col("probe") == probe)
        by = {v: dict(zip(g["sample_id"].to_list(), g["bpb"].to_list(), strict=True))
              for (v,), g in sub.group_by(["variant"], maintain_order=True)}
        for variant, values in by.items():
            mean, lo, hi = ci(list(values.values()))
            row: dict[str, Any] = {"probe": probe, "variant": variant, "n": len(values),
                                   "bpb": mean, "lo": lo, "hi": hi}
            for ref in refs:
                if ref not in by:
                    continue
                keys = sorted(set(values) & set(by[ref]))
                paired = paired_difference_ci([values[k] for k in keys],
                                              [by[ref][k] for k in keys])
                d, dlo, dhi = paired.estimate, paired.lo, paired.hi
                ref_mean = sum(by[ref][k] for k in keys) / len(keys)
                row.update({f"d_{ref}": d, f"d_{ref}_lo": dlo, f"d_{ref}_hi": dhi,
                            f"pct_{ref}": 100 * d / ref_mean})
            rows.append(row)
    return pl.DataFrame(rows)


def study_bpb(log_dir: Path | str) -> Any:
    """The study's window-level bpb (``probe``, ``variant``, ``sample_id``, ``bpb``).

    Raises:
        ValueError: one probe was scored on two versions of its corpus (windows of
            different text under the same sample ids, which must not be paired): the study's
            ``stdlib`` and ``pydoc`` probes are fixed for a given Python, so this means a
            log dir mixing Pythons, or a ``docs`` probe (this checkout's markdown) resumed
            after a markdown file changed.
    """
    import polars as pl

    from harness.factorial.report.frame import study_frame

    frame = study_frame(log_dir).filter(pl.col("score_key") == "bpb/bpb")
    prints = frame.select(
        "probe", pl.col("eval_metadata").map_elements(
            lambda m: str(json.loads(m).get("corpus", {}).get("fingerprint")),
            return_dtype=pl.String).alias("fingerprint")).unique()
    mixed = prints.group_by("probe").len().filter(pl.col("len") > 1)["probe"].to_list()
    if mixed:
        raise ValueError(f"probe(s) {mixed} were scored on more than one corpus version; "
                         "rerun those cells in one process (a fresh log dir)")
    return frame.select("probe", "variant", pl.col("sample_id").cast(pl.String),
                        pl.col("score_value").cast(pl.Float64).alias("bpb"))


def main(argv: list[str] | None = None) -> int:
    """``python -m methods.cpt_rewind.cpt_rewind spectra --out FILE.json`` (default: the suite's
    SmolLM2 and its default ``cpt`` product at seed 0, built if missing)."""
    parser = argparse.ArgumentParser(prog="python -m methods.cpt_rewind.cpt_rewind")
    sub = parser.add_subparsers(dest="command", required=True)
    sp = sub.add_parser("spectra", help="singular values vs vectors, base vs CPT")
    sp.add_argument("--out", required=True, type=Path)
    sp.add_argument("--base", default=CPT_DEFAULTS["base"])
    sp.add_argument("--cpt", default=None, help="a CPT folder (default: the cpt product)")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--top-k", type=int, default=16)
    sp.add_argument("--threads", type=int, default=1)
    tp = sub.add_parser("table", help="paired bpb table of a cpt_rewind study log dir")
    tp.add_argument("log_dir", type=Path)
    tp.add_argument("--out", type=Path, default=None, help="write the table as JSON")
    args = parser.parse_args(argv)
    if args.command == "table":
        import polars as pl

        table = paired_table(study_bpb(args.log_dir))
        if args.out is not None:
            args.out.write_text(json.dumps(table.to_dicts(), indent=1) + "\n")
        with pl.Config(tbl_rows=100, tbl_cols=20):
            print(table)
        return 0

    import torch

    torch.set_num_threads(args.threads)
    base = resolve_base(args.base)
    cpt_dir = Path(args.cpt) if args.cpt else build_product(
        "cpt", {"base": args.base}, args.seed)
    frame = spectra(base, cpt_dir, args.top_k)
    with torch.no_grad():
        model = _load(base)
        heads = head_importance(model.state_dict(), _load(cpt_dir).state_dict(), model.config)
    doc = {"base": str(base), "cpt": str(cpt_dir), "top_k": args.top_k,
           "summary": spectra_summary(frame, heads), "matrices": frame.to_dicts(),
           "heads": heads.to_dicts()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc["summary"], indent=2))
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    sys.exit(guarded(main))
