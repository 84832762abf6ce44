"""Run one sandbox exec through the launcher (:mod:`.launcher`), asynchronously.

Why not Inspect's ``subprocess()``: it forks from the provider's own large process,
starts a child-watcher thread per process and wraps every pipe in asyncio transports;
with three helper programs before bwrap it was over half of an exec's cost. Here the
provider only makes the pipes, hands them to the launcher in one socket record, and
waits on raw file descriptors (``anyio.wait_readable``, so any anyio backend works).

The semantics are Inspect's sandbox ``exec``'s: ``input`` is fed while output is read;
each of stdout and stderr keeps its last ``output_limit`` bytes; ``timeout`` raises
``TimeoutError`` and cancellation propagates, in both cases after the exec's bwrap was
SIGKILLed (its PID namespace, so the whole process tree, goes with it) and reaped.
"""

from __future__ import annotations

import array
import atexit
import json
import os
import socket
import subprocess as sp
import sys
import threading
from contextlib import suppress
from pathlib import Path
from typing import Any

import anyio

from . import launcher as _server

_KILL_WAIT_S = 10.0
"""How long a killed exec may take to be reaped before we stop waiting (it always is)."""
_CHUNK = 65536


class LauncherError(RuntimeError):
    """The launcher could not start an exec (fork failed, or the launcher is gone)."""


class _Launcher:
    """The process-wide launcher and the provider's end of its control socket."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = sp.Popen(
                [sys.executable, "-I", "-S", str(Path(_server.__file__)), str(theirs.fileno())],
                pass_fds=[theirs.fileno()], stdin=sp.DEVNULL, cwd="/", env={},
                start_new_session=True,
            )  # fmt: skip
        finally:
            theirs.close()
        self.control = ours
        self.pid = os.getpid()
        self._send_lock = threading.Lock()

    def alive(self) -> bool:
        return self.pid == os.getpid() and self.process.poll() is None

    def submit(self, data: bytes, fds: list[int]) -> None:
        """Send one request record with its descriptors (blocking briefly)."""
        with self._send_lock:
            self.control.sendmsg(
                [data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
            )

    def close(self) -> None:
        """Close the control socket: the launcher kills what still runs and exits."""
        with suppress(OSError):
            self.control.close()
        with suppress(sp.TimeoutExpired):
            self.process.wait(timeout=5)


_lock = threading.Lock()
_current: _Launcher | None = None


def launcher() -> _Launcher:
    """This process's launcher, started on first use (and again after a fork or a death)."""
    global _current
    with _lock:
        if _current is None or not _current.alive():
            if _current is not None and _current.pid == os.getpid():
                _current.close()
            _current = _Launcher()
        return _current


@atexit.register
def shutdown() -> None:
    """Stop this process's launcher (it is started again when needed); at exit it runs
    after the provider's own cleanup, which was registered later."""
    global _current
    with _lock:
        current, _current = _current, None
    if current is not None and current.pid == os.getpid():
        current.close()


def _request_fds(request: dict[str, Any]) -> tuple[bytes, list[int]]:
    """The record's data and, for a large request, a memfd that holds it instead."""
    payload = json.dumps(request, separators=(",", ":")).encode()
    if len(payload) <= _server.INLINE_MAX:
        return payload, []
    memfd = os.memfd_create("bwrap-exec", os.MFD_CLOEXEC)
    view = memoryview(payload)
    while view:
        view = view[os.write(memfd, view) :]
    return _server.MEMFD_MARK, [memfd]


async def _drain(fd: int, buf: bytearray, limit: int) -> None:
    """Read ``fd`` to EOF, keeping its last ``limit`` bytes."""
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            await anyio.wait_readable(fd)
            continue
        if not chunk:
            return
        buf += chunk
        if len(buf) > limit:
            del buf[: len(buf) - limit]


async def _feed(box: list[int], data: bytes) -> None:
    """Write ``data`` to the pipe in ``box`` and close it (marking the box -1 so nobody
    closes it twice); a reader that went away ends it early."""
    fd, view = box[0], memoryview(data)
    try:
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(fd)
            except (BrokenPipeError, ConnectionResetError):
                return
    finally:
        box[0] = -1
        os.close(fd)


async def _status(sock: socket.socket) -> str:
    """The launcher's one-line answer about this exec (empty if it went away)."""
    line = b""
    while not line.endswith(b"\n"):
        try:
            chunk = sock.recv(256)
        except BlockingIOError:
            await anyio.wait_readable(sock)
            continue
        if not chunk:
            break
        line += chunk
    return line.decode(errors="replace").strip()


def _exit_code(answer: str) -> int:
    kind, _, rest = answer.partition(" ")
    if kind == "exit":
        return int(rest)
    if kind == "error":
        raise LauncherError(f"bwrap sandbox: could not start the exec: {rest}")
    raise LauncherError("bwrap sandbox: the exec launcher went away")


async def run(
    request: dict[str, Any],
    input: bytes | None,
    timeout: float | None,
    output_limit: int,
) -> tuple[int, bytes, bytes]:
    """Run ``request`` (see :mod:`.launcher`) and return (exit code, stdout, stderr)."""
    data, extra = _request_fds(request)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    if input:
        in_r, in_w = os.pipe()
    else:
        in_r, in_w = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC), -1
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        launcher().submit(data, [theirs.fileno(), in_r, out_w, err_w, *extra])
    except BaseException:
        for fd in (out_r, err_r, in_w):
            if fd >= 0:
                os.close(fd)
        ours.close()
        raise
    finally:
        for fd in (in_r, out_w, err_w, *extra):
            os.close(fd)
        theirs.close()
    stdin = [in_w]
    for fd in (out_r, err_r, in_w):
        if fd >= 0:
            os.set_blocking(fd, False)
    ours.setblocking(False)
    stdout, stderr = bytearray(), bytearray()
    answer = ""
    try:
        with anyio.fail_after(timeout):
            async with anyio.create_task_group() as tg:
                if stdin[0] >= 0:
                    tg.start_soon(_feed, stdin, input or b"")
                tg.start_soon(_drain, err_r, stderr, output_limit)
                await _drain(out_r, stdout, output_limit)
            answer = await _status(ours)
    except BaseException:
        # timeout, cancellation or an error here: kill the exec, and see it reaped
        with anyio.CancelScope(shield=True):
            with suppress(OSError):
                ours.send(b"k")
            with anyio.move_on_after(_KILL_WAIT_S):
                await _status(ours)
        raise
    finally:
        for fd in (out_r, err_r, stdin[0]):
            if fd >= 0:
                os.close(fd)
        ours.close()
    return _exit_code(answer), bytes(stdout), bytes(stderr)
