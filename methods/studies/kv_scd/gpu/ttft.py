"""Measured time to first token of SCD against the consumer's own prefill (issue 49, item 5).

The study (``../study.yaml``) reports TTFT from a stated bandwidth model
(``methods.scd.scd.ttft_model``: FLOPs over an assumed 50 GFLOP/s); the paper's 2.65x is a
measured speedup on GPUs. This times, on one device, with the device synchronised around
each timed region:

* ``prefill_ms``: the consumer's full prefill of the prompt (its first token's logits),
  the oracle SCD is compared with;
* ``rebuild_ms``: SCD's work between the producer's cache and the consumer's first token,
  ``methods.scd.scd.rebuild`` (code every layer at ``rank``: encode + decode, the patch
  layers recomputed with the consumer's projections from a residual code) plus one consumer
  step on the rebuilt cache; the producer's own prefill is not counted (it exists in a
  disaggregated deployment either way);
* ``transfer_ms``: the code's bytes over ``--bandwidth-gbps`` (stated, not measured: there
  is no link between two GPUs here), beside ``raw_transfer_ms`` for the uncompressed cache.

``speedup = prefill_ms / (transfer_ms + rebuild_ms)``, one per repeat, its mean with a t
interval over repeats (``harness.stats.mean_ci``). Prompts are the consumer's procedural
recall dialogues (``methods.scd.consumer.recall_dialogue``) padded to each target length.

    python methods/studies/kv_scd/gpu/ttft.py --producer DIR --consumer DIR --device cuda \\
        --dtype bfloat16 --tokens 2048,8192 --ranks 64,16 --out ttft.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from harness.models.whitebox import WhiteBoxLM
from harness.stats import mean_ci
from methods.kv.cache import full_kv_bytes, layers_of, make_cache, step
from methods.scd.consumer import recall_dialogue
from methods.scd.scd import rebuild
from methods.scd.scd_predictor import patch_layers


def timed(device: str, work: Callable[[], Any]) -> tuple[float, Any]:
    """Milliseconds ``work`` takes, the device synchronised before and after."""
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    sync()
    start = time.perf_counter()
    out = work()
    sync()
    return 1e3 * (time.perf_counter() - start), out


def prompt_ids(lm: WhiteBoxLM, tokens: int, seed: int) -> torch.Tensor:
    """A recall dialogue padded with neutral sentences to about ``tokens`` prompt tokens."""
    def ids_for(n_noise: int) -> torch.Tensor:
        user, _ = recall_dialogue(0, seed, n_noise)
        return lm.encode(lm.chat_prompt([{"role": "user", "content": user}]))
    probe = int(ids_for(64).shape[1])
    return ids_for(max(1, round(64 * tokens / probe)))


def measure(producer: WhiteBoxLM, consumer: WhiteBoxLM, ids: torch.Tensor, rank: int | None,
            patch: int, bandwidth_gbps: float, device: str) -> dict[str, float]:
    """One repeat at one prompt and rank: the timings and bytes of the module doc."""
    layers = patch_layers(consumer.n_layers, patch)
    with torch.inference_mode():
        out = producer.model(input_ids=ids, use_cache=True, output_hidden_states=True)
    context = [(k[:, :, :-1], v[:, :, :-1]) for k, v in layers_of(WhiteBoxLM.cache_of(out))]
    hidden = {i: out.hidden_states[i][0, :-1] for i in layers}
    dtype = consumer.model.dtype

    def scd() -> Any:
        rebuilt, sent = rebuild(consumer.model, context, hidden, rank)
        cache = make_cache([(k.to(dtype), v.to(dtype)) for k, v in rebuilt])
        return sent, step(consumer.model, ids[:, -1:], cache).logits[0, -1]

    def prefill() -> Any:
        with torch.inference_mode():
            return consumer.model(input_ids=ids).logits[0, -1]

    rebuild_ms, (sent, _) = timed(device, scd)
    prefill_ms, _ = timed(device, prefill)
    raw = full_kv_bytes(consumer.model.config, int(ids.shape[1]) - 1,
                        dtype_bytes=torch.finfo(dtype).bits // 8)
    transfer_ms = 1e3 * sent * 8 / (bandwidth_gbps * 1e9)
    return {"prefill_ms": prefill_ms, "rebuild_ms": rebuild_ms, "transfer_ms": transfer_ms,
            "raw_transfer_ms": 1e3 * raw * 8 / (bandwidth_gbps * 1e9),
            "code_bytes": float(sent), "raw_kv_bytes": float(raw),
            "speedup": prefill_ms / (transfer_ms + rebuild_ms)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Time every (prompt length, rank) and write the table as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--producer", help="HF folder (default: the ladder's SmolLM2)")
    parser.add_argument("--consumer", help="HF folder (default: SmolLM2's SCD fine-tune)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--tokens", default="2048,8192", help="prompt lengths, comma-separated")
    parser.add_argument("--ranks", default="64,16", help="code ranks (none = full rank)")
    parser.add_argument("--patch", type=int, default=2, help="residual-code patch layers")
    parser.add_argument("--bandwidth-gbps", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats after a warm-up")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)
    if args.consumer is None:
        from methods.scd.consumer import ensure_consumer
        args.consumer = str(ensure_consumer())
    producer = WhiteBoxLM.load(args.producer, args.device, args.dtype)
    consumer = WhiteBoxLM.load(args.consumer, args.device, args.dtype)
    rows = []
    for tokens in (int(t) for t in args.tokens.split(",")):
        ids = prompt_ids(consumer, tokens, args.seed).to(args.device)
        for rank_text in args.ranks.split(","):
            rank = None if rank_text == "none" else int(rank_text)
            measure(producer, consumer, ids, rank, args.patch, args.bandwidth_gbps,
                    args.device)  # warm-up: kernels, allocator, caches
            runs = [measure(producer, consumer, ids, rank, args.patch, args.bandwidth_gbps,
                            args.device) for _ in range(args.repeats)]
            mean = {k: sum(r[k] for r in runs) / len(runs) for k in runs[0]}
            ci = mean_ci([r["speedup"] for r in runs], bounds=(0.0, float("inf")))
            rows.append({"prompt_tokens": int(ids.shape[1]), "rank": rank_text,
                         "patch": args.patch, "repeats": args.repeats,
                         **{k: round(v, 3) for k, v in mean.items()},
                         "speedup_ci": [round(ci.lo, 3), round(ci.hi, 3)]})
            print(json.dumps(rows[-1]), flush=True)
    result = {"claim": "SCD: up to 2.65x TTFT speedup over the oracle consumer prefill",
              "producer": args.producer or "ladder smollm2-135m", "consumer": args.consumer,
              "device": args.device,
              "device_name": (torch.cuda.get_device_name() if args.device.startswith("cuda")
                              else "cpu"),
              "dtype": args.dtype, "bandwidth_gbps": args.bandwidth_gbps,
              "torch_threads": torch.get_num_threads(), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
