"""The model ladder's speed: load time, prompt and generation tok/s, in process and served.

    .venv/bin/pytest tests/perf/test_ladder_perf.py -m perf -s --benchmark-enable
    LADDER_PERF_THREADS=2 LADDER_PERF_PROMPT=512 LADDER_PERF_TOKENS=128   # knobs (defaults)

Per ready ladder model, each in a fresh subprocess (so load time is its own):
- load time of the GGUF (2 threads by default, batch 1);
- prompt tok/s: one ~512-token prompt evaluated from an empty context;
- generation tok/s: 128 tokens with EOS suppressed;
- the served path's per-request overhead: the same chat requests through ``harness serve``'s
  HTTP handler (a server thread on 127.0.0.1, stdlib client) against
  :meth:`ChatEngine.complete` directly (both on the engine's worker thread, as in use),
  with prefix reuse off in both so each request does the same work. Target: served <= 1.2x
  in-process.

The 1-minute load average is printed beside every number (a shared 2-core box skews them);
no assertion is made on timings. With the benchmark off (the default, as in CI) no number is
read, so the same code runs at smoke sizes (:data:`SMOKE`): 64 prompt tokens, 16 generated,
8 per chat request, unless the knobs above are set.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from harness.models import ladder

pytestmark = pytest.mark.perf

THREADS = int(os.environ.get("LADDER_PERF_THREADS", "2"))
TIMED = {"prompt": 512, "tokens": 128, "chat": 32}
SMOKE = {"prompt": 64, "tokens": 16, "chat": 8}
"""Sizes when timing (``--benchmark-enable``) and when not: the smoke run checks the same
paths and counts in a fraction of the time (issue 45: CI's wall time)."""


def sizes(timing: bool) -> dict[str, int]:
    """Prompt tokens, generated tokens and tokens per chat request for this run."""
    out = dict(TIMED if timing else SMOKE)
    for key, env in (("prompt", "LADDER_PERF_PROMPT"), ("tokens", "LADDER_PERF_TOKENS")):
        if os.environ.get(env):
            out[key] = int(os.environ[env])
    return out

_CHILD = r"""
import json, os, sys, time, threading, urllib.request
name, threads, n_prompt, n_gen = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
n_chat = int(sys.argv[5])
from harness.models import ladder
from harness.models.llama_engine import shared_engine
from harness.models.serve import bind
path = ladder.resolve(name)
start = time.perf_counter()
engine = shared_engine(path, 4096, threads, prefix_cache_mb=0)
load_s = time.perf_counter() - start
llama = engine.llama
words = ("the quick brown fox jumps over the lazy dog " * 400).split()
text = " ".join(words[: n_prompt])
tokens = llama.tokenize(text.encode(), add_bos=False)[:n_prompt]
def on_worker(fn, *args, **kwargs):
    return engine.worker.submit(fn, *args, **kwargs).result()
def prompt_run():
    llama.reset(); llama.eval(tokens[:8]); llama.reset()  # warm-up
    start = time.perf_counter(); llama.eval(tokens); return time.perf_counter() - start
prompt_s = on_worker(prompt_run)
no_eos = {llama.token_eos(): -1e9}
def gen_run():
    llama.reset()
    llama.create_completion("Once upon a time", max_tokens=8, temperature=0.0)
    llama.reset()
    start = time.perf_counter()
    out = llama.create_completion("Once upon a time", max_tokens=n_gen, temperature=0.0,
                                  logit_bias=no_eos)
    return out, time.perf_counter() - start
out, gen_s = on_worker(gen_run)
n_out = out["usage"]["completion_tokens"]

# served vs in-process: the same three chat requests, greedy, n_chat new tokens each
chats = [[{"role": "user", "content": f"Write one sentence about the number {i}."}]
         for i in range(3)]
sampling = {"max_tokens": n_chat, "temperature": 0.0, "seed": 0}
def fresh():
    engine._aligned = []  # no reuse between requests: both paths do the same work
    llama.reset()
inproc = []
for chat in chats:  # on the engine's worker thread, as the embedded provider runs it
    fresh(); t = time.perf_counter()
    engine.worker.submit(engine.complete, chat, [], [], dict(sampling)).result()
    inproc.append(time.perf_counter() - t)
server = bind(engine, name, "127.0.0.1", 0)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
served = []
for chat in chats:
    fresh()
    body = json.dumps({"model": name, "messages": chat, "max_tokens": n_chat, "temperature": 0,
                       "seed": 0}).encode()
    t = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(
            url, body, {"Content-Type": "application/json"}), timeout=300) as r:
        r.read()
    served.append(time.perf_counter() - t)
server.shutdown()
print(json.dumps({"model": name, "load_s": load_s, "prompt_tokens": len(tokens),
                  "prompt_tok_s": len(tokens) / prompt_s, "gen_tokens": n_out,
                  "gen_tok_s": n_out / gen_s, "inproc_s": sum(inproc),
                  "served_s": sum(served), "served_ratio": sum(served) / sum(inproc),
                  "loadavg": os.getloadavg()[0]}))
"""

READY = [m.name for m in ladder.LADDER if ladder.status(m)["ready"]]


def measure(name: str, size: dict[str, int]) -> dict[str, Any]:
    """One fresh interpreter per model; returns its JSON line."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", _CHILD, name, str(THREADS),
                          str(size["prompt"]), str(size["tokens"]), str(size["chat"])],
                         check=True, capture_output=True, text=True, env=env)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                    reason="llama-cpp-python not installed")
@pytest.mark.parametrize("name", READY or ["(none ready)"])
@pytest.mark.slow
def test_ladder_model_speed(name: str, benchmark: Any) -> None:
    if name not in READY:
        pytest.skip("no ladder model is fetched")
    size = sizes(timing=benchmark.enabled)
    numbers = measure(name, size)
    print(f"\n{name}: load {numbers['load_s']:.2f} s, prompt {numbers['prompt_tok_s']:.0f} tok/s "
          f"({numbers['prompt_tokens']} tokens), generation {numbers['gen_tok_s']:.1f} tok/s "
          f"({numbers['gen_tokens']} tokens), {THREADS} threads, batch 1; served/in-process "
          f"{numbers['served_ratio']:.3f}x ({numbers['served_s']:.2f} s vs "
          f"{numbers['inproc_s']:.2f} s, 3 requests); load avg {numbers['loadavg']:.2f}")
    benchmark.extra_info.update(numbers)
    assert numbers["gen_tokens"] == size["tokens"] and numbers["prompt_tokens"] == size["prompt"]
    benchmark.pedantic(lambda: None, rounds=1)
