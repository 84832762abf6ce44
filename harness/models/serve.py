"""``harness serve MODEL``: a ladder model behind an OpenAI-compatible server on loopback.

    harness serve qwen2.5-coder-0.5b --port 8011
    EVALSUITE_BASE_URL=http://127.0.0.1:8011/v1 EVALSUITE_API_KEY=local \\
        inspect eval benchmarks/worldtravel --model openai-api/evalsuite/qwen2.5-coder-0.5b

Why our own server: neither llama-cpp-python's server nor llama.cpp's ``llama-server
--jinja`` returns OpenAI ``tool_calls`` for Qwen2.5-Coder 0.5B/1.5B (they answer tool
requests with bare JSON or a fenced block, see ``shared/notes/machine-recipes.md``). This
server runs the same :class:`~harness.models.llama_engine.ChatEngine` as ``embedded/`` (the
model's template with its tools block, a grammar when a tool is forced, the lenient
parser, per-conversation prefix reuse) and puts the calls on the wire, so a benchmark
reaches it through Inspect's own OpenAI-compatible provider exactly as it reaches a
``vllm serve`` deployment.

What it speaks: ``GET /v1/models``, ``GET /health``, ``POST /v1/chat/completions`` (tools,
``tool_choice`` auto/none/required/named, ``max_tokens``/``max_completion_tokens``,
``temperature``, ``top_p``, ``stop``, ``seed``, ``stream``). A call that does not parse goes
out with its raw text as ``arguments`` (not valid JSON), so the client marks it a parse
error and the model is told; a prompt longer than the window is a 400 with code
``context_length_exceeded``. Standard library only (``http.server``), one thread per
request. Concurrent requests are decoded together (``--parallel N``, default
:data:`PARALLEL`): a :class:`~harness.models.batch_decode.BatchDecoder` gives each a
sequence of its own in one llama context and evaluates a token of every one of them per
``llama_decode``, so four clients get more tokens per second in all than one (measured in
``tests/perf/test_serve_batching_perf.py``); ``--parallel 1`` decodes one request at a time
on the engine itself. Replies are the same either way at temperature 0 and for a given
seed (tested on SmolLM2-135M and Qwen2.5-Coder-0.5B). It binds 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import errno
import json
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from inspect_ai.model import GenerateConfig

from harness.models._common import call_seed, split_reply
from harness.models.batch_decode import MAX_SLOTS, BatchDecoder
from harness.models.embedded import llama_kwargs
from harness.models.llama_engine import ChatEngine
from harness.models.toolprompt import wire_messages

SERVICE = "evalsuite"
"""The ``openai-api/<service>/`` name the printed ``--model`` string uses."""


class ServeError(RuntimeError):
    """A server that cannot start (port in use, unknown model), with the fix."""


@dataclass
class RequestError(Exception):
    """An OpenAI-shaped error response (``param`` names the offending parameter)."""

    status: int
    message: str
    code: str | None = None
    param: str | None = None

    def payload(self) -> dict[str, Any]:
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        return {"error": {"message": self.message, "type": kind, "param": self.param,
                          "code": self.code}}


MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest request body read (a 32k-token conversation is well under 1 MB)."""
_ROLES = ("system", "developer", "user", "assistant", "tool")


def _bad(param: str, message: str) -> RequestError:
    return RequestError(400, f"{param}: {message}", "invalid_value", param)


def _number(body: dict[str, Any], name: str) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(name, f"must be a number, got {value!r}")
    return float(value)


def validate_request(body: Any) -> dict[str, Any]:
    """The request body checked as OpenAI checks it; the first problem is a 400 naming
    the parameter (never a 500 from deeper down, never a value llama.cpp reads otherwise:
    ``max_tokens: -5`` meant "until the window is full")."""
    if not isinstance(body, dict):
        raise RequestError(400, f"the request body must be a JSON object, got "
                           f"{type(body).__name__}", "invalid_type", None)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages", "must be a non-empty list")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _bad(f"messages[{i}]", "must be an object")
        if message.get("role") not in _ROLES:
            raise _bad(f"messages[{i}].role", f"must be one of {', '.join(_ROLES)}, "
                                               f"got {message.get('role')!r}")
        content = message.get("content")
        if content is not None and not isinstance(content, str | list):
            raise _bad(f"messages[{i}].content", "must be a string, a list of parts or null")
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise _bad(f"messages[{i}].tool_calls", "must be a list")
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise _bad("tools", "must be a list")
        for i, tool in enumerate(tools):
            function = tool.get("function") if isinstance(tool, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise _bad(f"tools[{i}]", "must be {\"type\": \"function\", "
                                          "\"function\": {\"name\": ...}}")
    for name in ("max_tokens", "max_completion_tokens"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise _bad(name, f"must be a positive integer, got {value!r}")
    temperature = _number(body, "temperature")
    if temperature is not None and not 0.0 <= temperature <= 2.0:
        raise _bad("temperature", f"must be in [0, 2], got {body['temperature']!r}")
    top_p = _number(body, "top_p")
    if top_p is not None and not 0.0 < top_p <= 1.0:
        raise _bad("top_p", f"must be in (0, 1], got {body['top_p']!r}")
    for name in ("frequency_penalty", "presence_penalty"):
        penalty = _number(body, name)
        if penalty is not None and not -2.0 <= penalty <= 2.0:
            raise _bad(name, f"must be in [-2, 2], got {body[name]!r}")
    top_k = body.get("top_k")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int)
                              or top_k < 0):
        raise _bad("top_k", f"must be a non-negative integer, got {top_k!r}")
    n = body.get("n")
    if n is not None and n != 1:
        raise _bad("n", f"only n = 1 is supported, got {n!r}")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise _bad("seed", f"must be an integer, got {seed!r}")
    stop = body.get("stop")
    if stop is not None and not isinstance(stop, str) and not (
            isinstance(stop, list) and all(isinstance(x, str) for x in stop)):
        raise _bad("stop", "must be a string or a list of strings")
    if body.get("stream") is not None and not isinstance(body.get("stream"), bool):
        raise _bad("stream", f"must be true or false, got {body.get('stream')!r}")
    choice = body.get("tool_choice")
    if choice is not None and not (choice in ("auto", "none", "required")
                                   or isinstance(choice, dict)):
        raise _bad("tool_choice", f"must be auto, none, required or a named function, "
                                  f"got {choice!r}")
    return body


def _tool_choice(choice: Any, tools: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(inspect-style choice, forced tools) of an OpenAI ``tool_choice``."""
    if choice in (None, "auto"):
        return "auto", []
    if choice == "none":
        return "none", []
    if choice == "required":
        return "any", tools
    if isinstance(choice, dict):
        name = choice.get("function", {}).get("name")
        forced = [t for t in tools if t.get("function", {}).get("name") == name]
        if not forced:
            raise _bad("tool_choice", f"names {name!r}, which is not in tools")
        return "named", forced
    raise _bad("tool_choice", f"unsupported value {choice!r}")


def _wire_call(call: Any) -> dict[str, Any]:
    # a malformed call keeps its error text as arguments, opened with a brace but not JSON:
    # the client then marks the call a parse error and hands the message back to the model
    arguments = "{" + call.parse_error if call.parse_error else json.dumps(call.arguments)
    return {"id": call.id, "type": "function",
            "function": {"name": call.function, "arguments": arguments}}


def chat_completion(engine: ChatEngine, model: str, body: dict[str, Any],
                    defaults: dict[str, float] | None = None,
                    decoder: BatchDecoder | None = None) -> dict[str, Any]:
    """One ``/v1/chat/completions`` response body for a request ``body`` (decoded in the
    ``decoder``'s batch when there is one, else by the engine alone)."""
    validate_request(body)
    tools: list[dict[str, Any]] = body.get("tools") or []
    choice, forced = _tool_choice(body.get("tool_choice"), tools)
    messages = wire_messages(body["messages"])
    described = tools  # listed under "none" too: the prompt keeps the conversation's prefix
    stop = body.get("stop") or []
    try:
        config = GenerateConfig(
            max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
            temperature=body.get("temperature"), top_p=body.get("top_p"),
            top_k=body.get("top_k"), stop_seqs=[stop] if isinstance(stop, str) else stop,
            seed=body.get("seed"), frequency_penalty=body.get("frequency_penalty"),
            presence_penalty=body.get("presence_penalty"),
        )
    except ValueError as exc:
        raise RequestError(400, f"bad sampling parameters: {exc}", "invalid_value") from exc
    sampling = llama_kwargs(config, defaults)
    sampling["seed"] = call_seed(engine.prompt(messages, described), config.seed)
    complete = decoder.complete if decoder is not None else engine.complete
    done = complete(messages, described, forced, sampling)
    if done.finish_reason == "model_length":
        raise RequestError(400, f"prompt of {done.prompt_tokens} tokens exceeds the "
                           f"{engine.window()}-token context", "context_length_exceeded")
    names = [t.get("function", {}).get("name", "") for t in described]
    content, calls = split_reply(done.text, names, "none" if choice == "none" else "auto")
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [_wire_call(c) for c in calls]
    finish = "tool_calls" if calls else ("length" if done.finish_reason == "length" else "stop")
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": done.prompt_tokens,
            "completion_tokens": done.completion_tokens,
            "total_tokens": done.prompt_tokens + done.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": done.cached_tokens},
        },
    }


def _stream_chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The whole reply as two SSE chunks (delta, then finish + usage)."""
    choice = response["choices"][0]
    delta = dict(choice["message"])
    if "tool_calls" in delta:
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(delta["tool_calls"])]
    base = {k: response[k] for k in ("id", "created", "model")} | {
        "object": "chat.completion.chunk"}
    return [
        base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        base | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
                "usage": response["usage"]},
    ]


class Admission:
    """A bounded count of requests inside the server (queued for the engine or running).

    Why: generation has bounded width (one engine, ``--parallel`` sequences at once), so
    a burst of clients queues; past
    ``max_pending`` a request is answered at once with 503 and ``Retry-After`` instead of
    waiting without bound, and the listen backlog (:data:`LISTEN_BACKLOG`) keeps the
    kernel from resetting connections while the server accepts them.
    """

    def __init__(self, max_pending: int) -> None:
        self.max_pending = max_pending
        self._count = 0
        self._lock = threading.Lock()

    def enter(self) -> bool:
        with self._lock:
            if self._count >= self.max_pending:
                return False
            self._count += 1
            return True

    def leave(self) -> None:
        with self._lock:
            self._count -= 1


MAX_PENDING = 64
"""Requests admitted at once by default: Inspect's default connection count for an
OpenAI-compatible provider is 10 per model, so several evals fit before any is refused."""
LISTEN_BACKLOG = 128
"""The socket's accept queue (the standard library's 5 reset a burst of 20 clients)."""
IDLE_TIMEOUT_S = 120.0
"""A connection that sends nothing for this long is closed (keep-alive clients reconnect)."""
RETRY_AFTER_S = 2
PARALLEL = 4
"""Requests decoded together by default: on two cores four concurrent requests to the 135M
and 0.5B models got 1.4x and 1.8x the aggregate tokens per second of the same four sent one
at a time (tests/perf/test_serve_batching_perf.py); each slot costs a full window of KV."""


def _disconnected(exc: BaseException) -> bool:
    return isinstance(exc, BrokenPipeError | ConnectionResetError | ConnectionAbortedError
                      | TimeoutError)


def make_handler(engine: ChatEngine, model: str, defaults: dict[str, float] | None = None,
                 admission: Admission | None = None, decoder: BatchDecoder | None = None
                 ) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to one engine (and the model's sampling defaults).

    Generation runs on the engine's own worker thread, never on the request's thread (see
    :attr:`ChatEngine.worker`): with a ``decoder`` the request thread renders the prompt and
    waits while the worker decodes it in a batch with the others; without one the whole
    request runs on the worker, one at a time."""
    gate = admission or Admission(MAX_PENDING)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = IDLE_TIMEOUT_S  # socket timeout: an idle keep-alive connection is closed

        def log_message(self, format: str, *args: Any) -> None:  # quiet by default
            return

        def _send(self, status: int, payload: dict[str, Any],
                  headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError as exc:
                self._gone(exc)

        def _gone(self, exc: BaseException) -> None:
            """A client that went away costs one log line, not a traceback."""
            self.close_connection = True
            print(f"serve: client {self.client_address[0]}:{self.client_address[1]} "
                  f"disconnected ({type(exc).__name__})", file=sys.stderr, flush=True)

        def _error(self, err: RequestError, headers: dict[str, str] | None = None) -> None:
            self._send(err.status, err.payload(), headers)

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.rstrip("/") in ("/health", "/v1/health"):
                self._send(200, {"status": "ok", "model": model})
            elif self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [
                    {"id": model, "object": "model", "owned_by": SERVICE}]})
            else:
                self._error(RequestError(404, f"no route {self.path}", "not_found"))

        def _body(self) -> Any:
            """The request's JSON body, or a 400/411/413 naming what is wrong with it."""
            raw_length = self.headers.get("Content-Length")
            if raw_length is None:
                raise RequestError(411, "a Content-Length header is required",
                                   "length_required")
            try:
                length = int(raw_length)
            except ValueError:
                raise RequestError(400, f"Content-Length must be an integer, got "
                                   f"{raw_length!r}", "invalid_header") from None
            if length < 0:
                raise RequestError(400, f"Content-Length must be >= 0, got {length}",
                                   "invalid_header")
            if length > MAX_BODY_BYTES:
                self.close_connection = True
                raise RequestError(413, f"request body of {length} bytes exceeds "
                                   f"{MAX_BODY_BYTES}", "request_too_large")
            raw = self.rfile.read(length)
            if len(raw) < length:
                self.close_connection = True
                raise RequestError(400, f"request body ended after {len(raw)} of {length} "
                                   "bytes", "incomplete_body")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise RequestError(400, f"request body is not UTF-8 (byte {exc.start})",
                                   "invalid_encoding") from None
            try:
                return json.loads(text or "{}")
            except json.JSONDecodeError as exc:
                raise RequestError(400, f"request body is not JSON: {exc}",
                                   "invalid_json") from None

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._error(RequestError(404, f"no route {self.path}", "not_found"))
                return
            try:
                body = validate_request(self._body())
            except RequestError as err:
                self._error(err)
                return
            except OSError as exc:  # the client went away while sending
                self._gone(exc)
                return
            if not gate.enter():
                self._error(RequestError(503, f"{gate.max_pending} requests are already "
                                         "waiting for the model; retry later",
                                         "server_busy"),
                            {"Retry-After": str(RETRY_AFTER_S)})
                return
            try:
                if decoder is not None:
                    response = chat_completion(engine, model, body, defaults, decoder)
                else:
                    response = engine.worker.submit(chat_completion, engine, model, body,
                                                    defaults).result()
            except RequestError as err:
                self._error(err)
                return
            except Exception as err:  # a bug or a llama failure: a 500, the server lives on
                self._error(RequestError(500, f"{type(err).__name__}: {err}"))
                return
            finally:
                gate.leave()
            if body.get("stream"):
                self._stream(response)
            else:
                self._send(200, response)

        def _stream(self, response: dict[str, Any]) -> None:
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in _stream_chunks(response):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
            except OSError as exc:
                self._gone(exc)
            self.close_connection = True

    return Handler


class _Server(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a deep accept queue and one-line connection errors."""

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if exc is not None and _disconnected(exc):
            print(f"serve: client {client_address[0]}:{client_address[1]} disconnected "
                  f"({type(exc).__name__})", file=sys.stderr, flush=True)
            return
        super().handle_error(request, client_address)


def check_port(host: str, port: int) -> None:
    """Fail now, with the fix, if ``host:port`` cannot be bound."""
    import socket

    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ServeError(f"port {port} is in use on {host}: pass another --port (or 0 "
                                 "for a free one), or stop the process that holds it") from exc
            raise ServeError(f"cannot bind {host}:{port}: {exc}") from exc


def bind(engine: ChatEngine, model: str, host: str = "127.0.0.1", port: int = 0,
         defaults: dict[str, float] | None = None,
         max_pending: int = MAX_PENDING, parallel: int = 1) -> ThreadingHTTPServer:
    """A bound (not yet serving) server; port 0 picks a free one. A port in use is a
    :class:`ServeError` that says so, never a hang. ``max_pending`` requests are admitted
    at once; more are answered 503 with ``Retry-After`` (:class:`Admission`). ``parallel``
    above 1 decodes that many requests together (:class:`BatchDecoder`)."""
    if max_pending < 1:
        raise ServeError(f"max_pending must be >= 1, got {max_pending}")
    if not 1 <= parallel <= MAX_SLOTS:
        raise ServeError(f"parallel must be in [1, {MAX_SLOTS}], got {parallel}")
    decoder = BatchDecoder(engine, parallel) if parallel > 1 else None
    try:
        server = _Server((host, port), make_handler(engine, model, defaults,
                                                    Admission(max_pending), decoder))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ServeError(f"port {port} is in use on {host}: pass another --port (or 0 for "
                             "a free one), or stop the process that holds it") from exc
        raise ServeError(f"cannot bind {host}:{port}: {exc}") from exc
    server.daemon_threads = True
    return server


def usage_lines(model: str, base_url: str) -> list[str]:
    """What to pass to Inspect to reach this server."""
    return [
        f"serving {model} at {base_url}",
        f"  EVALSUITE_BASE_URL={base_url} EVALSUITE_API_KEY=local "
        f"inspect eval TASK --model openai-api/{SERVICE}/{model}",
        f"  or: VLLM_BASE_URL={base_url} VLLM_API_KEY=local inspect eval TASK "
        f"--model vllm/{model}",
    ]


def serve_forever(server: ThreadingHTTPServer) -> None:
    """Serve until SIGINT/SIGTERM, then close the socket and return."""
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        stop.wait()
    finally:
        server.shutdown()
        server.server_close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
