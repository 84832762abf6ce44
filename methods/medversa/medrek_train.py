"""MedREK's trained parts: the value head and attention prompt encoder, trained through the
frozen LLM with the reliability, generality and KL-locality losses of spec §4.5.

Why a module of its own: the editor (:mod:`.medrek`) only *uses* a trained encoder; training
costs forward/backward passes through the whole frozen model, so it runs once per (model,
train split, settings) and the product is cached on disk under
``$EVALSUITE_CACHE/medrek/<key>.pt`` (default ``~/.cache/evalsuite``), the key a digest of
everything that determines the weights: the model's identity and shape, the train records,
the settings, the feature encoder and :data:`TRAIN_VERSION`.

Architecture (spec §4.1–4.3, small): a knowledge sentence ``s = prompt + " " + target`` is
embedded by the frozen sentence encoder (MiniLM, mean-pooled: the KRM backbone), the
``k``-head (Linear then a residual ReLU MLP, width r = the LLM's hidden size) turns it into
the value ``v``, and the attention prompt encoder maps ``v`` to T = 3 soft tokens:
``Q = Linear(v)`` reshaped to T×D, ``K = Linear(v)``, ``V = Linear(v)``, multi-head attention
(8 heads) of Q over the single (K, V). With one key the attention weights are all 1, so the
T outputs coincide, as in the released code (reproduced, not fixed). A constant output scale
(a buffer, set at initialisation so the soft tokens start at the RMS of the LLM's own token
embeddings) keeps the frozen model in its input range at step 0.

Losses per train record i with its soft prompt prepended (no retrieval during training):
reliability and generality are hinge label losses (only target positions whose label
probability is below 1.2 × the best other token's contribute ``-log p``), locality is
``KL(p_unedited || p_with_prompt)`` over the vocabulary at the locality answer's positions.
The query–key (retrieval) module is trained contrastively on the same split in
:mod:`.retrieval` (L_q1 + L_q2 + L_q3); it shares no trainable parameter with this one
(the sentence encoder is frozen), so summing the losses in one objective, as the paper does,
and training the two parts separately give the same gradients for each part.

Token construction follows spec §2.1 (reimplemented here because methods may not import
the benchmark's environment package).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from harness.models.weights import cache_root

TRAIN_VERSION = "medrek-pe-1"
DEFAULT_TOKENS = 3  # T for Meditron / ChatDoctor configs (spec §4.3)
DEFAULT_HEADS = 8
EDIT_HINGE = 1.2  # e in spec §4.5

TrainRecord = tuple[str, str, str, str, str]
"""(edit prompt, paraphrase, locality prompt, target_new, locality answer)."""


class Encoder(Protocol):
    """The frozen sentence encoder (MiniLM in practice)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class TrainConfig:
    """Settings that determine the trained weights (all part of the cache key)."""

    steps: int = 30
    batch_size: int = 4
    lr: float = 1e-3
    seed: int = 1
    n_tokens: int = DEFAULT_TOKENS
    # bfloat16 autocast for the frozen LLM's passes: on by default only where the CPU has
    # bf16 instructions (AMX, AVX-512-BF16); elsewhere torch emulates bf16 and a step of
    # the 135M model took ~80 s instead of ~1 s in float32 (an AVX2-only host, 2026-12-04)
    bf16: bool = field(default_factory=lambda: native_bf16())


def sentence(prompt: str, target: str) -> str:
    """Knowledge sentence (spec §4.2): prompt + " " + target, no double space."""
    return f"{prompt.rstrip()} {target.strip()}"


def forced(tokenizer: Any, prompt: str, target: str) -> tuple[list[int], list[int], list[int]]:
    """Spec §2.1 teacher forcing: (inputs, labels, mask) for prompt → target."""
    target = target if target.startswith(" ") else " " + target
    n_prompt = len(tokenizer(prompt).input_ids)
    ids = list(tokenizer(prompt + target).input_ids)
    if len(ids) < 2 or n_prompt >= len(ids):
        raise ValueError(f"target {target!r} adds no tokens after prompt {prompt!r}")
    inputs, labels = ids[:-1], ids[1:]
    return inputs, labels, [1 if j >= n_prompt - 1 else 0 for j in range(len(inputs))]


def _heads(hidden: int) -> int:
    for h in range(DEFAULT_HEADS, 0, -1):
        if hidden % h == 0:
            return h
    return 1


class PromptModules(torch.nn.Module):
    """``k``-head (value) plus attention prompt encoder: features ``[B, F]`` → ``[B, T, D]``."""

    scale: torch.Tensor

    def __init__(self, feat_dim: int, hidden: int, n_tokens: int = DEFAULT_TOKENS) -> None:
        super().__init__()
        self.n_tokens, self.hidden = n_tokens, hidden
        self.k_in = torch.nn.Linear(feat_dim, hidden)
        self.k_res = torch.nn.Linear(hidden, hidden)
        self.to_q = torch.nn.Linear(hidden, n_tokens * hidden)
        self.to_k = torch.nn.Linear(hidden, hidden)
        self.to_v = torch.nn.Linear(hidden, hidden)
        self.attn = torch.nn.MultiheadAttention(hidden, _heads(hidden), batch_first=True)
        self.register_buffer("scale", torch.ones(()))

    def value(self, feats: torch.Tensor) -> torch.Tensor:
        """The ``k``-head: Linear, then a residual ReLU layer."""
        h = self.k_in(feats)
        return h + torch.relu(self.k_res(h))

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        """Soft prompts for a batch of knowledge-sentence features."""
        v = self.value(feats)
        q = self.to_q(v).view(v.shape[0], self.n_tokens, self.hidden)
        out, _ = self.attn(q, self.to_k(v)[:, None], self.to_v(v)[:, None], need_weights=False)
        return out * self.scale

    def calibrate(self, feats: torch.Tensor, target_rms: float) -> None:
        """Set the output scale so soft tokens start at ``target_rms`` (the embeddings' RMS)."""
        with torch.no_grad():
            self.scale.copy_(torch.ones(()))
            rms = float(self.forward(feats).pow(2).mean().sqrt())
            self.scale.copy_(torch.tensor(target_rms / max(rms, 1e-12)))


def base_model(model: Any) -> Any:
    """The decoder stack inside an HF causal LM (``model.model`` for Llama-style models)."""
    inner = getattr(model, "model", None) or getattr(model, "transformer", None)
    if inner is None:
        raise TypeError(f"{type(model).__name__}: no .model/.transformer decoder to hook")
    return inner


def model_identity(model: Any) -> dict[str, Any]:
    """What identifies the frozen LLM in the cache key: its config and a weight fingerprint."""
    config = model.config
    emb = model.get_input_embeddings().weight
    with torch.no_grad():
        probe = emb[: min(64, emb.shape[0])].sum(dtype=torch.float64).item()
    return {"name": str(getattr(config, "_name_or_path", "")), "type": config.model_type,
            "hidden": int(config.hidden_size), "layers": int(config.num_hidden_layers),
            "vocab": int(emb.shape[0]), "fingerprint": round(float(probe), 6)}


def cache_key(model: Any, records: Sequence[TrainRecord], config: TrainConfig,
              encoder_name: str) -> str:
    """Content key of a trained encoder."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"v": TRAIN_VERSION, "model": model_identity(model),
                              "config": asdict(config), "encoder": encoder_name},
                             sort_keys=True).encode())
    for r in records:
        digest.update("\x1f".join(r).encode() + b"\x1e")
    return digest.hexdigest()[:20]


def _hidden_at(model: Any, soft: torch.Tensor | None, rows: list[list[int]], pad_id: int,
               masks: list[list[int]]) -> torch.Tensor:
    """Final hidden states at the masked positions of right-padded rows (soft prompt first)."""
    width = max(len(r) for r in rows)
    ids = torch.tensor([r + [pad_id] * (width - len(r)) for r in rows], dtype=torch.long,
                       device=model.device)
    embeds = model.get_input_embeddings()(ids)
    n_soft = 0
    if soft is not None:
        n_soft = soft.shape[1]
        embeds = torch.cat([soft.to(embeds.dtype), embeds], dim=1)
    hidden = base_model(model)(inputs_embeds=embeds).last_hidden_state[:, n_soft:]
    picks = [(b, j) for b, m in enumerate(masks) for j, on in enumerate(m) if on]
    index_b = torch.tensor([b for b, _ in picks], device=hidden.device)
    index_j = torch.tensor([j for _, j in picks], device=hidden.device)
    return hidden[index_b, index_j]


def hinge_label_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Spec §4.5: ``-log p(label)`` over positions where p(label) < 1.2 × best other p."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    lab = logp.gather(1, labels[:, None])[:, 0]
    others = logp.scatter(1, labels[:, None], float("-inf")).max(dim=1).values
    keep = lab.exp() < EDIT_HINGE * others.exp()
    if not bool(keep.any()):
        return logits.sum() * 0.0
    return -lab[keep].mean()


def kl_loss(pre_logits: torch.Tensor, post_logits: torch.Tensor) -> torch.Tensor:
    """``KL(p_pre || p_post)`` summed over the vocabulary, averaged over positions."""
    pre = torch.log_softmax(pre_logits.float(), dim=-1)
    post = torch.log_softmax(post_logits.float(), dim=-1)
    return (pre.exp() * (pre - post)).sum(-1).mean()


@dataclass
class TrainReport:
    """What one training run did (kept beside the weights)."""

    key: str
    steps: int
    records: int
    cpu_seconds: float
    wall_seconds: float
    losses: list[dict[str, float]]
    cached: bool = False
    weights_digest: str = ""  # content digest of the trained weights (what the key cannot say)
    platform: str = ""  # the CPU and torch that trained them (bf16 kernels differ by ISA)


def weights_digest(modules: PromptModules) -> str:
    """SHA-256 prefix of the trained weights' bytes.

    The cache key names what *should* determine the weights; bf16 autocast on different
    CPUs (AMX on one host, AVX-512-BF16 on another) rounds differently, so one key can
    name different encoders on different machines. Two runs used the same encoder exactly
    when their digests match."""
    digest = hashlib.sha256()
    for name, tensor in sorted(modules.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().to(torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def cpu_flags() -> set[str]:
    """The instruction-set flags of this CPU (empty where /proc/cpuinfo is missing)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "flags":
                return set(value.split())
    return set()


def native_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (AMX or AVX-512-BF16)."""
    return bool({"amx_bf16", "avx512_bf16"} & cpu_flags())


def compute_platform() -> str:
    """The CPU model, its bf16-relevant instruction sets and the torch version."""
    import platform

    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                model = value.strip()
                break
    flags = cpu_flags()
    isa = [f for f in ("amx_bf16", "avx512_bf16", "avx512f", "avx2") if f in flags]
    return f"{model}; {','.join(isa) or 'no avx2'}; torch {torch.__version__}"


class _Frozen:
    """Context: the LLM's parameters stop requiring grad; restored on exit."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.flags: list[bool] = []

    def __enter__(self) -> None:
        self.flags = [p.requires_grad for p in self.model.parameters()]
        for p in self.model.parameters():
            p.requires_grad_(False)

    def __exit__(self, *exc: object) -> None:
        for p, flag in zip(self.model.parameters(), self.flags, strict=True):
            p.requires_grad_(flag)


def train_modules(model: Any, tokenizer: Any, records: Sequence[TrainRecord],
                  encoder: Encoder, config: TrainConfig = TrainConfig(),
                  log_every: int = 0,
                  on_step: Callable[[int, PromptModules, list[dict[str, float]]], None]
                  | None = None,
                  ) -> tuple[PromptModules, TrainReport]:
    """Train a fresh :class:`PromptModules` through the frozen ``model`` (spec §4.5).

    ``on_step(steps_done, modules, losses_so_far)`` is called before the first step (0) and
    after every step, so a caller can score the encoder along one run (a training-budget
    curve) instead of retraining per budget. It must leave the modules unchanged (score
    under no-grad). Nothing random is drawn between steps, so the modules after ``c`` steps
    are exactly those of a run with ``steps=c`` (:func:`store_trained` can cache them)."""
    if len(records) < 1:
        raise ValueError("MedREK training needs at least one train record")
    bad = [r for r in records if len(r) != 5]
    if bad:
        raise ValueError("MedREK trains on (prompt, paraphrase, locality prompt, target_new, "
                         f"locality answer) records; got a record of {len(bad[0])} fields")
    torch.manual_seed(config.seed)
    gen = torch.Generator().manual_seed(config.seed)
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    feats = torch.from_numpy(np.asarray(encoder.encode([sentence(r[0], r[3]) for r in records]),
                                        dtype=np.float32))
    rel = [forced(tokenizer, r[0], r[3]) for r in records]
    gen_ = [forced(tokenizer, r[1], r[3]) for r in records]
    loc = [forced(tokenizer, r[2], r[4]) for r in records]
    hidden = int(model.config.hidden_size)
    modules = PromptModules(feats.shape[1], hidden, config.n_tokens)
    emb_rms = float(model.get_input_embeddings().weight.detach().float().pow(2).mean().sqrt())
    modules.calibrate(feats[: min(64, len(records))], emb_rms)
    opt = torch.optim.Adam([p for p in modules.parameters() if p.requires_grad], lr=config.lr)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else \
        tokenizer.eos_token_id
    head = model.get_output_embeddings()
    b = min(config.batch_size, len(records))
    losses: list[dict[str, float]] = []
    order = torch.randperm(len(records), generator=gen)
    cursor = 0
    with _Frozen(model):
        if on_step is not None:
            on_step(0, modules, losses)
        for step in range(config.steps):
            if cursor + b > len(records):
                order, cursor = torch.randperm(len(records), generator=gen), 0
            idx = order[cursor:cursor + b].tolist()
            cursor += b
            soft = modules(feats[idx])  # [b, T, D]
            groups = [rel, gen_, loc]
            rows = [g[i][0] for g in groups for i in idx]
            masks = [g[i][2] for g in groups for i in idx]
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=config.bf16):
                h = _hidden_at(model, soft.repeat(3, 1, 1), rows, pad, masks)
                logits = head(h).float()
                with torch.no_grad():
                    h_pre = _hidden_at(model, None, [loc[i][0] for i in idx], pad,
                                       [loc[i][2] for i in idx])
                    pre_logits = head(h_pre).float()
            counts = [sum(sum(g[i][2]) for i in idx) for g in groups]
            l_rel_logits, l_gen_logits, l_loc_logits = torch.split(logits, counts)
            labels = [torch.tensor([y for i in idx for y, m in zip(g[i][1], g[i][2],
                                                                   strict=True) if m])
                      for g in groups[:2]]
            l_rel = hinge_label_loss(l_rel_logits, labels[0])
            l_gen = hinge_label_loss(l_gen_logits, labels[1])
            l_loc = kl_loss(pre_logits, l_loc_logits)
            loss = l_rel + l_gen + l_loc
            opt.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            opt.step()
            losses.append({"step": float(step), "rel": float(l_rel.detach()),
                           "gen": float(l_gen.detach()), "loc": float(l_loc.detach())})
            if log_every and (step % log_every == 0 or step == config.steps - 1):
                print(f"medrek step {step}: rel {float(l_rel.detach()):.3f} "
                      f"gen {float(l_gen.detach()):.3f} "
                      f"loc {float(l_loc.detach()):.4f}", flush=True)
            if on_step is not None:
                on_step(step + 1, modules, losses)
    modules.eval()
    report = TrainReport("", config.steps, len(records), time.process_time() - start_cpu,
                         time.perf_counter() - start_wall, losses,
                         weights_digest=weights_digest(modules), platform=compute_platform())
    return modules, report


def cache_dir() -> Path:
    """Where trained encoders live."""
    return cache_root() / "medrek"


def trained_modules(model: Any, tokenizer: Any, records: Sequence[TrainRecord],
                    encoder: Encoder, config: TrainConfig = TrainConfig(),
                    encoder_name: str = "minilm-l6", folder: Path | None = None,
                    log_every: int = 0) -> tuple[PromptModules, TrainReport]:
    """The trained encoder for this model, split and config: from the cache, or trained now
    and written there (weights ``<key>.pt`` and the run's report ``<key>.json``)."""
    key = cache_key(model, records, config, encoder_name)
    folder = folder or cache_dir()
    weights, meta = folder / f"{key}.pt", folder / f"{key}.json"
    if weights.is_file() and meta.is_file():
        state = torch.load(weights, map_location="cpu", weights_only=True)
        info = json.loads(meta.read_text())
        modules = PromptModules(int(info["feat_dim"]), int(model.config.hidden_size),
                                config.n_tokens)
        modules.load_state_dict(state)
        modules.eval()
        saved = info["report"]
        report = TrainReport(**{k: saved[k] for k in ("key", "steps", "records", "cpu_seconds",
                                                      "wall_seconds", "losses")},
                             cached=True, weights_digest=weights_digest(modules),
                             platform=str(saved.get("platform", "")))
        return modules, report
    modules, report = train_modules(model, tokenizer, records, encoder, config, log_every)
    store_trained(modules, report, model, records, config, encoder_name, folder)
    return modules, report


def store_trained(modules: PromptModules, report: TrainReport, model: Any,
                  records: Sequence[TrainRecord], config: TrainConfig,
                  encoder_name: str = "minilm-l6", folder: Path | None = None) -> str:
    """Write trained modules to the cache under their content key (sets ``report.key``);
    :func:`trained_modules` with the same arguments then loads them instead of training."""
    key = cache_key(model, records, config, encoder_name)
    report.key = key
    folder = folder or cache_dir()
    weights, meta = folder / f"{key}.pt", folder / f"{key}.json"
    folder.mkdir(parents=True, exist_ok=True)
    tmp = weights.with_suffix(".pt.tmp")
    torch.save(modules.state_dict(), tmp)
    tmp.replace(weights)
    meta.write_text(json.dumps({"feat_dim": modules.k_in.in_features, "config": asdict(config),
                                "model": model_identity(model), "encoder": encoder_name,
                                "report": asdict(report)}, indent=1))
    return key
