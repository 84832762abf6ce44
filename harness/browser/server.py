"""A static file server on 127.0.0.1 and a free port, one per sample.

Why per sample: each sample's browser may only talk to its own origin, and a private
port keeps concurrent samples (and their request logs) apart. Threaded stdlib server:
static files only, no directory listings outside the root, quiet logs.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path
from typing import Any


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        """Record the request path instead of printing it."""
        requests: list[str] | None = getattr(self.server, "requests", None)
        if requests is not None:
            requests.append(self.path)


class StaticSiteServer:
    """Serve ``root`` at ``http://127.0.0.1:<free port>``; use as a (sync) context manager."""

    def __init__(self, root: Path, host: str = "127.0.0.1") -> None:
        self.root = Path(root)
        self.host = host
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[str] = []

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`)."""
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> StaticSiteServer:
        """Bind a free port and serve in a daemon thread."""
        handler = functools.partial(_Handler, directory=str(self.root))
        server = http.server.ThreadingHTTPServer((self.host, 0), handler)
        server.daemon_threads = True
        server.requests = self.requests  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> StaticSiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
