"""Fault injection on ``harness serve``: malformed requests, a burst of clients, a client
that leaves mid-stream. Loopback only.

Malformed requests are checked against the server's own handler with an engine that must
never be reached (a request the validation lets through fails the test); the burst and the
disconnect run against the real smallest ladder model (SmolLM2-135M, shipped in a PyPI
package), bounded in count (32 clients) and time.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from harness.models import ladder
from harness.models.serve import Admission, _Server, make_handler

SMALLEST = "smollm2-135m"
GOOD = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


class _Unreachable:
    """An engine whose use means a malformed request got past validation."""

    class worker:  # noqa: N801 (mirrors ChatEngine.worker)
        @staticmethod
        def submit(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a malformed request reached the engine")


@pytest.fixture(scope="module")
def fake_server() -> Iterator[int]:
    server = _Server(("127.0.0.1", 0), make_handler(_Unreachable(), "m",  # type: ignore[arg-type]
                                                    admission=Admission(4)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def _raw(port: int, body: bytes, headers: dict[str, str] | None = None
         ) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    sent = {"Content-Type": "application/json", **(headers or {})}
    if "Content-Length" not in sent:
        sent["Content-Length"] = str(len(body))
    conn.putrequest("POST", "/v1/chat/completions", skip_accept_encoding=True)
    for name, value in sent.items():
        conn.putheader(name, value)
    conn.endheaders()
    conn.send(body)
    response = conn.getresponse()
    payload = json.loads(response.read() or b"{}")
    conn.close()
    return response.status, payload


MALFORMED: dict[str, tuple[bytes, dict[str, str], str | None]] = {
    "a JSON list": (b"[1, 2]", {}, None),
    "non-UTF-8 bytes": (b'{"messages": "\xff\xfe"}', {}, None),
    "not JSON": (b"{messages: [", {}, None),
    "non-numeric Content-Length": (b"{}", {"Content-Length": "ten"}, None),
    "no messages": (json.dumps({"model": "m"}).encode(), {}, "messages"),
    "messages not a list": (json.dumps({**GOOD, "messages": "hi"}).encode(), {}, "messages"),
    "a message without role": (json.dumps({**GOOD, "messages": [{"content": "x"}]}).encode(),
                               {}, "messages[0].role"),
    "content a number": (json.dumps({**GOOD, "messages": [{"role": "user", "content": 5}]})
                         .encode(), {}, "messages[0].content"),
    "tools not a list": (json.dumps({**GOOD, "tools": {"a": 1}}).encode(), {}, "tools"),
    "a tool without name": (json.dumps({**GOOD, "tools": [{"type": "function"}]}).encode(),
                            {}, "tools[0]"),
    "max_tokens -5": (json.dumps({**GOOD, "max_tokens": -5}).encode(), {}, "max_tokens"),
    "max_tokens 0": (json.dumps({**GOOD, "max_tokens": 0}).encode(), {}, "max_tokens"),
    "max_tokens 2.5": (json.dumps({**GOOD, "max_tokens": 2.5}).encode(), {}, "max_tokens"),
    "max_completion_tokens true": (json.dumps({**GOOD, "max_completion_tokens": True})
                                   .encode(), {}, "max_completion_tokens"),
    "temperature 3": (json.dumps({**GOOD, "temperature": 3}).encode(), {}, "temperature"),
    "temperature text": (json.dumps({**GOOD, "temperature": "hot"}).encode(), {},
                         "temperature"),
    "top_p 0": (json.dumps({**GOOD, "top_p": 0}).encode(), {}, "top_p"),
    "top_p 1.5": (json.dumps({**GOOD, "top_p": 1.5}).encode(), {}, "top_p"),
    "n 2": (json.dumps({**GOOD, "n": 2}).encode(), {}, "n"),
    "stop a number": (json.dumps({**GOOD, "stop": 7}).encode(), {}, "stop"),
    "stream a string": (json.dumps({**GOOD, "stream": "yes"}).encode(), {}, "stream"),
    "tool_choice bogus": (json.dumps({**GOOD, "tool_choice": "sometimes"}).encode(), {},
                          "tool_choice"),
    "seed text": (json.dumps({**GOOD, "seed": "s"}).encode(), {}, "seed"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_every_malformed_request_is_a_400_in_openai_shape(fake_server: int, case: str) -> None:
    body, headers, param = MALFORMED[case]
    status, payload = _raw(fake_server, body, headers)
    assert status == 400, (case, payload)
    error = payload["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    assert error.get("param") == param


def test_a_body_larger_than_allowed_is_413_without_reading_it(fake_server: int) -> None:
    status, payload = _raw(fake_server, b"{}", {"Content-Length": str(1 << 40)})
    assert status == 413 and payload["error"]["code"] == "request_too_large"


@pytest.fixture(scope="module")
def real_server() -> Iterator[tuple[str, int]]:
    if not ladder.status(ladder.get(SMALLEST))["ready"]:
        pytest.fail(f"{SMALLEST} ships with the test install (.ci/setup.sh) but is not "
                    "ready here")
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "serve", SMALLEST,
                             "--port", "0", "--max-pending", "8", "--n-ctx", "2048",
                             "--threads", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"at http://127\.0\.0\.1:(\d+)/v1", line)
    if not match:
        proc.kill()
        raise AssertionError(f"no address in {line!r}: {proc.stderr.read()}")  # type: ignore[union-attr]
    yield "127.0.0.1", int(match.group(1))
    proc.terminate()
    _, stderr = proc.communicate(timeout=30)
    assert "Traceback" not in stderr, stderr


@pytest.mark.slow
def test_32_concurrent_clients_are_answered_or_told_to_retry(
        real_server: tuple[str, int]) -> None:
    host, port = real_server
    body = json.dumps({**GOOD, "max_tokens": 4, "temperature": 0}).encode()
    outcomes: list[tuple[int, str | None] | str] = []
    lock = threading.Lock()
    start = threading.Barrier(32)

    def client() -> None:
        start.wait()
        try:
            conn = http.client.HTTPConnection(host, port, timeout=120)
            conn.request("POST", "/v1/chat/completions", body,
                         {"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            result: tuple[int, str | None] | str = (response.status,
                                                    response.getheader("Retry-After"))
            conn.close()
        except OSError as exc:  # a reset or refused connection: what the backlog prevents
            result = f"{type(exc).__name__}: {exc}"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=client) for _ in range(32)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert time.monotonic() - began < 300
    assert len(outcomes) == 32
    failures = [o for o in outcomes if isinstance(o, str)]
    assert not failures, failures
    statuses = sorted(o[0] for o in outcomes if not isinstance(o, str))
    assert set(statuses) <= {200, 503}, statuses
    assert statuses.count(200) >= 8  # every admitted request was answered
    assert all(o[1] is not None for o in outcomes if not isinstance(o, str) and o[0] == 503)


@pytest.mark.slow
def test_a_client_that_leaves_mid_stream_costs_a_line_not_the_server(
        real_server: tuple[str, int]) -> None:
    host, port = real_server
    body = json.dumps({**GOOD, "max_tokens": 4, "stream": True}).encode()
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    time.sleep(1.0)
    conn = http.client.HTTPConnection(host, port, timeout=60)
    conn.request("GET", "/health")
    assert conn.getresponse().status == 200


def test_an_idle_connection_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.models.serve as serve

    monkeypatch.setattr(serve, "IDLE_TIMEOUT_S", 0.5)
    server = _Server(("127.0.0.1", 0), make_handler(_Unreachable(), "m"))  # type: ignore[arg-type]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(server.server_address[:2], timeout=10) as sock:
            began = time.monotonic()
            assert sock.recv(1) == b""  # the server hung up on a client that sent nothing
            assert time.monotonic() - began < 5
    finally:
        server.shutdown()
        server.server_close()
