"""How the embedded engine's OpenMP waiting policy holds up on a busy machine (issue 49,
item 6), side by side in one run: the same model, prompt and threads, one fresh interpreter
per policy (OpenMP reads ``OMP_WAIT_POLICY`` once, when the library loads).

llama.cpp's CPU backend runs its threads in OpenMP parallel regions; with the default
``ACTIVE`` policy an idle thread spins, which on a machine where other processes want the
cores burns the time the working thread needed. The engine sets ``PASSIVE`` unless the user
set a policy (``harness.models.llama_engine``); this measures both, plus the engine's own
choice, and reports the load average beside them. No timed assertion: the numbers are the
output (``--benchmark-enable -s``).
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

MODEL = "qwen2.5-coder-0.5b"
PROMPT_TOKENS, TOKENS = 64, 32

_CHILD = r"""
import json, os, sys, time
from harness.models.ladder import resolve_gguf
from harness.models.llama_engine import default_threads, shared_engine
name, prompt_tokens, tokens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
engine = shared_engine(resolve_gguf(name), 2048, None)
llama = engine.llama
prompt = llama.tokenize(b" the" * prompt_tokens, add_bos=False)[:prompt_tokens]
t0 = time.perf_counter(); llama.reset(); llama.eval(prompt); prefill = time.perf_counter() - t0
t0 = time.perf_counter(); n = 0
for tok in llama.generate(prompt, temp=0.0, reset=True):
    n += 1
    if n >= tokens:
        break
gen = time.perf_counter() - t0
print(json.dumps({"policy": os.environ.get("OMP_WAIT_POLICY"), "threads": default_threads(),
                  "prefill_s": prefill, "gen_s": gen, "gen_tokens": n,
                  "loadavg": os.getloadavg()[0]}))
"""


def measure(policy: str | None) -> dict[str, Any]:
    """One fresh interpreter with ``OMP_WAIT_POLICY`` set to ``policy`` (None: unset, so the
    engine chooses)."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["HF_HUB_OFFLINE"] = "1"
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-c", _CHILD, MODEL, str(PROMPT_TOKENS), str(TOKENS)],
                         check=True, capture_output=True, text=True, env=env)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.perf
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                    reason="llama-cpp-python not installed")
def test_wait_policies_side_by_side(benchmark: Any) -> None:
    rung = ladder.find(MODEL)
    if rung is None or not ladder.status(rung)["ready"]:
        pytest.skip(f"{MODEL} is not fetched (harness models fetch {MODEL})")
    rows = {label: measure(policy) for label, policy in
            (("ACTIVE", "ACTIVE"), ("PASSIVE", "PASSIVE"), ("engine default", None))}
    for label, row in rows.items():
        print(f"\n{label:>14}: prefill {PROMPT_TOKENS} tokens {row['prefill_s']:.2f} s, "
              f"{row['gen_tokens']} tokens {row['gen_s']:.2f} s "
              f"({row['gen_tokens'] / row['gen_s']:.1f} tok/s), {row['threads']} threads, "
              f"policy seen {row['policy']}, load avg {row['loadavg']:.2f}")
        assert row["gen_tokens"] == TOKENS
    assert rows["engine default"]["policy"] == "PASSIVE"  # the engine's choice, unset before
    benchmark.extra_info.update(rows)
    benchmark.pedantic(lambda: None, rounds=1)
