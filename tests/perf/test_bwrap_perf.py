"""Cost of one exec through the bwrap provider, against a bare ``bwrap ... true``.

Measure with::

    .venv/bin/pytest tests/perf/test_bwrap_perf.py --benchmark-enable -m perf

The provider's exec adds setpriv + prlimit (two execs), the sandbox's mounts and
Inspect's subprocess plumbing to what bubblewrap itself costs. Target: median <= 20 ms
over 50 rounds. Nothing here asserts a time (timings are not test outcomes); the
tests assert only that each call did what it should.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from harness.sandbox.bwrap import BwrapSandboxEnvironment, bwrap_available
from harness.sandbox.limits import BwrapConfig

pytestmark = [
    pytest.mark.perf,
    pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot start here"),
]

ROUNDS = 50


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def test_provider_exec_true(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    env = BwrapSandboxEnvironment(BwrapConfig())
    try:
        result = benchmark.pedantic(
            lambda: loop.run_until_complete(env.exec(["true"])),
            rounds=ROUNDS, iterations=1, warmup_rounds=3,
        )  # fmt: skip
    finally:
        env.cleanup()
    assert (result.success, result.stdout, result.stderr) == (True, "", "")


def test_bare_bwrap_true(benchmark: Any) -> None:
    """The floor: bubblewrap alone, with the same namespaces and a minimal root."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--", "true"]  # fmt: skip
    proc = benchmark.pedantic(lambda: subprocess.run(argv), rounds=ROUNDS, iterations=1,
                              warmup_rounds=3)  # fmt: skip
    assert proc.returncode == 0
