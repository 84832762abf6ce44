"""A tiny byte-level decoder LM trained on CPU, saved as a stock transformers Llama folder.

The model is ``LlamaForCausalLM`` (RoPE, RMSNorm, SwiGLU, tied embeddings) with a byte
vocabulary: token ``b`` is byte ``b`` (0..255), then ``<|bos|>`` 256, ``<|eos|>`` 257 and
``<|pad|>`` 258. ``n_heads`` query heads share ``n_kv_heads`` key/value heads (MHA when
equal, GQA, MQA at 1). QKV projection sharing (``sharing``):

* ``qkv``: separate Q, K, V projections;
* ``q-kv``: K=V, one projection used as both keys and values (RoPE rotates the keys only);
* ``qk-v``: Q=K, the key projection also makes the queries: query head ``h`` is key head
  ``h // (n_heads / n_kv_heads)`` (the head that GQA pairs it with);
* ``q=k=v``: one projection for all three.

Training ties the shared projections to one parameter (:class:`SharedProjection` reads the
key projection's weight). The saved folder is a plain Llama checkpoint whose shared
projections are stored as exact copies, and whose ``config.json`` records
``qkv_sharing`` (:func:`harness.models.arch.kv_bytes_per_token` counts K=V once). Why a
stock architecture rather than a registered custom class or ``auto_map`` + remote code: the
product then loads with ``AutoModelForCausalLM.from_pretrained(DIR)`` everywhere —
``whitebox/ -M model_path=DIR``, Inspect's ``hf/`` and ``vllm/`` — offline, with no code
executed from the folder and no import a provider must remember, and ``generate`` uses
transformers' own KV cache (the passkey and induction probes decode normally). The cost:
the runtime cache of a loaded product holds K and V separately even when equal; the
KV-bytes metric is the architecture's (what a K=V-aware kernel stores).

Reproducible by seed: ``torch.manual_seed(seed)`` before the model is built, a seeded
generator for the batches, deterministic algorithms and ``threads`` CPU threads (default
1), so the same seed gives bit-identical weights on one machine and torch build.

FLOPs (``train_log.jsonl``): the exact multiply-add count of the matrix products a step
runs, 2 per multiply-add — the distinct projections (a shared one is computed once), the
attention scores and weighted values over the full ``T x T`` window (dense, as computed),
the MLP and the output head — times 3 for forward plus backward. Norms, RoPE, softmax and
the embedding lookup are not counted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

BOS, EOS, PAD = 256, 257, 258
VOCAB = 259
SPECIALS = {"<|bos|>": BOS, "<|eos|>": EOS, "<|pad|>": PAD}
SHARING = ("qkv", "q-kv", "qk-v", "q=k=v")
CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['content'] }}"
    "{% if not loop.last %}\n{% endif %}{% endfor %}"
)
"""Chat messages are the plain concatenation of their contents: a byte LM has no roles, and
the probes' prompts (a passkey context, an induction sequence) must reach it verbatim."""

__all__ = ["BOS", "EOS", "PAD", "SHARING", "VOCAB", "NextBatch", "TinyConfig", "build_model",
           "cosine_lr", "deterministic", "export", "make_optimizer", "save", "save_tokenizer",
           "step_flops", "text_bytes", "train", "train_steps", "trained_parameters",
           "window_batches"]


@dataclass(frozen=True)
class TinyConfig:
    """The architecture and training budget of one tiny LM."""

    d_model: int = 128
    n_layers: int = 6
    n_heads: int = 16
    n_kv_heads: int = 16
    ffn: int = 352
    sharing: str = "qkv"
    seq_len: int = 256
    batch: int = 8
    steps: int = 300
    lr: float = 3e-3
    warmup: int = 20
    weight_decay: float = 0.01
    threads: int = 1
    max_positions: int = 2048

    def __post_init__(self) -> None:
        if self.sharing not in SHARING:
            raise ValueError(f"sharing must be one of {', '.join(SHARING)}")
        if self.d_model % self.n_heads or self.n_heads % self.n_kv_heads:
            raise ValueError("d_model must divide by n_heads and n_heads by n_kv_heads")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def group(self) -> int:
        """Query heads per key/value head."""
        return self.n_heads // self.n_kv_heads


def llama_config(cfg: TinyConfig) -> Any:
    """The transformers ``LlamaConfig`` of ``cfg`` (with ``qkv_sharing`` recorded)."""
    from transformers import LlamaConfig

    config = LlamaConfig(
        vocab_size=VOCAB, hidden_size=cfg.d_model, intermediate_size=cfg.ffn,
        num_hidden_layers=cfg.n_layers, num_attention_heads=cfg.n_heads,
        num_key_value_heads=cfg.n_kv_heads, head_dim=cfg.head_dim,
        max_position_embeddings=cfg.max_positions, rms_norm_eps=1e-5,
        tie_word_embeddings=True, attention_bias=False, mlp_bias=False,
        bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD, initializer_range=0.02,
    )
    config.qkv_sharing = cfg.sharing
    return config


class SharedProjection(nn.Module):
    """A projection that reuses another one's weight (heads repeated ``repeat`` times, in
    the order GQA pairs query heads with key heads). The source is not a submodule, so the
    weight is one parameter, trained once."""

    def __init__(self, source: nn.Linear, repeat: int, head_dim: int) -> None:
        super().__init__()
        self.__dict__["source"] = source
        self.repeat = repeat
        self.head_dim = head_dim

    def materialised(self) -> torch.Tensor:
        """The weight this projection applies, ``[out, in]``."""
        weight: torch.Tensor = self.__dict__["source"].weight
        if self.repeat == 1:
            return weight
        heads = weight.shape[0] // self.head_dim
        per_head = weight.reshape(heads, self.head_dim, weight.shape[1])
        return per_head.repeat_interleave(self.repeat, dim=0).reshape(-1, weight.shape[1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.materialised())


def _share(model: Any, cfg: TinyConfig) -> None:
    for layer in model.model.layers:
        attn = layer.self_attn
        if cfg.sharing in ("q-kv", "q=k=v"):
            attn.v_proj = SharedProjection(attn.k_proj, 1, cfg.head_dim)
        if cfg.sharing in ("qk-v", "q=k=v"):
            attn.q_proj = SharedProjection(attn.k_proj, cfg.group, cfg.head_dim)


def build_model(cfg: TinyConfig, seed: int) -> Any:
    """The seeded training model: a Llama with the shared projections tied."""
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    model = LlamaForCausalLM(llama_config(cfg))
    _share(model, cfg)
    return model


def export(model: Any, cfg: TinyConfig) -> Any:
    """A plain ``LlamaForCausalLM`` equal to the training model, shared projections copied."""
    from transformers import LlamaForCausalLM

    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    for i, layer in enumerate(model.model.layers):
        for name in ("q_proj", "v_proj"):
            proj = getattr(layer.self_attn, name)
            if isinstance(proj, SharedProjection):
                state[f"model.layers.{i}.self_attn.{name}.weight"] = (
                    proj.materialised().detach().clone())
    plain = LlamaForCausalLM(llama_config(cfg))
    plain.load_state_dict(state, strict=True)
    plain.eval()
    return plain


def save_tokenizer(out: Path, max_length: int) -> None:
    """The byte tokenizer (token b = byte b, then the specials) as a fast HF tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    byte_chars = pre_tokenizers.ByteLevel.alphabet()
    # ByteLevel maps byte b to a printable character; give that character id b
    mapping = _bytes_to_unicode()
    vocab = {mapping[b]: b for b in range(256)}
    assert set(vocab) == set(byte_chars)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(list(SPECIALS))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|bos|>", eos_token="<|eos|>", pad_token="<|pad|>",
        model_max_length=max_length, chat_template=CHAT_TEMPLATE,
    )
    fast.save_pretrained(str(out))


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (what ``ByteLevel`` uses)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, chars), strict=True))


def step_flops(cfg: TinyConfig) -> int:
    """Exact matrix-product FLOPs of one training step (see the module docstring)."""
    d, hd, t = cfg.d_model, cfg.head_dim, cfg.seq_len
    q_out, kv_out = cfg.n_heads * hd, cfg.n_kv_heads * hd
    proj = kv_out  # keys always
    proj += 0 if cfg.sharing in ("qk-v", "q=k=v") else q_out
    proj += 0 if cfg.sharing in ("q-kv", "q=k=v") else kv_out
    per_token = 2 * d * proj + 2 * q_out * d  # projections in, output projection
    per_token += 2 * 3 * d * cfg.ffn  # gate, up, down
    per_token += 2 * 2 * t * q_out  # scores and weighted values over the window
    forward = cfg.n_layers * per_token + 2 * d * VOCAB
    return 3 * forward * t * cfg.batch


def trained_parameters(cfg: TinyConfig) -> int:
    """Distinct trained parameters (a shared projection counted once, embeddings tied)."""
    d, q_out, kv_out = cfg.d_model, cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    proj = kv_out
    proj += 0 if cfg.sharing in ("qk-v", "q=k=v") else q_out
    proj += 0 if cfg.sharing in ("q-kv", "q=k=v") else kv_out
    layer = d * proj + q_out * d + 3 * d * cfg.ffn + 2 * d
    return VOCAB * d + cfg.n_layers * layer + d


def _lr(step: int, cfg: TinyConfig) -> float:
    if step <= cfg.warmup:
        return cfg.lr * step / max(cfg.warmup, 1)
    progress = (step - cfg.warmup) / max(cfg.steps - cfg.warmup, 1)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))


StepLog = Callable[..., None]
NextBatch = Callable[[int], tuple[torch.Tensor, torch.Tensor]]
"""``next_batch(step) -> (inputs, targets)``, both ``[batch, seq_len]`` long tensors: the
data a training step sees. A recipe swaps the data (procedural sequences first, a copy task)
without touching the loop."""


@contextmanager
def deterministic(threads: int) -> Iterator[None]:
    """``threads`` CPU threads and torch's deterministic algorithms inside the block; the
    caller's settings come back after it (so a recipe cannot leak them into a test)."""
    before = torch.get_num_threads()
    was_deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(before)
        torch.use_deterministic_algorithms(was_deterministic)


def text_bytes(text: str, seq_len: int) -> torch.Tensor:
    """The UTF-8 bytes of ``text`` as a ``uint8`` tensor (an error if under one window)."""
    data = torch.frombuffer(bytearray(text.encode("utf-8")), dtype=torch.uint8)
    if data.numel() <= seq_len + 1:
        raise ValueError("the training text is shorter than one window")
    return data


def window_batches(data: torch.Tensor, cfg: TinyConfig, seed: int) -> NextBatch:
    """Random ``seq_len`` windows of ``data``, each after ``<|bos|>``, from a generator
    seeded by ``seed`` (the step argument is ignored: the stream is the seed's)."""
    gen = torch.Generator().manual_seed(seed)
    offsets = torch.arange(cfg.seq_len)

    def next_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        starts = torch.randint(0, data.numel() - cfg.seq_len, (cfg.batch, 1), generator=gen)
        target = data[starts + offsets].long()
        inputs = torch.cat([torch.full((cfg.batch, 1), BOS), target[:, :-1]], dim=1)
        return inputs, target

    return next_batch


def answer_batches(rows: list[tuple[list[int], list[int]]], batch: int,
                   gen: torch.Generator, width: int | None = None) -> NextBatch:
    """Supervised batches of (prompt, answer) token rows: next-token inputs, targets only
    on the answer tokens (-100 elsewhere), right-padded to ``width`` (default: the longest
    picked row). Rows are drawn with replacement from ``gen``, so one seed, one stream."""

    def next_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        picks = torch.randint(0, len(rows), (batch,), generator=gen).tolist()
        size = width or max(len(rows[i][0]) + len(rows[i][1]) for i in picks) - 1
        inputs = torch.full((batch, size), PAD, dtype=torch.long)
        target = torch.full((batch, size), -100, dtype=torch.long)
        for b, i in enumerate(picks):
            prompt, answer = rows[i]
            seq = prompt + answer
            inputs[b, :len(seq) - 1] = torch.tensor(seq[:-1])
            target[b, len(prompt) - 1:len(seq) - 1] = torch.tensor(answer)
        return inputs, target

    return next_batch


def json_object(text: str) -> dict[str, Any]:
    """A JSON object given as text (task arguments in a recipe option); a clear error else."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"task arguments {text!r} are not JSON: {err}") from None
    if not isinstance(value, dict):
        raise ValueError(f"task arguments {text!r} must be a JSON object")
    return value


def make_optimizer(model: Any, cfg: TinyConfig) -> torch.optim.Optimizer:
    """AdamW (betas 0.9/0.95), weight decay on matrices only."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    rest = [p for p in params if p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay},
         {"params": rest, "weight_decay": 0.0}],
        lr=cfg.lr, betas=(0.9, 0.95))


def cosine_lr(cfg: TinyConfig) -> Callable[[int], float]:
    """Linear warmup over ``warmup`` steps, then cosine decay to 10% at ``steps``."""
    return lambda step: _lr(step, cfg)


def train_steps(model: Any, opt: torch.optim.Optimizer, steps: range, next_batch: NextBatch,
                lr_at: Callable[[int], float], flops: int, log: StepLog | None = None,
                **extra: Any) -> None:
    """Run the optimiser over ``steps``: cross-entropy on ``next_batch(step)``, gradient norm
    clipped at 1, ``lr_at(step)`` set before each update; any causal LM whose output has
    ``.logits`` (the vocabulary is the logits' width). ``log(step=, loss=, tokens=,
    flops=, lr=, **extra)`` sees every step (``flops`` is the caller's per-step count, which
    changes when a recipe changes the architecture mid-run)."""
    params = [p for group in opt.param_groups for p in group["params"]]
    model.train()
    for step in steps:
        inputs, target = next_batch(step)
        lr = lr_at(step)
        for group in opt.param_groups:
            group["lr"] = lr
        logits = model(input_ids=inputs, use_cache=False).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if log is not None:
            log(step=step, loss=loss.item(), tokens=int(target.numel()), flops=flops, lr=lr,
                **extra)


def train(cfg: TinyConfig, text: str, seed: int, log: StepLog | None = None,
          next_batch: NextBatch | None = None) -> Any:
    """Train on ``text`` (UTF-8 bytes): random ``seq_len`` windows, each after ``<|bos|>``
    (or on ``next_batch``'s data when given); AdamW with warmup and cosine decay to 10%;
    gradient norm clipped at 1. Returns the exported plain Llama. ``log(step=, loss=,
    tokens=, flops=, lr=)`` sees every step."""
    with deterministic(cfg.threads):
        batches = next_batch or window_batches(text_bytes(text, cfg.seq_len), cfg, seed)
        model = build_model(cfg, seed)
        opt = make_optimizer(model, cfg)
        train_steps(model, opt, range(1, cfg.steps + 1), batches, cosine_lr(cfg),
                    step_flops(cfg), log)
        return export(model, cfg)


def save(model: Any, cfg: TinyConfig, out: Path) -> None:
    """Write the exported model, its generation config, the tokenizer and ``tinylm.json``."""
    from transformers import GenerationConfig

    model.save_pretrained(str(out))
    GenerationConfig(bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD).save_pretrained(
        str(out))
    save_tokenizer(out, cfg.max_positions)
    stored = sum(p.numel() for p in model.parameters())
    (out / "tinylm.json").write_text(json.dumps(
        {**asdict(cfg), "parameters_trained": trained_parameters(cfg),
         "parameters_stored": stored}, indent=2) + "\n")
