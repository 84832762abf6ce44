"""``exec_remote()`` of the bwrap sandbox: streaming, stdin, kill, awaitable and timeout."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from inspect_ai.util import (
    ExecCompleted,
    ExecRemoteAwaitableOptions,
    ExecRemoteStreamingOptions,
    ExecStderr,
    ExecStdout,
)

from harness.sandbox.bwrap import BwrapSandboxEnvironment, bwrap_available
from harness.sandbox.limits import BwrapConfig

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot start here"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def env(anyio_backend: str) -> AsyncIterator[BwrapSandboxEnvironment]:
    box = BwrapSandboxEnvironment(BwrapConfig())
    try:
        yield box
    finally:
        box.cleanup()


async def test_streams_stdout_and_stderr_then_completes(env: BwrapSandboxEnvironment) -> None:
    proc = await env.exec_remote(["sh", "-c", "echo out; echo err >&2; exit 3"])
    events = [event async for event in proc]
    assert "".join(e.data for e in events if isinstance(e, ExecStdout)) == "out\n"
    assert "".join(e.data for e in events if isinstance(e, ExecStderr)) == "err\n"
    assert isinstance(events[-1], ExecCompleted) and events[-1].exit_code == 3
    with pytest.raises(RuntimeError):
        proc.__aiter__()  # one iteration only, as Inspect's handle


async def test_output_arrives_while_the_process_runs(env: BwrapSandboxEnvironment) -> None:
    """No polling: the first line comes long before the process ends (Inspect's default
    polls at least every 5 s)."""
    proc = await env.exec_remote(["sh", "-c", "echo first; sleep 3; echo second"])
    started = time.monotonic()
    first = await proc.__aiter__().__anext__()
    assert isinstance(first, ExecStdout) and first.data == "first\n"
    assert time.monotonic() - started < 2.0
    await proc.kill()


async def test_stdin_open_write_and_close(env: BwrapSandboxEnvironment) -> None:
    proc = await env.exec_remote(["cat"], ExecRemoteStreamingOptions(stdin_open=True))
    await proc.write_stdin("hello ")
    await proc.write_stdin(b"world")
    await proc.close_stdin()
    events = [event async for event in proc]
    assert "".join(e.data for e in events if isinstance(e, ExecStdout)) == "hello world"
    assert events[-1] == ExecCompleted(exit_code=0)


async def test_stdin_needs_stdin_open(env: BwrapSandboxEnvironment) -> None:
    proc = await env.exec_remote(["true"])
    with pytest.raises(RuntimeError, match="stdin_open"):
        await proc.write_stdin("x")


async def test_kill_ends_the_whole_namespace(env: BwrapSandboxEnvironment) -> None:
    """A fire-and-forget server and its child die with kill(); no ExecCompleted follows."""
    proc = await env.exec_remote(
        ["sh", "-c", "sleep 300 & echo $! > /tmp/child; echo up; wait"]
    )
    it = proc.__aiter__()
    assert await it.__anext__() == ExecStdout(data="up\n")
    await proc.kill()
    rest = await _drain(it)
    assert not any(isinstance(e, ExecCompleted) for e in rest)
    # the sample lives on; the killed exec's sleeper is gone (a fresh exec sees no such pid)
    alive = await env.exec(["sh", "-c", "pgrep -x sleep || echo none"])
    assert alive.stdout.strip() == "none"


async def test_awaitable_mode_and_its_options(env: BwrapSandboxEnvironment) -> None:
    assert (await env.exec(["mkdir", "-p", "sub"])).success
    result = await env.exec_remote(
        ["sh", "-c", 'cat; echo " $FOO $(pwd)"'],
        ExecRemoteAwaitableOptions(input="in", env={"FOO": "bar"}, cwd="sub"),
        stream=False,
    )
    assert result.success
    assert result.stdout == "in bar /sandbox/sub\n"


async def _drain(it: Any) -> list[Any]:
    """The rest of an iteration already started (``async for`` would start another)."""
    events = []
    while True:
        try:
            events.append(await it.__anext__())
        except StopAsyncIteration:
            return events


async def test_awaitable_timeout_kills_and_raises(env: BwrapSandboxEnvironment) -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await env.exec_remote(["sleep", "30"], ExecRemoteAwaitableOptions(timeout=1),
                              stream=False)  # fmt: skip
    assert time.monotonic() - started < 10


async def test_cancellation_kills_the_process(env: BwrapSandboxEnvironment) -> None:
    proc = await env.exec_remote(["sh", "-c", "echo up; sleep 300"])
    it = proc.__aiter__()
    await it.__anext__()
    with anyio.move_on_after(0.5):
        await _drain(it)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and proc._process.poll() is None:  # type: ignore[attr-defined]
        await anyio.sleep(0.05)
    assert proc._process.poll() is not None  # type: ignore[attr-defined]


async def test_other_users_are_refused(env: BwrapSandboxEnvironment) -> None:
    from inspect_ai.util import SandboxUserUnsupportedError

    with pytest.raises(SandboxUserUnsupportedError):
        await env.exec_remote(["true"], ExecRemoteStreamingOptions(user="root"))
