"""The bwrap sandbox: what it runs, and what it keeps from the host.

Each containment test attacks the host the way agent code would and then checks the host
(a listener that saw no connection, files that did not appear, /proc with nothing left of
the sandbox). They need bubblewrap and skip with the reason otherwise; the pid-limit test
needs a root host (a non-root host cannot give a sample its own uid).
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from inspect_ai.util import SandboxEnvironmentLimits, SandboxUserUnsupportedError

from harness.sandbox.bwrap import (
    SANDBOX_DIR,
    BwrapSandboxEnvironment,
    _uid_pids,
    bwrap_available,
)
from harness.sandbox.limits import BwrapConfig, MiB

pytestmark = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot start here")

T = TypeVar("T")


def run(fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
    """Run one sandbox coroutine to completion from a sync test."""
    return anyio.run(lambda: fn(*args, **kwargs))


@pytest.fixture
def sbx() -> Iterator[BwrapSandboxEnvironment]:
    env = BwrapSandboxEnvironment(BwrapConfig())
    yield env
    env.cleanup()


def make_sbx(**limits: Any) -> BwrapSandboxEnvironment:
    return BwrapSandboxEnvironment(BwrapConfig(**limits))


def pids_with_marker(marker: str) -> list[int]:
    """Host pids whose command line contains ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry.name))
    return found


def wait_until(condition: Callable[[], bool], limit_s: float = 10.0) -> bool:
    """Poll ``condition`` (process teardown is asynchronous in the kernel); not a timing test."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


# ------------------------------------------------------------------------------ functional


def test_exec_stdout_stderr_returncode(sbx: BwrapSandboxEnvironment) -> None:
    result = run(sbx.exec, ["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (result.success, result.returncode) == (False, 3)
    assert (result.stdout, result.stderr) == ("out\n", "err\n")
    ok = run(sbx.exec, ["true"])
    assert (ok.success, ok.returncode, ok.stdout, ok.stderr) == (True, 0, "", "")


def test_exec_stdin_text_and_bytes(sbx: BwrapSandboxEnvironment) -> None:
    assert run(sbx.exec, ["cat"], input="line1\nline2\n").stdout == "line1\nline2\n"
    assert run(sbx.exec, ["wc", "-c"], input=bytes(range(256)) * 4).stdout.strip() == "1024"


def test_exec_env_cwd_and_identity(sbx: BwrapSandboxEnvironment) -> None:
    run(sbx.exec, ["mkdir", "-p", "sub/dir"])
    result = run(sbx.exec, ["sh", "-c", 'echo "$FOO"; pwd; id -un; hostname'],
                 env={"FOO": "bar baz"}, cwd="sub/dir")  # fmt: skip
    assert result.stdout.split("\n")[:4] == ["bar baz", f"{SANDBOX_DIR}/sub/dir", "sandbox",
                                            "sandbox"]  # fmt: skip
    assert run(sbx.exec, ["pwd"], cwd="/tmp").stdout == "/tmp\n"
    assert run(sbx.exec, ["pwd"]).stdout == f"{SANDBOX_DIR}\n"


def test_host_environment_does_not_leak(sbx: BwrapSandboxEnvironment,
                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("BWRAP_TEST_HOST_SECRET", "s3cr3t")
    result = run(sbx.exec, ["env"])
    assert "s3cr3t" not in result.stdout
    assert "HOME=/sandbox" in result.stdout.splitlines()


def test_command_resolved_through_sandbox_path(sbx: BwrapSandboxEnvironment) -> None:
    result = run(sbx.exec, ["python3", "-c", "import sys; print(sys.executable)"])
    assert result.success, result.stderr
    assert result.stdout.strip().startswith("/usr/bin/python3")


def test_missing_command_is_a_failed_result(sbx: BwrapSandboxEnvironment) -> None:
    result = run(sbx.exec, ["no-such-command-xyz"])
    assert not result.success
    assert "no-such-command-xyz" in result.stderr


def test_bash_login_and_python_as_inspect_tools_call_them(sbx: BwrapSandboxEnvironment) -> None:
    bash = run(sbx.exec, ["bash", "--login", "-c", "echo hi; echo $PATH"])
    assert bash.success and bash.stdout.startswith("hi\n"), bash.stderr
    py = run(sbx.exec, ["bash", "--login", "-c", "python3 -"], input="print(6*7)")
    assert (py.success, py.stdout) == (True, "42\n")


def test_file_roundtrip_text_and_binary(sbx: BwrapSandboxEnvironment) -> None:
    run(sbx.write_file, "nested/dir/a.txt", "héllo\r\nworld\n")
    assert run(sbx.read_file, "nested/dir/a.txt") == "héllo\r\nworld\n"
    assert run(sbx.read_file, f"{SANDBOX_DIR}/nested/dir/a.txt") == "héllo\r\nworld\n"
    blob = bytes(range(256)) * 3
    run(sbx.write_file, "b.bin", blob)
    assert run(sbx.read_file, "b.bin", text=False) == blob
    # the sandbox sees what the host wrote, may change it, and the host sees the change
    assert run(sbx.exec, ["cat", "nested/dir/a.txt"]).stdout == "héllo\r\nworld\n"
    assert run(sbx.exec, ["sh", "-c", "echo more >> nested/dir/a.txt"]).success
    assert run(sbx.read_file, "nested/dir/a.txt").endswith("more\n")
    run(sbx.write_file, "b.bin", b"short")  # overwrite truncates
    assert run(sbx.read_file, "b.bin", text=False) == b"short"
    run(sbx.write_file, "empty", b"")
    assert run(sbx.read_file, "empty") == ""


def test_read_file_errors(sbx: BwrapSandboxEnvironment) -> None:
    with pytest.raises(FileNotFoundError):
        run(sbx.read_file, "missing.txt")
    with pytest.raises(FileNotFoundError):
        run(sbx.read_file, "/no/such/file")
    run(sbx.exec, ["mkdir", "d"])
    with pytest.raises(IsADirectoryError):
        run(sbx.read_file, "d")
    with pytest.raises(IsADirectoryError):
        run(sbx.read_file, "/usr")
    run(sbx.write_file, "latin1.txt", "é".encode("latin-1"))
    with pytest.raises(UnicodeDecodeError):
        run(sbx.read_file, "latin1.txt")
    # files outside /sandbox are read as the sandbox sees them
    assert run(sbx.read_file, "/etc/hostname") == "sandbox\n"


def test_write_file_errors(sbx: BwrapSandboxEnvironment) -> None:
    run(sbx.exec, ["mkdir", "d"])
    with pytest.raises(IsADirectoryError):
        run(sbx.write_file, "d", "x")
    for path in ("/etc/x", "/usr/x", "/x", "../x", "/var/x"):
        with pytest.raises(PermissionError, match="x"):
            run(sbx.write_file, path, "x")
    # the sample's writable places: /sandbox, /tmp and /var/tmp
    for path in ("/tmp/a/x", "/var/tmp/x", "/sandbox/x"):
        run(sbx.write_file, path, "x")
        assert run(sbx.exec, ["cat", path]).stdout == "x"


def test_files_through_symlinks_resolve_inside(sbx: BwrapSandboxEnvironment) -> None:
    run(sbx.write_file, "real.txt", "real")
    assert run(sbx.exec, ["ln", "-s", f"{SANDBOX_DIR}/real.txt", "link"]).success
    assert run(sbx.read_file, "link") == "real"
    run(sbx.write_file, "link", "changed")
    assert run(sbx.read_file, "real.txt") == "changed"


def test_users(sbx: BwrapSandboxEnvironment) -> None:
    assert run(sbx.exec, ["id", "-u"], user="sandbox").stdout == "1000\n"
    with pytest.raises(SandboxUserUnsupportedError):
        run(sbx.exec, ["id"], user="root")


def test_cleanup_removes_work_dir() -> None:
    env = make_sbx()
    run(env.write_file, "x.txt", "x")
    work = env.work_dir
    assert (work / "x.txt").exists()
    env.cleanup()
    assert not work.exists()
    env.cleanup()  # idempotent


def test_fresh_proc_persistent_tmp(sbx: BwrapSandboxEnvironment) -> None:
    procs = run(sbx.exec, ["sh", "-c", "ls /proc | grep -c '^[0-9]'"]).stdout
    assert int(procs) <= 5  # the sandbox's own few processes, none of the host's
    assert run(sbx.exec, ["sh", "-c", "echo x > /tmp/f && cat /tmp/f"]).stdout == "x\n"
    # /tmp and /var/tmp live as long as the sample, as in Docker; /dev/shm for one exec
    assert run(sbx.exec, ["cat", "/tmp/f"]).stdout == "x\n"
    assert run(sbx.exec, ["sh", "-c", "echo y > /var/tmp/g; echo z > /dev/shm/h"]).success
    assert run(sbx.read_file, "/var/tmp/g") == "y\n"
    assert not run(sbx.exec, ["test", "-e", "/dev/shm/h"]).success
    other = make_sbx()
    try:  # and are the sample's own
        assert not run(other.exec, ["test", "-e", "/tmp/f"]).success
    finally:
        other.cleanup()


# ------------------------------------------------------------------------------ containment


def test_network_cannot_reach_host_loopback(sbx: BwrapSandboxEnvironment) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        code = (
            "import socket\n"
            f"socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "print('CONNECTED')\n"
        )
        result = run(sbx.exec, ["python3", "-c", code], timeout=30)
        assert not result.success
        assert "CONNECTED" not in result.stdout
        assert "ConnectionRefusedError" in result.stderr or "unreachable" in result.stderr
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever knocked


def test_only_loopback_interface(sbx: BwrapSandboxEnvironment) -> None:
    devices = run(sbx.exec, ["cat", "/proc/net/dev"]).stdout
    names = {line.split(":")[0].strip() for line in devices.splitlines()[2:]}
    assert names == {"lo"}


def test_writes_outside_work_dir_fail(sbx: BwrapSandboxEnvironment, tmp_path: Path) -> None:
    tag = secrets.token_hex(6)
    targets = [f"/usr/bwrap-escape-{tag}", f"/etc/bwrap-escape-{tag}", f"/bwrap-escape-{tag}",
               str(tmp_path / f"bwrap-escape-{tag}")]  # fmt: skip
    for target in targets:
        result = run(sbx.exec, ["sh", "-c", f"echo pwned > {target}"])
        assert not result.success, target
        assert any(s in result.stderr for s in ("Read-only", "No such file", "nonexistent"))
        assert not Path(target).exists(), target
    # even recreating the host tmp dir inside only writes to the sandbox's own /tmp
    host_dir = tmp_path / f"made-{tag}"
    made = run(sbx.exec, ["sh", "-c", f"mkdir -p {host_dir} && echo pwned > {host_dir}/f"])
    assert made.success
    assert not host_dir.exists()
    # and through a symlink planted for the host-side writer
    planted = tmp_path / f"planted-{tag}"
    assert run(sbx.exec, ["ln", "-s", str(planted), "trap"]).success
    run(sbx.write_file, "trap", "pwned")  # resolved inside: lands in the sample's own /tmp
    assert not planted.exists()
    assert run(sbx.exec, ["cat", str(planted)]).stdout == "pwned"


def test_host_secrets_not_visible(sbx: BwrapSandboxEnvironment, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-" + secrets.token_hex(8))
    result = run(sbx.exec, ["cat", str(secret)])
    assert not result.success and "TOPSECRET" not in result.stdout
    for path in ("/root", "/home", str(tmp_path)):
        assert not run(sbx.exec, ["ls", path]).success, path
    with pytest.raises(FileNotFoundError):
        run(sbx.read_file, str(secret))
    # a symlink left in /sandbox must not make the host-side reader follow it
    assert run(sbx.exec, ["ln", "-s", str(secret), "leak"]).success
    assert run(sbx.exec, ["ln", "-s", "/etc/shadow", "shadow"]).success
    for link in ("leak", "shadow"):
        with pytest.raises(FileNotFoundError):
            run(sbx.read_file, link)
    assert "root:" not in run(sbx.exec, ["cat", "/etc/passwd"]).stdout.split("sandbox")[1]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="per-sample uids (the pid limit) need a root host")
def test_fork_bomb_is_contained() -> None:
    env = make_sbx(pids=64)
    peak = 0

    async def bomb() -> None:
        nonlocal peak
        done = anyio.Event()

        async def watch() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, len(_uid_pids(env.host_uid)))
                await anyio.sleep(0.05)

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            try:
                await env.exec(["bash", "-c", "f(){ f | f & }; f; sleep 30"], timeout=3)
            except TimeoutError:
                pass
            finally:
                done.set()

    try:
        anyio.run(bomb)
        assert 32 <= peak <= 64, peak  # it did fork, up to the limit and no further
        assert wait_until(lambda: _uid_pids(env.host_uid) == [])
        assert subprocess.run(["true"]).returncode == 0  # the host can still fork
    finally:
        env.cleanup()


def test_memory_bomb_fails_cleanly(sbx: BwrapSandboxEnvironment) -> None:
    result = run(sbx.exec, ["python3", "-c", "b = bytearray(4 * 10**9); print('ALLOCATED')"])
    assert not result.success
    assert "MemoryError" in result.stderr
    assert "ALLOCATED" not in result.stdout


def test_huge_output_is_capped(sbx: BwrapSandboxEnvironment) -> None:
    script = "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo END"
    result = run(sbx.exec, ["sh", "-c", script], timeout=120)
    assert result.success
    # Inspect's semantics for local sandboxes: the trailing part within the limit
    assert len(result.stdout.encode()) <= SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
    assert result.stdout.endswith("x\nEND\n")
    assert len(result.stdout) > 1024 * 1024


@pytest.mark.slow
def test_process_outliving_timeout_is_killed() -> None:
    env = make_sbx()
    marker = str(900_000 + secrets.randbelow(99_999))
    script = (f"setsid sleep {marker}1 </dev/null >/dev/null 2>&1 & "
              f"nohup sleep {marker}2 </dev/null >/dev/null 2>&1 & "
              f"sleep {marker}3")  # fmt: skip
    try:
        with pytest.raises(TimeoutError):
            run(env.exec, ["bash", "-c", script], timeout=1)
        assert wait_until(lambda: pids_with_marker(marker) == [])
    finally:
        env.cleanup()
    assert pids_with_marker(marker) == []


def test_detached_process_dies_with_its_exec(sbx: BwrapSandboxEnvironment) -> None:
    marker = str(800_000 + secrets.randbelow(99_999))
    result = run(sbx.exec, ["sh", "-c", f"setsid -f sleep {marker} </dev/null >/dev/null 2>&1"])
    assert result.success
    assert wait_until(lambda: pids_with_marker(marker) == [])


def test_file_size_limit() -> None:
    env = make_sbx(file_size_bytes=MiB)
    try:
        result = run(env.exec, ["sh", "-c", "head -c 3000000 /dev/zero > big"])
        assert not result.success
        assert (env.work_dir / "big").stat().st_size <= MiB
    finally:
        env.cleanup()


def test_cpu_time_limit() -> None:
    env = make_sbx(cpu_s=1)
    try:
        result = run(env.exec, ["python3", "-c", "while True: pass"], timeout=60)
        assert not result.success
        assert result.returncode in (-9, 137, 152, -24)  # SIGKILL / SIGXCPU
    finally:
        env.cleanup()


def test_shm_is_bounded() -> None:
    env = make_sbx(tmp_bytes=MiB)
    try:
        result = run(env.exec, ["sh", "-c", "head -c 3000000 /dev/zero > /dev/shm/fill"])
        assert not result.success
        assert "No space left" in result.stderr
    finally:
        env.cleanup()


def test_no_nested_user_namespaces(sbx: BwrapSandboxEnvironment) -> None:
    assert not run(sbx.exec, ["unshare", "--user", "true"]).success
