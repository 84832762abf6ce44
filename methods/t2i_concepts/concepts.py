"""Concept vectors added to the multi-modal attention heads (the paper) vs at a bottleneck
(the U-Net-era baseline), in a tiny MM-DiT-style generator.

The paper (responsible T2I diffusion, code github.com/Moslem-Sh21/responsible-t2i-diffusion;
abstract in ``shared/papers``) learns external concept vectors, with the generator frozen,
that are "added to the multi-modal attention heads for ViT-based DMs or to the bottleneck
layer for U-Net-based DMs", and shows that in joint-attention (ViT) models they "combine
linearly at the attention level and induce near-linear effects at the model output,
satisfying homogeneity and additivity", improving fairness. Ours, in torch on CPU:

* the generator: a rectified-flow model on 8 x 8 RGB images whose backbone is
  ``depth`` MM-DiT blocks: image patches (2 x 2) and caption tokens (shape, colour, size)
  keep separate weights but attend jointly (one softmax over both streams), the flow time
  is added to every token; trained ``gen_steps`` Adam steps on the (biased) captioned
  images, sampled with ``sample_steps`` Euler steps from seeded noise;
* a concept vector is learned per attribute (``blue``, ``large``) with the generator
  frozen, by the same flow-matching loss on the training images that have the attribute,
  their caption's slot for it set to *unspecified*: the vector must carry the attribute
  that the neutral caption does not;
* ``attn-concepts`` (the paper): the vector is one offset per head per block, added to
  every token's attention output (before the output projection), ``depth x d`` numbers;
* ``bottleneck-concepts`` (the baseline): one ``d``-vector added to the image tokens'
  residual stream after the middle block (the analogue of the U-Net bottleneck / h-space).

Both methods train the same generator from the same seed, and the same concept budget
(``concept_steps`` Adam steps, lr ``concept_lr``). Outputs: generations for the same
neutral prompts and noise: ``base`` (no vector), ``blue@s`` for the scales ``s`` in
0.5, 1, 1.5, 2, ``large@1`` and ``both@1`` (the sum of the two vectors).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.plugins.plain_method import plain_method

if TYPE_CHECKING:
    import torch

FAMILY = "t2i_concepts"
SCALES = (0.5, 1.0, 1.5, 2.0)
PATCH = 2
VOCAB_OFFSETS = (0, 2, 5)  # shape (2 ids), colour (3), size (3)


def _model(d: int, heads: int, depth: int, size: int) -> torch.nn.Module:
    import torch
    from torch import nn

    tokens = (size // PATCH) ** 2
    patch_dim = 3 * PATCH * PATCH

    class Block(nn.Module):
        """One MM-DiT block: per-stream norms, projections and MLPs, joint attention."""

        def __init__(self) -> None:
            super().__init__()
            self.n_img, self.n_txt = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv_img, self.qkv_txt = nn.Linear(d, 3 * d), nn.Linear(d, 3 * d)
            self.out_img, self.out_txt = nn.Linear(d, d), nn.Linear(d, d)
            self.m_img = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(),
                                       nn.Linear(2 * d, d))
            self.m_txt = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(),
                                       nn.Linear(2 * d, d))

        def forward(self, img: torch.Tensor, txt: torch.Tensor,
                    head_vec: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
            n_img = img.shape[1]
            qkv = torch.cat([self.qkv_img(self.n_img(img)), self.qkv_txt(self.n_txt(txt))], 1)
            b, t, _ = qkv.shape
            q, k, v = qkv.view(b, t, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // heads), dim=-1)
            out = (att @ v).transpose(1, 2)  # (b, t, heads, dh)
            if head_vec is not None:  # the paper's injection: an offset per head
                out = out + head_vec.view(1, 1, heads, d // heads)
            out = out.reshape(b, t, d)
            img = img + self.out_img(out[:, :n_img])
            txt = txt + self.out_txt(out[:, n_img:])
            return img + self.m_img(img), txt + self.m_txt(txt)

    class Generator(nn.Module):
        """Velocity field v(x_t, t, caption) of a rectified flow over images."""

        def __init__(self) -> None:
            super().__init__()
            self.patch_in = nn.Linear(patch_dim, d)
            self.patch_out = nn.Linear(d, patch_dim)
            self.pos = nn.Parameter(torch.randn(1, tokens, d) * 0.02)
            self.words = nn.Embedding(8, d)
            self.slot = nn.Parameter(torch.randn(1, 3, d) * 0.02)
            self.time = nn.Sequential(nn.Linear(16, d), nn.SiLU(), nn.Linear(d, d))
            self.blocks = nn.ModuleList([Block() for _ in range(depth)])
            self.size = size

        def forward(self, x: torch.Tensor, t: torch.Tensor, caption: torch.Tensor,
                    heads_vec: torch.Tensor | None = None,
                    bottleneck: torch.Tensor | None = None) -> torch.Tensor:
            b = x.shape[0]
            g = self.size // PATCH
            patches = x.view(b, 3, g, PATCH, g, PATCH).permute(0, 2, 4, 1, 3, 5)
            img = self.patch_in(patches.reshape(b, g * g, patch_dim)) + self.pos
            offsets = torch.tensor(VOCAB_OFFSETS)
            txt = self.words(caption + offsets) + self.slot
            freqs = torch.exp(torch.arange(8) * (-math.log(1000.0) / 8))
            emb = self.time(torch.cat([torch.sin(t[:, None] * freqs * 50),
                                       torch.cos(t[:, None] * freqs * 50)], 1))[:, None]
            img, txt = img + emb, txt + emb
            for i, block in enumerate(self.blocks):
                img, txt = block(img, txt, None if heads_vec is None else heads_vec[i])
                if bottleneck is not None and i == len(self.blocks) // 2:
                    img = img + bottleneck  # the baseline's injection, image stream only
            out = self.patch_out(img).view(b, g, g, 3, PATCH, PATCH).permute(0, 3, 1, 4, 2, 5)
            return out.reshape(b, 3, self.size, self.size)

    return Generator()


def _fm_loss(net: torch.nn.Module, x1: torch.Tensor, cap: torch.Tensor, gen: torch.Generator,
             **inject: Any) -> torch.Tensor:
    import torch

    x0 = torch.randn(x1.shape, generator=gen)
    t = torch.rand(x1.shape[0], generator=gen)
    xt = (1 - t)[:, None, None, None] * x0 + t[:, None, None, None] * x1
    return ((net(xt, t, cap, **inject) - (x1 - x0)) ** 2).mean()


def train_generator(inputs: Mapping[str, Any], config: Mapping[str, Any],
                    seed: int) -> torch.nn.Module:
    """The frozen generator both methods steer (the same for both at one seed)."""
    import torch

    torch.manual_seed(seed)
    images = torch.as_tensor(np.asarray(inputs["images"]), dtype=torch.float32)
    caps = torch.as_tensor(np.asarray(inputs["captions"]), dtype=torch.long)
    net = _model(int(config.get("d", 32)), int(config.get("heads", 4)),
                 int(config.get("depth", 3)), images.shape[-1])
    opt = torch.optim.Adam(net.parameters(), lr=float(config.get("gen_lr", 2e-3)))
    gen = torch.Generator().manual_seed(seed)
    batch = int(config.get("batch", 64))
    for _ in range(int(config.get("gen_steps", 1500))):
        idx = torch.randint(0, len(images), (batch,), generator=gen)
        loss = _fm_loss(net, images[idx], caps[idx], gen)
        opt.zero_grad()
        loss.backward()
        opt.step()
    for p in net.parameters():
        p.requires_grad_(False)
    return net


def learn_concept(net: torch.nn.Module, inputs: Mapping[str, Any], config: Mapping[str, Any],
                  seed: int, slot: int, where: str) -> torch.Tensor:
    """A concept vector for the attribute in caption ``slot`` (1 colour -> blue, 2 size ->
    large), injected at ``where`` (``heads`` or ``bottleneck``), the generator frozen."""
    import torch

    images = torch.as_tensor(np.asarray(inputs["images"]), dtype=torch.float32)
    caps = torch.as_tensor(np.asarray(inputs["captions"]), dtype=torch.long)
    attr = torch.as_tensor(np.asarray(inputs["blue" if slot == 1 else "large"]))
    keep = attr == 1
    images, caps = images[keep], caps[keep].clone()
    caps[:, slot] = 2  # the neutral caption: the vector must carry the attribute
    d, depth = int(config.get("d", 32)), int(config.get("depth", 3))
    vec = torch.zeros((depth, d) if where == "heads" else (d,), requires_grad=True)
    opt = torch.optim.Adam([vec], lr=float(config.get("concept_lr", 0.02)))
    gen = torch.Generator().manual_seed(seed + 10 * slot)
    batch = int(config.get("batch", 64))
    for _ in range(int(config.get("concept_steps", 300))):
        idx = torch.randint(0, len(images), (batch,), generator=gen)
        inject = {"heads_vec": vec} if where == "heads" else {"bottleneck": vec}
        loss = _fm_loss(net, images[idx], caps[idx], gen, **inject)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return vec.detach()


def sample(net: torch.nn.Module, prompts: Any, noise: Any, steps: int,
           **inject: Any) -> np.ndarray:
    """Euler integration of the flow from the given noise (t: 0 -> 1)."""
    import torch

    x = torch.as_tensor(np.asarray(noise), dtype=torch.float32)
    cap = torch.as_tensor(np.asarray(prompts), dtype=torch.long)
    with torch.no_grad():
        for i in range(steps):
            t = torch.full((x.shape[0],), i / steps)
            x = x + net(x, t, cap, **inject) / steps
    return np.asarray(x.clamp(0, 1).numpy(), dtype=np.float64)


def _run(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int,
         where: str) -> dict[str, Any]:
    import torch

    torch.set_num_threads(int(config.get("threads", 1)))
    net = train_generator(inputs, config, seed)
    blue = learn_concept(net, inputs, config, seed, 1, where)
    large = learn_concept(net, inputs, config, seed, 2, where)
    key = "heads_vec" if where == "heads" else "bottleneck"
    steps = int(config.get("sample_steps", 10))
    prompts, noise = inputs["prompts"], inputs["noise"]
    out: dict[str, Any] = {"base": sample(net, prompts, noise, steps),
                           "vector_size": int(blue.numel())}
    for s in SCALES:
        out[f"blue@{s:g}"] = sample(net, prompts, noise, steps, **{key: s * blue})
    out["large@1"] = sample(net, prompts, noise, steps, **{key: large})
    out["both@1"] = sample(net, prompts, noise, steps, **{key: blue + large})
    return out


@plain_method("attn-concepts", family=FAMILY, extra="cpu")
def attn_concepts(inputs: Mapping[str, Any], config: Mapping[str, Any],
                  seed: int) -> dict[str, Any]:
    """Concept vectors added to every multi-modal attention head (the generator frozen)."""
    return _run(inputs, config, seed, "heads")


@plain_method("bottleneck-concepts", family=FAMILY, role="baseline", extra="cpu")
def bottleneck_concepts(inputs: Mapping[str, Any], config: Mapping[str, Any],
                        seed: int) -> dict[str, Any]:
    """Concept vectors added at the bottleneck (image residual stream, middle block)."""
    return _run(inputs, config, seed, "bottleneck")
