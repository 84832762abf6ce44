"""CKA probe of cross-layer KV alignment: the observation xKV is built on.

xKV (Chang et al., 2025) argues that adjacent layers' KV caches are poorly aligned token by
token (low per-token cosine similarity) yet share their dominant subspace, which linear
Centered Kernel Alignment (Kornblith et al., 2019) measures:
``CKA(X, Y) = ||Yc^T Xc||_F^2 / (||Xc^T Xc||_F ||Yc^T Yc||_F)`` for token-by-feature
matrices with centred columns. It is 1 for a layer with itself, invariant to orthogonal
transforms and isotropic scaling of either side, and needs no feature correspondence, so
it compares layers whose heads are permuted or rotated. This module computes the
layer-by-layer matrix for keys (RoPE undone, as xKV factors them) and values of one prompt,
plus the mean per-token cosine for contrast, and writes a heatmap-ready JSON::

    python -m methods.xkv.cka --model smollm2-135m --out methods/studies/kv_xkv/cka.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

DEFAULT_TEXT = (
    "The committee met on a grey Tuesday to settle the budget for the coming year. Maria "
    "opened with the numbers from the harbour project, which had run over by a fifth, and "
    "asked whether the new bridge could wait. Tom disagreed: the ferries were full every "
    "morning and the old pier was sinking. After an hour they agreed to split the money, "
    "fund a survey of the pier, and meet again in March. On the way out, someone noticed that "
    "the clock in the hall had stopped at seven minutes past four, as it had every winter "
    "since the flood. Nobody knew who had wound it last, and the caretaker only shrugged. "
    "Outside, the rain turned to sleet, the buses were late, and the market stalls packed up "
    "early, leaving crates of oranges stacked under the arches of the old town hall."
)


def linear_cka(x: torch.Tensor, y: torch.Tensor) -> float:
    """Linear CKA of ``x [n, p]`` and ``y [n, q]`` (same rows = same tokens), in float64."""
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"CKA needs the same rows: {x.shape[0]} vs {y.shape[0]}")
    if x.shape[0] < 2:
        raise ValueError("CKA needs at least two rows")
    xc = x.double() - x.double().mean(dim=0, keepdim=True)
    yc = y.double() - y.double().mean(dim=0, keepdim=True)
    cross = torch.linalg.matrix_norm(yc.T @ xc) ** 2
    denom = torch.linalg.matrix_norm(xc.T @ xc) * torch.linalg.matrix_norm(yc.T @ yc)
    if float(denom) == 0.0:
        raise ValueError("CKA is undefined for a constant matrix")
    return float(cross / denom)


def cka_matrix(mats: Sequence[torch.Tensor]) -> list[list[float]]:
    """Symmetric matrix of pairwise linear CKA (1.0 on the diagonal by definition)."""
    n = len(mats)
    out = [[1.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            out[i][j] = out[j][i] = linear_cka(mats[i], mats[j])
    return out


def mean_token_cosine(x: torch.Tensor, y: torch.Tensor) -> float:
    """Mean over tokens of the cosine between matching rows (the per-token similarity that
    earlier cross-layer sharing assumed high)."""
    return float(torch.nn.functional.cosine_similarity(x.double(), y.double(), dim=-1).mean())


def kv_matrices(lm: Any, text: str) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Per layer ``[tokens, kv_heads * head_dim]`` keys (pre-RoPE) and values of ``text``."""
    from methods.kv.cache import layers_of, prefill, rope_tables, unrope

    ids = lm.encode(text)
    _, cache = prefill(lm.model, ids)
    layers = layers_of(cache)
    cos, sin = rope_tables(lm.model, torch.arange(ids.shape[1], device=ids.device))

    def flat(t: torch.Tensor) -> torch.Tensor:
        return t[0].permute(1, 0, 2).reshape(t.shape[2], -1)

    keys = [flat(unrope(k, cos, sin)) for k, _ in layers]
    values = [flat(v) for _, v in layers]
    return keys, values


def probe(lm: Any, text: str = DEFAULT_TEXT, name: str = "") -> dict[str, Any]:
    """The heatmap JSON: CKA matrices for keys and values, adjacent-layer summaries."""
    keys, values = kv_matrices(lm, text)
    n = len(keys)
    out: dict[str, Any] = {"model": name, "tokens": int(keys[0].shape[0]), "layers": n,
                           "keys_pre_rope": cka_matrix(keys), "values": cka_matrix(values)}
    for kind, mats in (("keys_pre_rope", keys), ("values", values)):
        out[f"{kind}_adjacent_cka_mean"] = sum(out[kind][i][i + 1] for i in range(n - 1)) / (n - 1)
        out[f"{kind}_adjacent_token_cosine_mean"] = sum(
            mean_token_cosine(mats[i], mats[i + 1]) for i in range(n - 1)) / (n - 1)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m methods.xkv.cka [--model NAME] [--text FILE] [--out JSON]``."""
    from harness.models.whitebox import WhiteBoxLM, ladder_hf_copy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--text", type=Path, help="prompt text file (default: a fixed paragraph)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    path = None if args.model == "smollm2-135m" else ladder_hf_copy(args.model)
    lm = WhiteBoxLM.load(path)
    text = args.text.read_text() if args.text else DEFAULT_TEXT
    result = probe(lm, text, args.model)
    blob = json.dumps(result, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(blob + "\n")
    summary = {k: v for k, v in result.items() if not isinstance(v, list)}
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    from harness.errors import guarded

    guarded(main)
