"""``harness serve``: the ladder behind an OpenAI-compatible server on loopback, reached
through Inspect's own ``openai-api/`` provider with tool calls on the wire."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.models import ladder

pytestmark = pytest.mark.serial  # idle timeouts, concurrent clients: CI runs it alone

MODEL = "qwen2.5-coder-0.5b"


def _ready(model: str) -> bool:
    return bool(ladder.status(ladder.get(model))["ready"])


needs_model = pytest.mark.skipif(
    not _ready(MODEL), reason=f"{MODEL} is not fetched (harness models fetch {MODEL})")


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "serve", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"at (http://127\.0\.0\.1:\d+/v1)", line)
    if not match:
        proc.kill()
        raise AssertionError(f"no address in {line!r}; stderr: {proc.stderr.read()}")
    return proc, match.group(1)


def _post(url: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(url + "/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    if not _ready(MODEL):
        pytest.skip(f"{MODEL} is not fetched")
    proc, url = _start(MODEL, "--port", "0")
    yield url
    proc.terminate()
    assert proc.wait(timeout=20) == 0  # SIGTERM stops it cleanly


ADD = {"type": "function", "function": {
    "name": "add", "description": "Add two integers and return the sum.",
    "parameters": {"type": "object", "properties": {
        "x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}}}


@needs_model
@pytest.mark.slow
def test_tool_calls_come_back_on_the_wire(server: str) -> None:
    status, body = _post(server, {
        "model": MODEL, "temperature": 0, "tools": [ADD],
        "messages": [{"role": "user", "content": "What is 17 + 25? Use the add tool."}]})
    assert status == 200
    choice = body["choices"][0]  # type: ignore[index]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call["function"]["name"] == "add"
    assert json.loads(call["function"]["arguments"]) == {"x": 17, "y": 25}


@needs_model
@pytest.mark.slow
def test_forced_tool_choice_is_grammar_constrained(server: str) -> None:
    status, body = _post(server, {
        "model": MODEL, "tools": [ADD], "tool_choice": "required",
        "messages": [{"role": "user", "content": "Tell me a joke."}]})
    assert status == 200
    call = body["choices"][0]["message"]["tool_calls"][0]  # type: ignore[index]
    assert set(json.loads(call["function"]["arguments"])) == {"x", "y"}


@needs_model
@pytest.mark.slow
def test_a_follow_up_turn_reuses_the_cached_prefix(server: str) -> None:
    """The second turn of a conversation extends the first prompt, so the server reports
    those tokens as cached (``prompt_tokens_details.cached_tokens``), whatever the model
    said in between. Deterministic, unlike counting turns of an agent episode, where a
    greedy model may finish in one turn on another machine's BLAS."""
    first = [{"role": "user", "content": "What is 17 + 25? Use the add tool."}]
    status, body = _post(server, {"model": MODEL, "temperature": 0, "tools": [ADD],
                                  "messages": first})
    assert status == 200
    reply = body["choices"][0]["message"]  # type: ignore[index]
    call = reply["tool_calls"][0]
    follow_up = [*first, reply, {"role": "tool", "tool_call_id": call["id"],
                                 "content": "42"}]
    status, body = _post(server, {"model": MODEL, "temperature": 0, "tools": [ADD],
                                  "messages": follow_up})
    assert status == 200
    usage = body["usage"]  # type: ignore[index]
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    assert 0 < cached < usage["prompt_tokens"]


@needs_model
def test_bad_requests_are_openai_errors(server: str) -> None:
    status, body = _post(server, {"model": MODEL, "messages": []})
    assert status == 400 and "messages" in body["error"]["message"]  # type: ignore[index]
    long = "word " * 9000
    status, body = _post(server, {"model": MODEL, "messages": [
        {"role": "user", "content": long}]})
    assert status == 400 and body["error"]["code"] == "context_length_exceeded"  # type: ignore[index]
    with urllib.request.urlopen(server.removesuffix("/v1") + "/health", timeout=5) as r:
        assert json.loads(r.read())["status"] == "ok"


@pytest.mark.slow
def test_port_in_use_is_a_one_line_error() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "harness.cli", "serve", "smollm2-135m",
                               "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"port {port} is in use" in done.stdout and "--port" in done.stdout


@pytest.mark.slow
def test_unknown_model_is_a_one_line_error() -> None:
    done = subprocess.run([sys.executable, "-m", "harness.cli", "serve", "gpt-9"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "unknown model 'gpt-9'" in done.stdout


@needs_model
@pytest.mark.slow
def test_benchmarks_run_through_inspects_openai_provider(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One CausalGame and one WorldTravel sample through ``openai-api/`` with real calls.

    CausalGame runs its own agent (the 0.5B model calls deploy_drone on its own); on
    WorldTravel the 0.5B model answers in prose, so there the first turn forces a tool
    (``tool_choice="required"`` on the wire: the server's grammar path) and the call runs
    against the world's tools."""
    import polars as pl
    from inspect_ai import eval as inspect_eval
    from inspect_ai.solver import chain, generate, use_tools

    from harness.results import read_results

    monkeypatch.setenv("EVALSUITE_BASE_URL", server)
    monkeypatch.setenv("EVALSUITE_API_KEY", "local")
    root = Path(__file__).resolve().parents[3]
    forced_first_call = chain(use_tools(tool_choice="any"), generate(tool_calls="single"))
    runs = [
        ("benchmarks/causalgame/causalgame.py@causalgame",
         {"epochs": 1, "scenarios": "antenna_trap", "sandbox": "none"}, None),
        ("benchmarks/worldtravel/worldtravel.py@worldtravel", {"max_constraints": 8},
         forced_first_call),
    ]
    for spec, args, solver in runs:
        logs = inspect_eval(str(root / spec), model=f"openai-api/evalsuite/{MODEL}",
                            task_args=args, solver=solver, limit=1, message_limit=8,
                            log_dir=str(tmp_path), display="none", max_retries=1,
                            timeout=300)
        log = logs[0]
        assert log.status == "success", log.error
        assert log.samples
        made = [c for m in log.samples[0].messages if m.role == "assistant"
                for c in (m.tool_calls or [])]  # type: ignore[union-attr]
        assert made, f"{spec}: the model made no tool call through the server"
        turns = sum(m.role == "assistant" for m in log.samples[0].messages)
        if solver is None and turns > 1:  # a multi-turn episode re-uses its own prefix
            usage = next(iter(log.stats.model_usage.values()))
            assert usage.input_tokens_cache_read and usage.input_tokens_cache_read > 0
    frame = read_results(tmp_path)
    validity = frame.filter(pl.col("scorer") == "tool_call_validity")
    assert validity.select("log_file").n_unique() == 2


@pytest.mark.slow
def test_a_server_that_dies_mid_eval_ends_the_sample_with_an_error(tmp_path: Path,
                                                                    monkeypatch) -> None:
    """Kill the server after its first reply: the eval ends (no hang) and says why."""
    import threading

    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    proc, url = _start("smollm2-135m", "--port", "0")
    monkeypatch.setenv("EVALSUITE_BASE_URL", url)
    monkeypatch.setenv("EVALSUITE_API_KEY", "local")
    samples = [Sample(input=f"Count to {i}.", id=str(i)) for i in range(1, 7)]
    killed = threading.Event()

    def kill_after_first_request() -> None:
        time.sleep(3)
        proc.kill()
        killed.set()

    threading.Thread(target=kill_after_first_request, daemon=True).start()
    start = time.time()
    # max_retries=0: a refused connection fails its sample at once (after the OpenAI
    # client's own two quick retries) instead of after Inspect's 3-6 s backoff; with 1
    # retry the six failing samples took ~51 s of this serial test's ~60 s
    log = inspect_eval(Task(dataset=samples, solver=generate()),
                       model="openai-api/evalsuite/smollm2-135m", max_tokens=200,
                       max_connections=1, log_dir=str(tmp_path), display="none",
                       max_retries=0, timeout=20, fail_on_error=False)[0]
    assert killed.is_set()
    assert time.time() - start < 240
    errors = [s.error for s in log.samples or [] if s.error] or [log.error]
    assert any(e is not None and "Connection" in e.message for e in errors), errors
