"""Decode speed (batch 1), load time and peak RSS of the offline model backends.

    .venv/bin/pytest tests/perf/test_models_perf.py -s                     # numbers printed
    .venv/bin/pytest tests/perf/test_models_perf.py -s --benchmark-enable  # + pytest-benchmark
    .venv/bin/python tests/perf/test_models_perf.py                        # same, as a script
    MODELS_PERF_THREADS=2 MODELS_PERF_TOKENS=128 ...                       # knobs (defaults)

Anchors measured on this project's 2-core machines: llama.cpp 62 tok/s with 2 threads, load
0.18 s, RSS 184 MB (target >= 50 tok/s); transformers fp32 10.8 tok/s, load 24 s (from the
GGUF; loading our dequantised HF folder is far quicker). Each backend is measured in a fresh
subprocess so load time and RSS are its own; EOS is suppressed so every run decodes exactly
the requested number of tokens. The 1-minute load average is recorded next to the numbers
because a shared 2-core box skews them; no assertion is made on timings.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from typing import Any

import pytest

pytestmark = pytest.mark.perf

THREADS = int(os.environ.get("MODELS_PERF_THREADS", "2"))
TOKENS = int(os.environ.get("MODELS_PERF_TOKENS", "128"))
PROMPT = "Once upon a time"

_LLAMA_CHILD = """
import json, os, resource, sys, time
threads, tokens, prompt = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
from harness.models.embedded import load_llama
from harness.models.weights import smollm2_gguf
base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
start = time.perf_counter()
llama, _ = load_llama(smollm2_gguf(), n_threads=threads)
load_s = time.perf_counter() - start
no_eos = {llama.token_eos(): -1e9}
llama.create_completion(prompt, max_tokens=8, temperature=0.0, logit_bias=no_eos)  # warm-up
llama.reset()
start = time.perf_counter()
out = llama.create_completion(prompt, max_tokens=tokens, temperature=0.0, logit_bias=no_eos)
seconds = time.perf_counter() - start
n = out["usage"]["completion_tokens"]
print(json.dumps({"load_s": load_s, "tokens": n, "tok_per_s": n / seconds,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "base_rss_mb": base_mb, "loadavg": os.getloadavg()[0]}))
"""

_HF_CHILD = """
import json, os, resource, sys, time
threads, tokens, prompt, dtype = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
import torch
torch.set_num_threads(threads)
from harness.models.whitebox import WhiteBoxLM, ensure_hf_copy
folder = ensure_hf_copy()
base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
start = time.perf_counter()
lm = WhiteBoxLM.load(folder, dtype=dtype)
load_s = time.perf_counter() - start
ids = lm.encode(prompt)
def run(n):
    with torch.inference_mode():
        return lm.model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
            max_new_tokens=n, min_new_tokens=n, pad_token_id=lm.tokenizer.eos_token_id,
            temperature=None, top_p=None, top_k=None)
run(4)  # warm-up
start = time.perf_counter()
out = run(tokens)
seconds = time.perf_counter() - start
n = out.shape[1] - ids.shape[1]
print(json.dumps({"load_s": load_s, "tokens": n, "tok_per_s": n / seconds,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "base_rss_mb": base_mb, "loadavg": os.getloadavg()[0]}))
"""


def measure(child: str, *args: str) -> dict[str, Any]:
    """Run a measuring child in a fresh interpreter; return its JSON line."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", child, *args], check=True, capture_output=True, text=True, env=env
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _report(name: str, numbers: dict[str, Any]) -> None:
    print(
        f"\n{name}: {numbers['tok_per_s']:.1f} tok/s ({numbers['tokens']} tokens, batch 1, "
        f"{THREADS} threads), load {numbers['load_s']:.2f} s, peak RSS {numbers['rss_mb']:.0f} MB"
        f" ({numbers['base_rss_mb']:.0f} MB before loading), load avg {numbers['loadavg']:.1f}"
    )


needs_llama = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed"
)
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("gguf") is None,
    reason="needs the cpu extra (torch, transformers, gguf)",
)


@needs_llama
@pytest.mark.slow
def test_llama_cpp_decode(benchmark: Any) -> None:
    """Fresh-process numbers, then pytest-benchmark of a warm 32-token completion."""
    numbers = measure(_LLAMA_CHILD, str(THREADS), str(TOKENS), PROMPT)
    _report("llama.cpp Q4_1", numbers)
    benchmark.extra_info.update(numbers)
    assert numbers["tokens"] == TOKENS

    from harness.models.embedded import load_llama
    from harness.models.weights import smollm2_gguf

    llama, lock = load_llama(smollm2_gguf(), n_threads=THREADS)
    no_eos = {llama.token_eos(): -1e9}

    def decode() -> int:
        with lock:
            llama.reset()
            out = llama.create_completion(PROMPT, max_tokens=32, temperature=0.0, logit_bias=no_eos)
        return int(out["usage"]["completion_tokens"])

    assert benchmark(decode) == 32


@needs_torch
@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_transformers_decode(benchmark: Any, dtype: str) -> None:
    """Fresh-process numbers for the white-box path (the HF copy is built first if missing)."""
    numbers = benchmark.pedantic(
        measure, args=(_HF_CHILD, str(THREADS), str(TOKENS // 4), PROMPT, dtype), rounds=1
    )
    _report(f"transformers {dtype}", numbers)
    benchmark.extra_info.update(numbers)
    assert numbers["tokens"] == TOKENS // 4


if __name__ == "__main__":
    if importlib.util.find_spec("llama_cpp") is not None:
        _report("llama.cpp Q4_1", measure(_LLAMA_CHILD, str(THREADS), str(TOKENS), PROMPT))
    for dtype in ("float32", "bfloat16"):
        numbers = measure(_HF_CHILD, str(THREADS), str(TOKENS // 4), PROMPT, dtype)
        _report(f"transformers {dtype}", numbers)
