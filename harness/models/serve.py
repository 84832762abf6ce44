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
request, the engine's lock serialising generation. It binds 127.0.0.1 unless told
otherwise.
"""

from __future__ import annotations

import errno
import json
import signal
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from inspect_ai.model import GenerateConfig

from harness.models._common import call_seed, split_reply
from harness.models.embedded import llama_kwargs
from harness.models.llama_engine import ChatEngine
from harness.models.toolprompt import wire_messages

SERVICE = "evalsuite"
"""The ``openai-api/<service>/`` name the printed ``--model`` string uses."""


class ServeError(RuntimeError):
    """A server that cannot start (port in use, unknown model), with the fix."""


@dataclass
class RequestError(Exception):
    """An OpenAI-shaped error response."""

    status: int
    message: str
    code: str = "invalid_request_error"


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
            raise RequestError(400, f"tool_choice names {name!r}, which is not in tools")
        return "named", forced
    raise RequestError(400, f"unsupported tool_choice {choice!r}")


def _wire_call(call: Any) -> dict[str, Any]:
    # a malformed call keeps its error text as arguments, opened with a brace but not JSON:
    # the client then marks the call a parse error and hands the message back to the model
    arguments = "{" + call.parse_error if call.parse_error else json.dumps(call.arguments)
    return {"id": call.id, "type": "function",
            "function": {"name": call.function, "arguments": arguments}}


def chat_completion(engine: ChatEngine, model: str, body: dict[str, Any],
                    defaults: dict[str, float] | None = None) -> dict[str, Any]:
    """One ``/v1/chat/completions`` response body for a request ``body``."""
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        raise RequestError(400, "'messages' must be a non-empty list")
    tools: list[dict[str, Any]] = body.get("tools") or []
    choice, forced = _tool_choice(body.get("tool_choice"), tools)
    messages = wire_messages(body["messages"])
    described = tools if choice != "none" or engine.native_tools else []
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
        raise RequestError(400, f"bad sampling parameters: {exc}") from exc
    sampling = llama_kwargs(config, defaults)
    sampling["seed"] = call_seed(engine.prompt(messages, described), config.seed)
    done = engine.complete(messages, described, forced, sampling)
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


def make_handler(engine: ChatEngine, model: str,
                 defaults: dict[str, float] | None = None) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to one engine (and the model's sampling defaults).

    Generation runs on the engine's own worker thread, never on the request's thread (see
    :attr:`ChatEngine.worker`)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet by default
            return

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.rstrip("/") in ("/health", "/v1/health"):
                self._send(200, {"status": "ok", "model": model})
            elif self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [
                    {"id": model, "object": "model", "owned_by": SERVICE}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}",
                                           "type": "invalid_request_error"}})

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}",
                                           "type": "invalid_request_error"}})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError as exc:
                    raise RequestError(400, f"request body is not JSON: {exc}") from exc
                response = engine.worker.submit(chat_completion, engine, model, body,
                                                defaults).result()
            except RequestError as err:
                self._send(err.status, {"error": {"message": err.message,
                                                  "type": "invalid_request_error",
                                                  "code": err.code}})
                return
            except Exception as err:  # a bug or a llama failure: a 500, the server lives on
                self._send(500, {"error": {"message": f"{type(err).__name__}: {err}",
                                           "type": "server_error"}})
                return
            if body.get("stream"):
                self._stream(response)
            else:
                self._send(200, response)

        def _stream(self, response: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in _stream_chunks(response):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.close_connection = True

    return Handler


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
         defaults: dict[str, float] | None = None) -> ThreadingHTTPServer:
    """A bound (not yet serving) server; port 0 picks a free one. A port in use is a
    :class:`ServeError` that says so, never a hang."""
    try:
        server = ThreadingHTTPServer((host, port), make_handler(engine, model, defaults))
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
