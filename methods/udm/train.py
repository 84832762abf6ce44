"""Pretraining of the denoiser, the GRPO loop (naive or UDM-GRPO), checkpoints and resume.

:func:`run` is the whole experiment of one cell: pretrain a :class:`~methods.udm.diffusion.
Denoiser` on the corpus (cached per corpus, options and seed, so the two algorithms of a seed
start from the very same model), fine-tune it with GRPO for ``rl_steps`` steps, then sample
``n_eval`` strings from the pretrained and from the fine-tuned model with the same evaluation
generator. Everything is seeded and single-threaded, so the same inputs, options and seed
give the same numbers.

Resumable: the RL state (model, optimiser, generator state, the per-step log, CPU seconds so
far) is written atomically to ``<cache>/runs/<key>/state.pt`` every ``ckpt_every`` steps; a
run killed part-way continues from its last checkpoint when started again and ends with the
same numbers as an uninterrupted run. A finished run leaves ``result.json`` there, which a
later call returns without training (``python -m methods.udm.curves`` reads these).
The cache is ``config["cache_dir"]`` or ``$EVALSUITE_CACHE/udm`` (``~/.cache/evalsuite/udm``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

# Adam's first step imports torch._dynamo; under the method task's tracemalloc that lazy
# import costs ~7 CPU-s and ~30 s wall, so it is paid when this module loads instead.
import torch
import torch._dynamo  # noqa: F401

from methods.udm.diffusion import Denoiser, alpha, q_sample, sample, time_grid
from methods.udm.grpo import (
    clipped_surrogate,
    group_advantages,
    naive_batch,
    naive_logprobs,
    udm_batch,
    udm_logprobs,
)
from methods.udm.reward import (
    check_constraints,
    constraint_rewards,
    transition_set,
    within_transitions,
)

__all__ = ["ALGOS", "UDMConfig", "World", "cache_dir", "pretrain", "run", "run_key", "stability",
           "train_rl"]

ALGOS = ("naive", "udm")
VERSION = "1"
STATE_FILE = "state.pt"
RESULT_FILE = "result.json"
EVAL_SEED_OFFSET = 7919
PROBE_SEED_OFFSET = 104729
PROBE_ALPHAS = (0.25, 0.5, 0.75)


@dataclass(frozen=True)
class UDMConfig:
    """Every option of a run (defaults: the study's sizes; ~10 CPU-s of RL per run, ~14 of
    pretraining)."""

    algo: str = "udm"
    schedule: str = "linear"
    hidden: int = 256
    depth: int = 3
    pretrain_steps: int = 3000
    pretrain_batch: int = 128
    pretrain_lr: float = 2e-3
    rl_steps: int = 200
    group: int = 32
    sample_steps: int = 10
    recon_k: int = 0
    """Reconstructions per sample (UDM-GRPO); 0 = ``sample_steps`` (the equal budget)."""
    lr: float = 1e-3
    clip_eps: float = 0.2
    epochs: int = 2
    max_grad_norm: float = 1.0
    ckpt_every: int = 25
    probe_every: int = 10
    n_probe: int = 128
    n_eval: int = 512
    threads: int = 1

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any]) -> UDMConfig:
        """Options as given (unknown keys and bad values are errors; ``cache_dir`` and
        ``method``-task keys that are not run options are ignored)."""
        known = {f.name: f for f in fields(cls)}
        ignored = {"cache_dir"}
        unknown = sorted(set(options) - set(known) - ignored)
        if unknown:
            raise ValueError(f"unknown UDM options {unknown}; known: {sorted(known)}")
        values: dict[str, Any] = {}
        for name, value in options.items():
            if name in ignored:
                continue
            kind = type(getattr(cls(), name))
            try:
                values[name] = kind(value)
            except (TypeError, ValueError):
                raise ValueError(f"UDM option {name}={value!r} is not a {kind.__name__}") from None
        cfg = cls(**values)
        if cfg.algo not in ALGOS:
            raise ValueError(f"algo must be one of {ALGOS}, got {cfg.algo!r}")
        for name in ("pretrain_steps", "rl_steps", "group", "sample_steps", "epochs",
                     "ckpt_every", "probe_every", "n_probe", "n_eval", "threads", "hidden",
                     "depth", "pretrain_batch"):
            if getattr(cfg, name) < (0 if name in ("pretrain_steps", "rl_steps") else 1):
                raise ValueError(f"UDM option {name} must be positive, got {getattr(cfg, name)}")
        if cfg.group < 2:
            raise ValueError("group must be at least 2 (advantages are group-relative)")
        alpha(torch.zeros(1), cfg.schedule)  # validates the schedule name
        return cfg

    @property
    def k(self) -> int:
        """Reconstructions per sample actually used."""
        return self.recon_k or self.sample_steps


@dataclass(frozen=True)
class World:
    """What a method is given: vocabulary size, string length, corpus, constraints."""

    vocab: int
    length: int
    corpus: torch.Tensor
    constraints: tuple[Mapping[str, Any], ...]

    @classmethod
    def from_inputs(cls, inputs: Mapping[str, Any]) -> World:
        """Check and convert a method task's inputs."""
        missing = sorted({"vocab", "length", "corpus", "constraints"} - set(inputs))
        if missing:
            raise ValueError(f"UDM inputs lack {missing}")
        vocab, length = int(inputs["vocab"]), int(inputs["length"])
        corpus = torch.tensor([list(map(int, s)) for s in inputs["corpus"]], dtype=torch.long)
        if corpus.dim() != 2 or corpus.shape[1] != length or corpus.shape[0] < 2:
            raise ValueError(f"corpus must be at least 2 strings of length {length}")
        if int(corpus.min()) < 0 or int(corpus.max()) >= vocab:
            raise ValueError(f"corpus tokens must be in 0..{vocab - 1}")
        constraints = tuple(dict(c) for c in inputs["constraints"])
        check_constraints(constraints, vocab, length)
        return cls(vocab, length, corpus, constraints)

    def digest(self) -> str:
        """A hash of the world's content (part of every cache key)."""
        blob = json.dumps({"v": self.vocab, "l": self.length, "c": self.corpus.tolist(),
                           "k": list(self.constraints)}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()


def cache_dir(options: Mapping[str, Any]) -> Path:
    """``options["cache_dir"]``, else ``$EVALSUITE_CACHE/udm`` (``~/.cache/evalsuite/udm``)."""
    if options.get("cache_dir"):
        return Path(str(options["cache_dir"]))
    env = os.environ.get("EVALSUITE_CACHE")
    return (Path(env).expanduser() if env else Path.home() / ".cache" / "evalsuite") / "udm"


def _key(payload: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def _pretrain_key(world: World, cfg: UDMConfig, seed: int) -> str:
    opts = {k: getattr(cfg, k) for k in ("schedule", "hidden", "depth", "pretrain_steps",
                                         "pretrain_batch", "pretrain_lr")}
    return _key({"v": VERSION, "world": world.digest(), "opts": opts, "seed": seed})


def run_key(world: World, cfg: UDMConfig, seed: int) -> str:
    """The cache key of one run (world, every option but ``threads``, seed)."""
    opts = {k: v for k, v in asdict(cfg).items() if k != "threads"}
    return _key({"v": VERSION, "world": world.digest(), "opts": opts, "seed": seed})


@contextlib.contextmanager
def _threads(n: int) -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _atomic_save(obj: Any, path: Path) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _atomic_write(text: str, path: Path) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _new_model(world: World, cfg: UDMConfig, seed: int) -> Denoiser:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Denoiser(world.vocab, world.length, cfg.hidden, cfg.depth)


def pretrain(world: World, cfg: UDMConfig, seed: int, cache: Path) -> tuple[Denoiser, float]:
    """The pretrained denoiser and its training CPU seconds (cached: built once per world,
    pretraining options and seed): x0-prediction cross-entropy on forward-noised corpus
    strings at ``tau ~ U(0, 1)``, Adam, constant learning rate."""
    path = cache / "pretrain" / f"{_pretrain_key(world, cfg, seed)}.pt"
    model = _new_model(world, cfg, seed)
    if path.exists():
        saved = torch.load(path, weights_only=True)
        model.load_state_dict(saved["model"])
        return model, float(saved["cpu_s"])
    start = time.process_time()
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.pretrain_lr)
    n = world.corpus.shape[0]
    for _ in range(cfg.pretrain_steps):
        x0 = world.corpus[torch.randint(0, n, (cfg.pretrain_batch,), generator=gen)]
        a = alpha(torch.rand(cfg.pretrain_batch, generator=gen), cfg.schedule)
        xt = q_sample(x0, a, world.vocab, gen)
        logits = model(xt, a)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, world.vocab), x0.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    cpu = time.process_time() - start
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_save({"model": model.state_dict(), "cpu_s": cpu}, path)
    return model, cpu


class _Probe:
    """KL(p_theta || p_ref) of the clean-token prediction on fixed forward-noised corpus
    strings (mean over probe strings of the sum over positions): how far RL moved the model
    from the pretrained one on the pretraining distribution."""

    def __init__(self, ref: Denoiser, world: World, cfg: UDMConfig, seed: int) -> None:
        gen = torch.Generator().manual_seed(seed + PROBE_SEED_OFFSET)
        x0 = world.corpus[:cfg.n_probe]
        self.a = torch.tensor(PROBE_ALPHAS).repeat_interleave(x0.shape[0])
        self.xt = q_sample(x0.repeat(len(PROBE_ALPHAS), 1), self.a, world.vocab, gen)
        with torch.no_grad():
            self.ref = torch.log_softmax(ref(self.xt, self.a), dim=-1)

    @torch.no_grad()
    def kl(self, model: Denoiser) -> float:
        logp = torch.log_softmax(model(self.xt, self.a), dim=-1)
        return float((logp.exp() * (logp - self.ref)).sum(-1).sum(-1).mean())


def _sample_metrics(x: torch.Tensor, world: World, seen: torch.Tensor) -> dict[str, float]:
    r = constraint_rewards(world.constraints, x)
    return {"reward": float(r.mean()), "reward_std": float(r.std(unbiased=False)),
            "solved": float((r >= 1.0 - 1e-9).float().mean()),
            "in_corpus_transitions": float(within_transitions(x, seen).float().mean()),
            "unique": len({tuple(s) for s in x.tolist()}) / x.shape[0]}


def train_rl(model: Denoiser, world: World, cfg: UDMConfig, seed: int, run_dir: Path,
             on_step: Callable[[int], None] | None = None) -> list[dict[str, float]]:
    """GRPO fine-tuning of ``model`` in place; returns the per-step log. Resumes from
    ``run_dir/state.pt`` if present. ``on_step(step)`` runs after each step (and after its
    checkpoint): tests raise from it to simulate a kill."""
    probe = _Probe(model, world, cfg, seed)
    seen = transition_set(world.corpus, world.vocab)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(seed + 1)
    rows: list[dict[str, float]] = []
    cpu_before, first = 0.0, 1
    state_path = run_dir / STATE_FILE
    if state_path.exists():
        state = torch.load(state_path, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        gen.set_state(state["gen"])
        rows, cpu_before, first = list(state["rows"]), float(state["cpu_s"]), state["step"] + 1
    recon_alphas = alpha(time_grid(cfg.k)[:-1], cfg.schedule)
    clock = time.process_time()
    for step in range(first, cfg.rl_steps + 1):
        rollout = sample(model, cfg.group, cfg.sample_steps, gen, cfg.schedule)
        x0 = rollout.final
        rewards = constraint_rewards(world.constraints, x0)
        adv = group_advantages(rewards)
        if cfg.algo == "naive":
            batch = naive_batch(model, rollout, adv)
            logprobs = naive_logprobs
        else:
            batch = udm_batch(model, x0, recon_alphas, adv, gen)
            logprobs = udm_logprobs
        losses, norms, ratios = [], [], []
        for _ in range(cfg.epochs):
            logp = logprobs(model, batch)
            loss = clipped_surrogate(logp, batch["logp_old"], batch["adv"], cfg.clip_eps)
            opt.zero_grad()
            loss.backward()
            norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(),
                                                              cfg.max_grad_norm)))
            opt.step()
            losses.append(float(loss.detach()))
            ratios.append(float((logp.detach() - batch["logp_old"]).abs().max()))
        row = {"step": float(step), **_sample_metrics(x0, world, seen),
               "loss": losses[-1], "grad_norm": max(norms), "log_ratio_max": max(ratios),
               "cpu_s": cpu_before + time.process_time() - clock}
        if step % cfg.probe_every == 0 or step == cfg.rl_steps:
            row["kl_ref"] = probe.kl(model)
        rows.append(row)
        if step % cfg.ckpt_every == 0 and step < cfg.rl_steps:
            run_dir.mkdir(parents=True, exist_ok=True)
            _atomic_save({"model": model.state_dict(), "opt": opt.state_dict(),
                          "gen": gen.get_state(), "rows": rows, "step": step,
                          "cpu_s": row["cpu_s"]}, state_path)
        if on_step is not None:
            on_step(step)
    return rows


def _final_samples(model: Denoiser, cfg: UDMConfig, seed: int) -> list[list[int]]:
    gen = torch.Generator().manual_seed(seed + EVAL_SEED_OFFSET)
    return sample(model, cfg.n_eval, cfg.sample_steps, gen, cfg.schedule).final.tolist()


def run(inputs: Mapping[str, Any], options: Mapping[str, Any], seed: int,
        on_step: Callable[[int], None] | None = None) -> dict[str, Any]:
    """One cell: pretrain (cached), GRPO with ``options["algo"]``, evaluate; the outputs
    (final samples before/after RL, the per-step log, CPU seconds, the options) are cached in
    ``result.json`` and returned from there on a later call."""
    cfg = UDMConfig.from_mapping(options)
    world = World.from_inputs(inputs)
    cache = cache_dir(options)
    run_dir = cache / "runs" / run_key(world, cfg, seed)
    result_path = run_dir / RESULT_FILE
    if result_path.exists():
        cached: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
        return cached
    with _threads(cfg.threads):
        model, pre_cpu = pretrain(world, cfg, seed, cache)
        before = _final_samples(model, cfg, seed)
        rows = train_rl(model, world, cfg, seed, run_dir, on_step)
        start = time.process_time()
        after = _final_samples(model, cfg, seed)
        eval_cpu = time.process_time() - start
    out = {"algo": cfg.algo, "seed": seed, "options": asdict(cfg), "world": world.digest(),
           "samples": after, "samples_before": before, "curve": rows,
           "pretrain_cpu_s": pre_cpu, "train_cpu_s": rows[-1]["cpu_s"] if rows else 0.0,
           "eval_cpu_s": eval_cpu}
    run_dir.mkdir(parents=True, exist_ok=True)
    _atomic_write(json.dumps(out) + "\n", result_path)
    (run_dir / STATE_FILE).unlink(missing_ok=True)
    return out


def stability(curve: Sequence[Mapping[str, float]], window: int = 20) -> dict[str, float]:
    """Stability of one training curve: the reward's step-to-step oscillation (std of the
    first difference), the drawdown from its running peak to the end (``collapse``) and the
    mean reward of the first and last ``window`` steps."""
    r = torch.tensor([row["reward"] for row in curve], dtype=torch.float64)
    if r.numel() == 0:
        return {}
    w = min(window, r.numel())
    peak = torch.cummax(r, dim=0).values
    smooth = torch.tensor([float(r[max(0, i - w + 1):i + 1].mean()) for i in range(r.numel())],
                          dtype=torch.float64)
    return {"oscillation": float((r[1:] - r[:-1]).std()) if r.numel() > 2 else 0.0,
            "collapse": float(torch.cummax(smooth, 0).values[-1] - smooth[-1]),
            "reward_first": float(r[:w].mean()), "reward_last": float(r[-w:].mean()),
            "reward_peak": float(peak[-1])}
