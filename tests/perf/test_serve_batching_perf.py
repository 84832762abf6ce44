"""``harness serve`` with concurrent clients: batched decoding against one at a time
(issue 49, item 6), side by side in one run on the same served model.

Two measurements, each printed with the load average before and after (the machine is
shared; no timed assertion, the numbers are the output: ``--benchmark-enable -s``):

1. **Aggregate tokens per second.** Four chat requests (``max_tokens`` 64, temperature 0)
   sent one after another, then the same four at once, to one ``harness serve --parallel 4``
   server; then the same four at once to a ``--parallel 1`` server (the engine alone, one
   request at a time: what ``harness serve`` did before batching). The replies must be the
   same text in all three (a correctness check, not a timing one).
2. **An eval end to end.** ``inspect eval`` of the arithmetic task through Inspect's
   ``openai-api`` provider against the ``--parallel 4`` server, with ``max_connections`` 1
   and then 4: wall time of each. Two shapes (:data:`EVALS`): 8 samples of one completion,
   and 6 react-agent episodes (calculator tool, up to 8 messages, each turn re-sending the
   conversation).

Models: ``PERF_SERVE_MODELS`` (comma-separated ladder names; default ``smollm2-135m``;
``qwen2.5-coder-0.5b`` is the next rung). Threads: ``PERF_SERVE_THREADS`` (default 2).
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from harness.models import ladder

MODELS = [m for m in os.environ.get("PERF_SERVE_MODELS", "smollm2-135m").split(",") if m]
THREADS = os.environ.get("PERF_SERVE_THREADS", "2")
MAX_TOKENS = 64
PROMPTS = [
    "Write a short story about a lighthouse keeper.",
    "Explain how a bicycle gear works, step by step.",
    "Describe a market in the morning, with its sounds and smells.",
    "Tell me about the life cycle of a star.",
]
ROOT = Path(__file__).resolve().parents[2]
EVALS = {
    "generate": ({"n": 8, "agent": "generate"}, MAX_TOKENS),
    "react": ({"n": 6, "agent": "react", "message_limit": 8}, 128),
}
"""Eval shape -> (arithmetic task args, max_tokens)."""


def differing(a: list[str], b: list[str]) -> int:
    return sum(x != y for x, y in zip(a, b, strict=True))


@contextmanager
def served(model: str, parallel: int) -> Iterator[tuple[str, int]]:
    """A ``harness serve`` subprocess on a free port; (host, port)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "serve", model, "--port", "0",
         "--threads", THREADS, "--parallel", str(parallel)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"at http://127\.0\.0\.1:(\d+)/v1", line)
    try:
        if not match:
            raise AssertionError(f"no address in {line!r}: {proc.stderr.read()}")  # type: ignore[union-attr]
        yield "127.0.0.1", int(match.group(1))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def chat(host: str, port: int, prompt: str) -> dict[str, Any]:
    """One chat completion; the response body."""
    body = json.dumps({"model": "m", "max_tokens": MAX_TOKENS, "temperature": 0,
                       "messages": [{"role": "user", "content": prompt}]})
    conn = http.client.HTTPConnection(host, port, timeout=600)
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    payload = json.loads(response.read())
    conn.close()
    assert response.status == 200, payload
    return dict(payload)


def run_requests(host: str, port: int, together: bool) -> dict[str, Any]:
    """The four prompts one after another or all at once: wall time, tokens, texts."""
    replies: list[dict[str, Any]] = [{} for _ in PROMPTS]

    def one(i: int) -> None:
        replies[i] = chat(host, port, PROMPTS[i])

    load = os.getloadavg()[0]
    began = time.perf_counter()
    if together:
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(PROMPTS))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        for i in range(len(PROMPTS)):
            one(i)
    wall = time.perf_counter() - began
    tokens = sum(int(r["usage"]["completion_tokens"]) for r in replies)
    return {"wall_s": wall, "tokens": tokens, "tok_s": tokens / wall,
            "load_before": load, "load_after": os.getloadavg()[0],
            "texts": [r["choices"][0]["message"]["content"] for r in replies]}


def _ready(model: str) -> bool:
    rung = ladder.find(model)
    return rung is not None and bool(ladder.status(rung)["ready"])


def _show(label: str, row: dict[str, Any]) -> None:
    print(f"\n{label:>36}: {row['tokens']} tokens in {row['wall_s']:.2f} s = "
          f"{row['tok_s']:.1f} tok/s (load avg {row['load_before']:.2f} -> "
          f"{row['load_after']:.2f})")


needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="llama-cpp-python not installed")


@pytest.mark.perf
@pytest.mark.slow
@needs_llama
@pytest.mark.parametrize("model", MODELS)
def test_concurrent_requests_against_sequential(benchmark: Any, model: str) -> None:
    if not _ready(model):
        pytest.skip(f"{model} is not fetched (harness models fetch {model})")
    rows: dict[str, dict[str, Any]] = {}
    with served(model, 4) as (host, port):
        chat(host, port, "Hello.")  # warm-up: model pages and OpenMP pool
        rows["parallel 4, sent one at a time"] = run_requests(host, port, together=False)
        rows["parallel 4, sent at once"] = run_requests(host, port, together=True)
    with served(model, 1) as (host, port):
        chat(host, port, "Hello.")
        rows["parallel 1, sent at once"] = run_requests(host, port, together=True)
    print(f"\n{model}, {THREADS} threads, 4 requests x max_tokens {MAX_TOKENS}, temp 0:")
    for label, row in rows.items():
        _show(label, row)
    texts = [row.pop("texts") for row in rows.values()]
    print(f"replies differing from one-at-a-time: batched {differing(texts[0], texts[1])}, "
          f"parallel 1 {differing(texts[0], texts[2])} of {len(PROMPTS)}")
    assert texts[0] == texts[1] == texts[2]  # batching changes the speed, not the replies
    benchmark.extra_info.update({"model": model, **rows})
    benchmark.pedantic(lambda: None, rounds=1)


@pytest.mark.perf
@pytest.mark.slow
@needs_llama
@pytest.mark.parametrize("shape", sorted(EVALS))
@pytest.mark.parametrize("model", MODELS)
def test_an_eval_with_four_connections_against_one(benchmark: Any, model: str, shape: str,
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if not _ready(model):
        pytest.skip(f"{model} is not fetched (harness models fetch {model})")
    from inspect_ai import eval as inspect_eval

    rows: dict[str, dict[str, Any]] = {}
    task_args, max_tokens = EVALS[shape]
    with served(model, 4) as (host, port):
        monkeypatch.setenv("EVALSUITE_BASE_URL", f"http://{host}:{port}/v1")
        monkeypatch.setenv("EVALSUITE_API_KEY", "local")
        chat(host, port, "Hello.")
        for connections in (1, 4):
            load = os.getloadavg()[0]
            began = time.perf_counter()
            log = inspect_eval(str(ROOT / "benchmarks/arithmetic/arithmetic.py@arithmetic"),
                               model=f"openai-api/evalsuite/{model}",
                               task_args=task_args,
                               max_connections=connections, max_tokens=max_tokens,
                               temperature=0, log_dir=str(tmp_path / str(connections)),
                               display="none", max_retries=1)[0]
            wall = time.perf_counter() - began
            assert log.status == "success", log.error
            usage = next(iter(log.stats.model_usage.values()))
            rows[f"max_connections {connections}"] = {
                "wall_s": wall, "output_tokens": usage.output_tokens,
                "prompt_tokens": usage.input_tokens + (usage.input_tokens_cache_read or 0),
                "load_before": load, "load_after": os.getloadavg()[0],
                "answers": [s.output.completion for s in
                            sorted(log.samples or [], key=lambda s: str(s.id))]}
    print(f"\n{model}: inspect eval arithmetic {task_args}, max_tokens {max_tokens}, temp 0, "
          "against harness serve --parallel 4:")
    for label, row in rows.items():
        print(f"{label:>20}: {row['wall_s']:.2f} s, {row['prompt_tokens']} prompt and "
              f"{row['output_tokens']} output tokens "
              f"(load avg {row['load_before']:.2f} -> {row['load_after']:.2f})")
    answers = [row.pop("answers") for row in rows.values()]
    print(f"answers differing between 1 and 4 connections: "
          f"{differing(answers[0], answers[1])} of {len(answers[0])}")
    assert answers[0] == answers[1]  # same replies whichever the concurrency
    benchmark.extra_info.update({"model": model, **rows})
    benchmark.pedantic(lambda: None, rounds=1)
