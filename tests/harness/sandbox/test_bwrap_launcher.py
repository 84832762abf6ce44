"""The exec launcher (``harness/sandbox/launcher.py``, ``execs.py``): every exec it starts
is in the sample's cgroups, runs as the sample's uid with its rlimits, and dies on
timeout, cancellation or when the launcher is shut down; the launcher itself is in no
sample's group; the old chain stays usable; the distribution ships both modules."""

from __future__ import annotations

import asyncio
import os
import re
import time
import tomllib
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from harness.sandbox import execs
from harness.sandbox.bwrap import (
    BwrapSandboxEnvironment,
    _launch_request,
    _uid_pids,
    bwrap_available,
)
from harness.sandbox.limits import BwrapConfig, MiB

SANDBOX = Path(__file__).resolve().parents[3] / "harness" / "sandbox"
needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot start here")


def test_the_distribution_ships_every_module_the_provider_imports() -> None:
    """A module missing from ``py-modules`` breaks only the installed wheel, so check it
    here, fast, from the relative imports of the shipped modules."""
    config = tomllib.loads((SANDBOX / "pyproject.toml").read_text())
    shipped = {m.split(".", 1)[1] for m in config["tool"]["setuptools"]["py-modules"]}
    assert {"launcher", "execs"} <= shipped
    needed: set[str] = set()
    for name in shipped:
        text = (SANDBOX / f"{name}.py").read_text()
        needed |= set(re.findall(r"^from \.(\w+) import", text, re.M))
        for names in re.findall(r"^from \. import ([\w, ]+(?: as \w+)?)", text, re.M):
            needed |= {part.split(" as ")[0].strip() for part in names.split(",")}
    assert needed <= shipped, f"not shipped: {sorted(needed - shipped)}"


@pytest.fixture
def env() -> Iterator[BwrapSandboxEnvironment]:
    sample = BwrapSandboxEnvironment(BwrapConfig(memory_bytes=256 * MiB, pids=32, cpu_s=7,
                                                 open_files=77))  # fmt: skip
    yield sample
    sample.cleanup()


def _wait_gone(uid: int, timeout_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while (left := _uid_pids(uid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@needs_bwrap
@pytest.mark.slow
def test_an_exec_is_in_the_sample_with_its_uid_and_rlimits(env: BwrapSandboxEnvironment) -> None:
    """Seen from the host while it runs: the exec's bwrap and payload are in every group
    of the sample, run as its uid and carry its rlimits; the launcher is in none."""
    if not env.layout.drop_to_uid or env.cgroup is None:
        pytest.skip("needs root and cgroups (the uid and groups to look for)")

    def payload_running() -> bool:
        for pid in _uid_pids(env.host_uid):
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep\0"):
                    return True
            except FileNotFoundError:
                continue
        return False

    async def look() -> tuple[dict[int, tuple[str, str]], str]:
        """(cgroup, limits) of each of the sample's processes, read while they run."""
        task = asyncio.create_task(env.exec(["sleep", "30"], timeout=60))
        deadline = time.monotonic() + 20
        while not payload_running() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        seen = {}
        for pid in _uid_pids(env.host_uid):
            with suppress(FileNotFoundError):
                seen[pid] = (Path(f"/proc/{pid}/cgroup").read_text(),
                             Path(f"/proc/{pid}/limits").read_text())  # fmt: skip
        launcher_cgroup = Path(f"/proc/{execs.launcher().process.pid}/cgroup").read_text()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen, launcher_cgroup

    assert env.cgroup is not None
    group = env.cgroup.name
    seen, launcher_cgroup = asyncio.run(look())
    assert len(seen) >= 3, "the exec's bwrap, its init and the payload"
    for pid, (cgroup, limits) in seen.items():
        joined = [line for line in cgroup.splitlines() if line.endswith(f"/{group}")]
        assert len(joined) >= len(set(env.cgroup.paths.values())), (pid, cgroup)
        assert re.search(r"Max cpu time\s+7\s+7", limits), limits
        assert re.search(r"Max open files\s+77\s+77", limits), limits
        assert re.search(r"Max processes\s+32\s+32", limits), limits
        assert re.search(rf"Max address space\s+{256 * MiB}\s+{256 * MiB}", limits), limits
    assert group not in launcher_cgroup
    assert _wait_gone(env.host_uid) == []


@needs_bwrap
@pytest.mark.slow
def test_timeout_and_cancellation_kill_the_whole_tree(env: BwrapSandboxEnvironment) -> None:
    if not env.layout.drop_to_uid:
        pytest.skip("needs root (a uid of the sample's own to count processes by)")
    tree = ["sh", "-c", "sleep 60 & sleep 60 & sleep 60"]

    async def timed_out() -> None:
        with pytest.raises(TimeoutError):
            await env.exec(tree, timeout=1)

    started = time.monotonic()
    asyncio.run(timed_out())
    assert time.monotonic() - started < 30  # not the 60 s of its sleeps
    assert _wait_gone(env.host_uid) == []

    async def cancelled() -> None:
        task = asyncio.create_task(env.exec(tree, timeout=60))
        await asyncio.sleep(1.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    assert _wait_gone(env.host_uid) == []


@needs_bwrap
@pytest.mark.slow
def test_output_keeps_its_tail_and_input_arrives(env: BwrapSandboxEnvironment) -> None:
    request = _launch_request(env.layout, env.config,
                              ["sh", "-c", "cat; seq 1 100000; seq 1 5 >&2; exit 4"])  # fmt: skip
    data = os.urandom(300_000)
    code, out, err = asyncio.run(execs.run(request, data, 30, output_limit=len(data) + 7))
    assert code == 4
    assert out.endswith(b"\n99999\n100000\n") and len(out) == len(data) + 7
    assert err == b"1\n2\n3\n4\n5\n"
    code, out, _ = asyncio.run(execs.run(request, data, 30, output_limit=10_000_000))
    assert out.startswith(data)


@needs_bwrap
@pytest.mark.slow
def test_a_dead_launcher_is_restarted_and_shutdown_kills_running_execs(
    env: BwrapSandboxEnvironment,
) -> None:
    first = execs.launcher().process
    first.kill()
    first.wait(timeout=10)
    assert asyncio.run(env.exec(["echo", "again"])).stdout == "again\n"
    assert execs.launcher().process.pid != first.pid

    async def shut_down_under_it() -> None:
        task = asyncio.create_task(env.exec(["sleep", "60"], timeout=60))
        await asyncio.sleep(1.0)
        await asyncio.to_thread(execs.shutdown)
        with pytest.raises(execs.LauncherError):
            await task

    asyncio.run(shut_down_under_it())
    if env.layout.drop_to_uid:
        assert _wait_gone(env.host_uid) == []
    assert asyncio.run(env.exec(["true"])).success


@needs_bwrap
def test_the_old_chain_can_still_be_chosen(
    env: BwrapSandboxEnvironment, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_BWRAP_LAUNCHER", "0")

    async def no_launcher(*args: object, **kwargs: object) -> None:
        raise AssertionError("the launcher was used")

    monkeypatch.setattr(execs, "run", no_launcher)
    result = asyncio.run(env.exec(["sh", "-c", "echo $HOME; exit 3"]))
    assert (result.returncode, result.stdout) == (3, "/sandbox\n")
