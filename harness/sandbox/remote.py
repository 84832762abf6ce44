"""``exec_remote()`` for the bwrap sandbox: a streaming process handle without a server.

Inspect's default ``exec_remote`` starts its tool-support server in the sandbox and polls
it over JSON-RPC (at least every 5 s). A bwrap sample's processes are children of the
host process, so here the handle holds the sandboxed process itself: output arrives as
it is written, ``kill()`` kills the exec's bwrap (its PID namespace and everything in it
go with it), and stdin is a pipe. The handle honours the public contract of
:class:`inspect_ai.util.ExecRemoteProcess` (iterate once for ``ExecStdout`` /
``ExecStderr`` events and a final ``ExecCompleted``; a killed process yields no
``ExecCompleted``; cancellation kills it).
"""

from __future__ import annotations

import codecs
import contextlib
import queue
import subprocess as sp
import threading
from typing import IO

import anyio
from inspect_ai.util import (
    ExecCompleted,
    ExecOutput,
    ExecRemoteAwaitableOptions,
    ExecRemoteProcess,
    ExecRemoteStreamingOptions,
    ExecResult,
    ExecStderr,
    ExecStdout,
    SandboxEnvironmentLimits,
)

_CHUNK = 65536
Options = ExecRemoteStreamingOptions | ExecRemoteAwaitableOptions
_DONE = object()


class BwrapRemoteProcess(ExecRemoteProcess):
    """A running exec of a bwrap sample (see the module docstring).

    Why threads: the handle outlives the call that made it (fire-and-forget servers), so
    no task group of the caller can own its readers; two reader threads per process feed
    a queue that the async iterator drains, with its own thread limiter so long waits
    never take the tokens of anyio's shared pool.
    """

    def __init__(self, argv: list[str], options: Options) -> None:
        # The base class's state is its JSON-RPC transport; none of it applies here.
        self._stdin_open = isinstance(options, ExecRemoteStreamingOptions) and options.stdin_open
        data = options.input.encode() if isinstance(options.input, str) else options.input
        self._process = sp.Popen(
            argv, stdin=sp.PIPE if (self._stdin_open or data) else sp.DEVNULL,
            stdout=sp.PIPE, stderr=sp.PIPE, cwd="/",
        )  # fmt: skip
        self._killed = False
        self._completed = False
        self._iteration_started = False
        self._queue: queue.Queue[object] = queue.Queue()
        self._limiter = anyio.CapacityLimiter(1)
        self._open_readers = 2
        self._lock = threading.Lock()
        assert self._process.stdout is not None and self._process.stderr is not None
        for stream, kind in ((self._process.stdout, ExecStdout),
                             (self._process.stderr, ExecStderr)):  # fmt: skip
            threading.Thread(target=self._read, args=(stream, kind), daemon=True).start()
        if self._process.stdin is not None:
            if data:
                threading.Thread(target=self._feed, args=(data,), daemon=True).start()
            elif not self._stdin_open:
                self._process.stdin.close()

    def _feed(self, data: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        with contextlib.suppress(OSError, ValueError):
            stdin.write(data)
            stdin.flush()
            if not self._stdin_open:
                stdin.close()

    def _read(self, stream: IO[bytes], kind: type[ExecStdout] | type[ExecStderr]) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read1(_CHUNK):  # type: ignore[attr-defined]
                if text := decoder.decode(chunk):
                    self._queue.put(kind(data=text))
        if tail := decoder.decode(b"", final=True):
            self._queue.put(kind(data=tail))
        with self._lock:
            self._open_readers -= 1
            last = self._open_readers == 0
        if last:  # both pipes closed: the exit status follows at once
            self._queue.put(ExecCompleted(exit_code=self._process.wait()))
            self._queue.put(_DONE)

    @property
    def pid(self) -> int:
        """Host pid of the exec's bwrap (not the command's pid inside its namespace)."""
        return self._process.pid

    def __aiter__(self) -> BwrapRemoteProcess:
        if self._iteration_started:
            raise RuntimeError("ExecRemoteProcess can only be iterated once")
        self._iteration_started = True
        return self

    async def __anext__(self) -> ExecOutput:
        while True:
            if self._completed:
                raise StopAsyncIteration
            try:
                event = self._queue.get_nowait()
            except queue.Empty:
                try:
                    event = await anyio.to_thread.run_sync(
                        self._queue.get, abandon_on_cancel=True, limiter=self._limiter
                    )
                except anyio.get_cancelled_exc_class():
                    with anyio.CancelScope(shield=True):
                        await self.kill()
                    raise
            if event is _DONE:
                self._completed = True
                raise StopAsyncIteration
            if self._killed and isinstance(event, ExecCompleted):
                continue  # as in Inspect: a killed process yields no ExecCompleted
            assert isinstance(event, ExecStdout | ExecStderr | ExecCompleted)
            return event

    def _check_stdin(self) -> None:
        if not self._stdin_open:
            raise RuntimeError("stdin requires stdin_open=True in ExecRemoteStreamingOptions")

    async def write_stdin(self, data: str | bytes) -> None:
        self._check_stdin()
        stdin = self._process.stdin
        if self._killed or self._process.poll() is not None or stdin is None or stdin.closed:
            raise RuntimeError("Cannot write to stdin: process has terminated")
        payload = data.encode() if isinstance(data, str) else data

        def write() -> None:
            stdin.write(payload)
            stdin.flush()

        await anyio.to_thread.run_sync(write, limiter=self._limiter)

    async def close_stdin(self) -> None:
        self._check_stdin()
        if self._process.stdin is not None and not self._process.stdin.closed:
            with contextlib.suppress(OSError):
                self._process.stdin.close()

    async def kill(self) -> None:
        """Kill the exec (its whole namespace); idempotent, and a no-op once it ended."""
        if self._killed or self._process.poll() is not None:
            return
        self._killed = True
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        await anyio.to_thread.run_sync(self._process.wait, limiter=self._limiter)


async def awaitable(
    handle: BwrapRemoteProcess, options: Options
) -> ExecResult[str]:
    """Collect a handle's output into an ``ExecResult`` (trailing part kept past Inspect's
    exec output limit); a ``timeout`` in the options kills it and raises ``TimeoutError``."""
    limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
    out: dict[type, str] = {ExecStdout: "", ExecStderr: ""}
    code = -1
    timeout = options.timeout if isinstance(options, ExecRemoteAwaitableOptions) else None
    try:
        with anyio.fail_after(timeout):
            async for event in handle:
                if isinstance(event, ExecCompleted):
                    code = event.exit_code
                else:
                    out[type(event)] = (out[type(event)] + event.data)[-limit:]
    except TimeoutError:
        with anyio.CancelScope(shield=True):
            await handle.kill()
        raise
    return ExecResult(code == 0, code, out[ExecStdout], out[ExecStderr])
