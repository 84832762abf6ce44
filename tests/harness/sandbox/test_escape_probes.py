"""One escape-probe suite for both sandbox providers, ``bwrap`` and Inspect's ``docker``.

Each probe attacks the host the way agent code would, then checks three things: it was
contained (the host saw nothing: no connection, no file, no process, its memory and disk
intact), the sample got a clear error, and a fresh sample afterwards starts clean. All
probes run under small limits (256 MiB memory, 64 tasks, 1 core, 64 MiB disk) so that even
the bombs stay far below what this host has; networking probes target only a listener on
the host's own 127.0.0.1.

Docker samples here are hardened (read-only root; ``/sandbox``, ``/tmp``, ``/var/tmp`` as
tmpfs of the disk size, see ``harness.sandbox.samples``): with Docker's writable layer
unbounded on this storage driver, that is the only way a container's disk is bounded.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.util import OutputLimitExceededError, SandboxEnvironment, SandboxEnvironmentLimits

from harness.sandbox.bwrap import BwrapSandboxEnvironment
from harness.sandbox.limits import MiB, SandboxLimits
from harness.sandbox.samples import open_sample, unavailable

pytestmark = [pytest.mark.anyio, pytest.mark.serial]  # serial: host-responsiveness probes

LIMITS = SandboxLimits(memory_bytes=256 * MiB, pids=64, cpus=1.0, disk_bytes=64 * MiB,
                       timeout_s=60)  # fmt: skip
CONCURRENT_SAMPLES = 8


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def provider(request: pytest.FixtureRequest) -> str:
    if reason := unavailable(request.param):
        pytest.skip(reason)
    return str(request.param)


def sample(provider: str, limits: SandboxLimits = LIMITS) -> Any:
    return open_sample(provider, limits, hardened=True)


def host_pids_with(marker: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if marker.encode() in Path(entry.path, "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_until(condition: Any, limit_s: float = 15.0) -> bool:
    """Poll (teardown in the kernel is asynchronous); a liveness wait, not a timing test."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return bool(condition())


async def assert_next_sample_clean(provider: str) -> None:
    """A fresh sample after a probe: empty writable places, only its own processes."""
    async with sample(provider) as fresh:
        listing = await fresh.exec(["sh", "-c", "ls -A /tmp; ls -A . | grep -v '^lost'"])
        assert listing.stdout.strip() == "", listing.stdout
        procs = await fresh.exec(["sh", "-c", "ls /proc | grep -c '^[0-9]'"])
        assert int(procs.stdout) <= 6, procs.stdout  # bwrap: 2-3; docker: init, tail, sh, ls
        assert (await fresh.exec(["true"])).success


# ------------------------------------------------------------------------------ the probes


async def test_network_host_loopback_unreachable(provider: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        code = (f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                "print('CONNECTED')\n")  # fmt: skip
        async with sample(provider) as sbx:
            result = await sbx.exec(["python3", "-c", code], timeout=30)
            devices = await sbx.exec(["cat", "/proc/net/dev"])
        assert not result.success and "CONNECTED" not in result.stdout
        assert "ConnectionRefusedError" in result.stderr or "unreachable" in result.stderr
        names = {line.split(":")[0].strip() for line in devices.stdout.splitlines()[2:]}
        assert names == {"lo"}
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever knocked


async def test_host_files_and_secrets(provider: str, tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-" + secrets.token_hex(8))
    secret.chmod(0o644)  # readable by anyone on the host: only the sandbox keeps it out
    async with sample(provider) as sbx:
        assert not (await sbx.exec(["cat", str(secret)])).success
        assert not (await sbx.exec(["ls", str(tmp_path)])).success
        with pytest.raises(FileNotFoundError):
            await sbx.read_file(str(secret))
        home = await sbx.exec(["sh", "-c", "ls -A /root /home 2>/dev/null | grep -v ':$'"])
        assert ".bash_history" not in home.stdout and ".ssh" not in home.stdout
        escape = await sbx.exec(["sh", "-c", f"echo pwned > {tmp_path}/planted"])
        assert not (tmp_path / "planted").exists(), escape
    assert secret.read_text().startswith("TOPSECRET-")  # nothing lost on the host


async def test_environment_has_no_api_keys(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    names = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY")
    keys = {name: f"sk-{secrets.token_hex(8)}" for name in names}
    for name, value in keys.items():
        monkeypatch.setenv(name, value)
    async with sample(provider) as sbx:
        env = await sbx.exec(["env"])
        # every process the payload can see, its sandbox's own init included
        every = "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'"
        procs = await sbx.exec(["sh", "-c", every])
    for value in keys.values():
        assert value not in env.stdout and value not in procs.stdout


async def test_no_docker_socket(provider: str) -> None:
    code = ("import socket\nfor p in ('/var/run/docker.sock', '/run/docker.sock'):\n"
            "    s = socket.socket(socket.AF_UNIX)\n"
            "    try:\n        s.connect(p); print('CONNECTED', p)\n"
            "    except OSError as e:\n"
            "        print('refused', p, type(e).__name__)\n")  # fmt: skip
    async with sample(provider) as sbx:
        result = await sbx.exec(["python3", "-c", code])
    assert result.success, result.stderr
    assert "CONNECTED" not in result.stdout and result.stdout.count("refused") == 2


async def test_host_processes_invisible_and_unkillable(provider: str) -> None:
    marker = str(700_000 + secrets.randbelow(99_999))
    host = subprocess.Popen(["sleep", marker])
    try:
        async with sample(provider) as sbx:
            every = "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '"
            seen = await sbx.exec(["sh", "-c", every])
            killed = await sbx.exec(["kill", "-9", str(host.pid)])
        assert marker not in seen.stdout
        assert not killed.success
        assert host.poll() is None  # still running on the host
    finally:
        host.kill()
        host.wait()


async def test_proc_and_symlink_tricks(provider: str, tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    secret.chmod(0o644)
    async with sample(provider) as sbx:
        through_root = await sbx.exec(["cat", f"/proc/1/root{secret}", f"/proc/self/root{secret}"])
        assert "TOPSECRET" not in through_root.stdout
        assert not (await sbx.exec(["sh", "-c", "echo 1 > /proc/sys/kernel/sysrq"])).success
        assert not (await sbx.exec(["sh", "-c", "echo h > /proc/sysrq-trigger"])).success
        # a symlink left for the host-side reader must be resolved inside the sandbox
        assert (await sbx.exec(["ln", "-s", str(secret), "leak"])).success
        with pytest.raises(FileNotFoundError):
            await sbx.read_file("leak")
        try:  # resolved inside: the target's folder is not there, or the write lands inside
            await sbx.write_file("leak", "overwritten?")
        except (FileNotFoundError, PermissionError, RuntimeError):  # docker: RuntimeError
            pass
        assert (await sbx.exec(["ln", "-s", "/proc/1/root/", "rootlink"])).success
        listed = await sbx.exec(["ls", f"rootlink{tmp_path}"])
        assert not listed.success
    assert secret.read_text() == "TOPSECRET"


@pytest.mark.slow
async def test_fork_bomb(provider: str) -> None:
    async with sample(provider) as sbx:
        try:
            result = await sbx.exec(["bash", "-c", "f(){ f | f & }; f; sleep 8"], timeout=5)
            stderr = result.stderr
        except TimeoutError:
            stderr = ""
        assert subprocess.run(["true"]).returncode == 0  # the host can still fork
        if isinstance(sbx, BwrapSandboxEnvironment) and sbx.cgroup is not None:
            # RLIMIT_NPROC of the sample's uid or its cgroup's pids.max stopped it, both 64
            assert len(sbx.cgroup.pids()) <= LIMITS.pids
            assert stderr == "" or "Resource temporarily unavailable" in stderr
    await assert_next_sample_clean(provider)


@pytest.mark.slow
async def test_memory_bomb_across_processes(provider: str) -> None:
    # 4 x 100 MB at once: each process is within its own limits, together they are not
    child = "import time; b = bytearray(100 * 2**20); time.sleep(3)"
    script = (f'pids=""; for i in 1 2 3 4; do python3 -c "{child}" & pids="$pids $!"; done; '
              'for p in $pids; do wait $p; echo "rc=$?"; done')  # fmt: skip
    async with sample(provider) as sbx:
        result = await sbx.exec(["sh", "-c", script], timeout=60)
        assert "rc=137" in result.stdout, (result.stdout, result.stderr)  # OOM-killed inside
        assert result.stdout.count("rc=") == 4  # the sample's shell itself survived
        if isinstance(sbx, BwrapSandboxEnvironment) and sbx.cgroup is not None:
            assert "out of memory" in result.stderr  # the sample is told why
            assert 0 < sbx.cgroup.memory_peak() <= LIMITS.memory_bytes
        assert (await sbx.exec(["true"])).success
    await assert_next_sample_clean(provider)


@pytest.mark.slow
async def test_disk_fill_across_files(provider: str) -> None:
    free_before = shutil.disk_usage("/").free
    script = ("for i in 1 2 3 4 5; do head -c 40000000 /dev/zero > f$i || echo FULL$i; done; "
              "head -c 40000000 /dev/zero > /tmp/g || echo TMPFULL")  # fmt: skip
    async with sample(provider) as sbx:
        result = await sbx.exec(["sh", "-c", script], timeout=60)
        assert "No space left on device" in result.stderr, result.stderr
        assert "FULL" in result.stdout
        used = await sbx.exec(["sh", "-c", "du -sck . /tmp | tail -1"])
        if isinstance(sbx, BwrapSandboxEnvironment) and sbx.disk is not None:
            # /sandbox and /tmp share the one quota (docker's tmpfs are one quota each)
            assert int(used.stdout.split()[0]) * 1024 <= LIMITS.disk_bytes
            image = sbx.disk.image.stat()
            assert image.st_blocks * 512 <= LIMITS.disk_bytes + 4 * MiB  # the host's share
        # the probe tried 240 MB; the host lost at most the quota (plus others' noise)
        assert free_before - shutil.disk_usage("/").free < 3 * LIMITS.disk_bytes
    await assert_next_sample_clean(provider)


async def test_output_flood(provider: str) -> None:
    script = "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo END"
    async with sample(provider) as sbx:
        try:
            result = await sbx.exec(["sh", "-c", script], timeout=120)
        except OutputLimitExceededError as ex:  # docker: a clear error instead of output
            assert "limit" in str(ex)
            return
    assert len(result.stdout.encode()) <= SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
    assert result.stdout.endswith("x\nEND\n")


@pytest.mark.slow
async def test_processes_outliving_the_time_limit(provider: str) -> None:
    marker = str(600_000 + secrets.randbelow(99_999))
    script = (f"setsid sleep {marker}1 </dev/null >/dev/null 2>&1 & "
              f"nohup sleep {marker}2 </dev/null >/dev/null 2>&1 & sleep {marker}3")  # fmt: skip
    async with sample(provider) as sbx:
        with pytest.raises(TimeoutError):
            await sbx.exec(["sh", "-c", script], timeout=2)
        if provider == "bwrap":  # each exec's pid namespace dies with it
            assert wait_until(lambda: host_pids_with(marker) == [])
    # whatever the provider, nothing of the sample outlives it
    assert wait_until(lambda: host_pids_with(marker) == [])
    await assert_next_sample_clean(provider)


# ------------------------------------------------------------------------------ all at once


class Heartbeat:
    """A host thread that ticks every 50 ms and records the longest gap between ticks."""

    def __init__(self) -> None:
        self.max_gap = 0.0
        self.ticks = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(0.05):
            now = time.monotonic()
            self.max_gap, last = max(self.max_gap, now - last), now
            self.ticks += 1

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def _everything(sbx: SandboxEnvironment, results: dict[int, Any], key: int) -> None:
    child = "import time; b = bytearray(100 * 2**20); time.sleep(2)"
    memory = f'for i in 1 2 3 4; do python3 -c "{child}" & done; wait; echo done'
    disk = "for i in 1 2 3; do head -c 30000000 /dev/zero > f$i; done; echo done"
    flood = "head -c 20000000 /dev/zero | tr '\\0' x | tail -c 10; echo done"
    got: dict[str, Any] = {}
    for name, script in (("memory", memory), ("disk", disk), ("flood", flood)):
        got[name] = await sbx.exec(["sh", "-c", script], timeout=120)
    try:
        await sbx.exec(["bash", "-c", "f(){ f | f & }; f; sleep 8"], timeout=4)
    except TimeoutError:
        pass
    got["after"] = await _alive(sbx)
    results[key] = got


async def _alive(sbx: SandboxEnvironment, attempts: int = 15) -> Any:
    """``echo alive`` once the fork bomb has died out. Under Docker an exec that times out
    does not kill what it started, so for a few seconds the bomb's last processes can still
    hold the pids limit and a new exec is refused ("OCI runtime exec failed"); a sample that
    answers within ~30 s kept working. The last answer is returned either way."""
    result = await sbx.exec(["echo", "alive"])
    for _ in range(attempts - 1):
        if result.stdout == "alive\n":
            break
        await anyio.sleep(2.0)
        result = await sbx.exec(["echo", "alive"])
    return result


@pytest.mark.slow
async def test_eight_samples_at_once_host_stays_responsive(provider: str) -> None:
    results: dict[int, Any] = {}
    with Heartbeat() as beat:
        async with anyio.create_task_group() as tg:
            for i in range(CONCURRENT_SAMPLES):

                async def one(i: int = i) -> None:
                    async with sample(provider) as sbx:
                        await _everything(sbx, results, i)

                tg.start_soon(one)
        host_fork = subprocess.run(["true"]).returncode
    assert host_fork == 0
    assert len(results) == CONCURRENT_SAMPLES
    for got in results.values():
        assert "No space left" in got["disk"].stderr
        assert got["after"].stdout == "alive\n"  # every sample kept working afterwards
    # liveness, not a timing measurement: the host's own thread was never starved for long
    assert beat.ticks > 0 and beat.max_gap < 10.0, beat.max_gap
    await assert_next_sample_clean(provider)
