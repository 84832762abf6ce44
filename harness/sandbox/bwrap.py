"""The ``bwrap`` Inspect sandbox: bubblewrap isolation without a daemon or an image.

Each sample gets its own small filesystem (a loop-mounted ext4 of ``disk_bytes``, see
:mod:`harness.sandbox.quota`) holding its three writable places: ``/sandbox`` (the cwd of
every exec), ``/tmp`` and ``/var/tmp``, all persistent across the sample's execs as in
Docker. The host's ``/usr`` and an allowlisted copy of ``/etc`` are read-only; there is no
network (own, empty network namespace), a fresh ``/proc`` and ``/dev`` and an in-memory
``/dev/shm`` per exec. Every exec is its own bwrap process with its own PID namespace, so
nothing it starts survives it: when the command returns, times out or is cancelled, the
namespace's init dies and the kernel kills the rest.

Limits (``harness.sandbox.limits``) hold per sample where the host allows it: one cgroup
per sample (:mod:`harness.sandbox.cgroups`) bounds the memory (swap off), tasks and CPU of
all its processes together, and the OOM killer acts inside it; the sample's filesystem
bounds its disk. Per-process rlimits stay as the fallback.
``RLIMIT_NPROC`` does not bind root, so a root host runs each sample as a fresh
unprivileged host uid; bwrap then builds an unprivileged user namespace in
which the payload is ``sandbox`` (uid 1000). That uid owning nothing else on the host is
also what lets cleanup kill by uid. An exec's bwrap is started by the process-wide
launcher (:mod:`harness.sandbox.launcher`), which joins the cgroup, drops the uid and sets
the rlimits in its forked child; the tools server and ``exec_remote`` handles, which must
be the provider's own children, get the same through ``sh``, ``setpriv`` and ``prlimit``.

Use it with ``Task(..., sandbox="bwrap")`` or ``sandbox=("bwrap", "limits.yaml")``;
``bash()`` and ``python()`` work unchanged (``python3`` is the host's system Python), and
so do ``text_editor()`` and ``bash_session()``: Inspect's tool support is provided
read-only (:mod:`harness.sandbox.tools`) and its server runs in one long-lived bwrap of
the sample, with the sample's mounts, uid, cgroup and limits, until the sample ends.
``exec_remote()`` streams from the exec's own bwrap (:mod:`harness.sandbox.remote`), and
samples are admitted by the host's free memory and CPU (:mod:`harness.sandbox.admission`).

This folder also ships alone as the ``inspect-bwrap`` distribution (``pyproject.toml`` and
``README.md`` beside this file): its modules import one another relatively and nothing
else of the suite.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import logging
import os
import secrets
import shutil
import signal
import stat
import subprocess as sp
import tempfile
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, overload

import anyio
from inspect_ai.util import (
    ExecRemoteAwaitableOptions,
    ExecRemoteProcess,
    ExecRemoteStreamingOptions,
    ExecResult,
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
    SandboxUserUnsupportedError,
    sandboxenv,
    subprocess,
)
from inspect_ai.util import concurrency as inspect_concurrency
from pydantic import BaseModel

# Relative imports only: this package also ships alone as ``inspect_bwrap`` (see
# ``pyproject.toml`` beside this file), where no ``harness`` exists.
from . import cgroups, execs, quota
from . import tools as sandbox_tools
from ._inspect_compat import max_subprocesses, prerequisite_error
from .admission import admission
from .cgroups import SampleCgroup
from .limits import BwrapConfig, load_config
from .quota import SampleDisk
from .remote import BwrapRemoteProcess, awaitable

logger = logging.getLogger(__name__)

SANDBOX_DIR = "/sandbox"
"""In-sandbox mount point of the per-sample work dir (cwd of every exec)."""
WRITABLE = (SANDBOX_DIR, "/tmp", "/var/tmp")
"""The sample's writable places (all on its own filesystem, persistent across execs)."""
SANDBOX_USER = "sandbox"
SANDBOX_UID = 1000
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

# Host uids for samples when the host runs as root: a random one per sample from a
# range far above login users and the usual subuid ranges, so the uid owns nothing else.
_HOST_UID_BASE = 100_000_000
_HOST_UID_SPAN = 100_000_000
_DIR_PREFIX = "inspect-bwrap-"
_SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin"

# What of the host's /etc a sandbox sees (copied once per process, see _shared_etc):
# nothing secret, nothing about the host's users; passwd, group, hostname and hosts are
# generated instead. Entries missing on a host are skipped.
_ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "localtime", "timezone", "nsswitch.conf", "host.conf",
    "gai.conf", "profile", "bash.bashrc", "inputrc", "os-release", "debian_version",
    "mime.types", "locale.alias", "shells", "magic", "magic.mime",
)  # fmt: skip
_ETC_DIRS = ("ld.so.conf.d", "alternatives", "profile.d", "ssl/certs", "python3*")

# Exit codes of the in-sandbox file helpers below (chosen outside what cat/sh return).
_RC_ISDIR = 91
_RC_NOENT = 92
_READ_SCRIPT = (
    f'if [ -d "$1" ]; then exit {_RC_ISDIR}; fi; '
    f'if [ ! -e "$1" ]; then exit {_RC_NOENT}; fi; exec cat -- "$1"'
)
_WRITE_SCRIPT = (
    f'if [ -d "$1" ]; then exit {_RC_ISDIR}; fi; '
    'd=$(dirname -- "$1") && mkdir -p -- "$d" && exec cat > "$1"'
)


class _Indirect(Exception):
    """A path component is a symlink: resolve it inside the sandbox, never on the host."""


@functools.cache
def _binaries() -> dict[str, str] | None:
    """Absolute paths of bwrap, prlimit, setpriv and env (never resolved via a sandbox PATH)."""
    found: dict[str, str] = {}
    for name in ("bwrap", "prlimit", "setpriv", "env"):
        path = shutil.which(name) or shutil.which(name, path=_SYSTEM_PATH)
        if path is None:
            return None
        found[name] = path
    return found


@functools.cache
def _root_dirs() -> tuple[str, ...]:
    """bwrap args for /bin, /lib* and /sbin: symlinks as on the host, else read-only binds."""
    args: list[str] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    return tuple(args)


def _is_root() -> bool:
    return os.geteuid() == 0


@dataclass(eq=False)
class _Layout:
    """A sample's host side: ``root/`` (0711) holding ``disk/`` (the sample's filesystem,
    with ``work/`` -> /sandbox, ``tmp/`` -> /tmp, ``var-tmp/`` -> /var/tmp), its cgroup,
    plus the process-wide ``etc`` it shares with every other sample."""

    root: Path
    work: Path
    tmp: Path
    var_tmp: Path
    etc: Path
    uid: int
    gid: int
    drop_to_uid: bool
    disk: SampleDisk | None = None
    cgroup: SampleCgroup | None = None
    tools_tree: Path | None = None
    mounts: dict[str, Path] = field(default_factory=dict)
    """In-sandbox writable place -> its host folder."""
    ro_sources: dict[str, Path] = field(default_factory=dict)
    """``ro_binds`` path -> where the unprivileged bwrap reads it from (itself, or a
    read-only bind mount under ``root/binds`` when its ancestors are closed to others)."""

    @classmethod
    def create(cls, config: BwrapConfig, per_sample: bool = True) -> _Layout:
        """A fresh sample; ``per_sample=False`` skips its filesystem, cgroup and tools
        (for a bare availability check)."""
        root = Path(tempfile.mkdtemp(prefix=f"{_DIR_PREFIX}{os.getpid()}-"))
        layout: _Layout | None = None
        try:
            drop = _is_root()
            if drop:
                _check_traversable(root.parent)
            uid = _HOST_UID_BASE + secrets.randbelow(_HOST_UID_SPAN) if drop else os.getuid()
            gid = uid if drop else os.getgid()
            # The unprivileged bwrap must traverse root/ to reach the bind sources.
            root.chmod(0o711)
            base = root / "disk"
            base.mkdir(mode=0o755)
            disk = _sample_disk(root, base, config) if per_sample else None
            base.chmod(0o755)
            work, tmp, var_tmp = base / "work", base / "tmp", base / "var-tmp"
            layout = cls(root=root, work=work, tmp=tmp, var_tmp=var_tmp, etc=_shared_etc(),
                         uid=uid, gid=gid, drop_to_uid=drop, disk=disk,
                         mounts={SANDBOX_DIR: work, "/tmp": tmp, "/var/tmp": var_tmp})  # fmt: skip
            for folder, mode in ((work, 0o700), (tmp, 0o1777), (var_tmp, 0o1777)):
                folder.mkdir()
                if drop:
                    os.chown(folder, uid, gid)
                folder.chmod(mode)
            if per_sample and config.inspect_tools:
                layout.tools_tree = sandbox_tools.tools_tree()
                if layout.tools_tree is not None:
                    sandbox_tools.prepare_sample_dir(var_tmp, uid, gid, chown=drop)
            if per_sample:
                layout.cgroup = _sample_cgroup(config)
            layout.ro_sources = _ro_sources(root, config.ro_binds, drop)
            _live_layouts.add(layout)
            return layout
        except BaseException:
            if layout is not None:
                layout.remove()
            else:
                shutil.rmtree(root, ignore_errors=True)
            raise

    def remove(self) -> None:
        """Kill anything still running in the sample, then delete its groups and files."""
        _live_layouts.discard(self)
        if self.drop_to_uid:
            _kill_uid(self.uid)
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self.drop_to_uid:
            _kill_uid(self.uid)
        if self.disk is not None:
            self.disk.remove()
            self.disk = None
        for source in self.ro_sources.values():
            if source.is_relative_to(self.root):
                _unmount(source)
        self.ro_sources = {}
        shutil.rmtree(self.root, ignore_errors=True)
        if self.root.exists():
            logger.warning("bwrap sandbox: could not remove %s", self.root)


_live_layouts: set[_Layout] = set()
"""Samples not yet removed: a process that exits without cleaning one up (a crash, a
script without ``finally``) would otherwise leave its mount and cgroups behind."""


@atexit.register
def _remove_live_layouts() -> None:
    for layout in list(_live_layouts):
        layout.remove()


def _sample_disk(root: Path, mount_point: Path, config: BwrapConfig) -> SampleDisk | None:
    """The sample's size-limited filesystem, or None (warned once) where none can be made."""
    if not quota.quota_support().usable:
        quota.warn_unsupported_once()
        return None
    return SampleDisk.create(root / "disk.img", mount_point, config.disk_bytes)


def _sample_cgroup(config: BwrapConfig) -> SampleCgroup | None:
    """The sample's cgroup, or None (warned once) where the host offers none."""
    support = cgroups.cgroup_support()
    cgroups.warn_unsupported_once()
    if not support.usable:
        return None
    return SampleCgroup.create(config.memory_bytes, config.pids, config.cpus, support)


def _closed_to_others(path: Path) -> bool:
    """True when a folder above ``path`` lacks the others' search bit (e.g. under /root)."""
    return any(not os.stat(d).st_mode & stat.S_IXOTH for d in Path(path).parents)


def _ro_sources(root: Path, paths: list[str], drop: bool) -> dict[str, Path]:
    """Where bwrap, running as the sample's unprivileged uid, reads each ``ro_binds`` path.

    Why: bwrap resolves bind sources as that uid, so a checkout under a folder closed to
    others (``/root``, a 0700 ``mktemp -d``) cannot be bound. As root, such a path is first
    bind-mounted read-only under the sample's own (traversable) folder; the path's own
    permissions still apply inside.
    """
    sources: dict[str, Path] = {}
    for index, path in enumerate(paths):
        if not drop or not _closed_to_others(Path(path)):
            sources[path] = Path(path)
            continue
        target = root / "binds" / str(index)
        target.mkdir(parents=True, mode=0o755)
        (root / "binds").chmod(0o755)
        for argv in (["mount", "--bind", path, str(target)],
                     ["mount", "-o", "remount,bind,ro", str(target)]):
            done = sp.run(argv, capture_output=True, text=True)
            if done.returncode != 0:
                _unmount(target)
                raise PermissionError(
                    f"bwrap sandbox: {path} sits under a folder other users cannot enter, "
                    f"and binding it for the sandbox failed: {done.stderr.strip()}")
        sources[path] = target
    return sources


def _unmount(target: Path) -> None:
    # not os.path.ismount: a bind mount from the same filesystem looks like a plain folder
    done = sp.run(["umount", str(target)], capture_output=True, text=True)
    if done.returncode != 0 and "not mounted" not in done.stderr:
        sp.run(["umount", "-l", str(target)], capture_output=True)


def _check_traversable(path: Path) -> None:
    """Fail clearly when the unprivileged sample uid could not reach ``path``'s children
    (e.g. TMPDIR under /root); bwrap's own message would only say the path is missing."""
    for directory in [path, *path.parents]:
        if not os.stat(directory).st_mode & stat.S_IXOTH:
            raise PermissionError(
                f"bwrap sandbox: {directory} is not traversable by other users, so the "
                f"sandbox's uid cannot reach its work dir; point TMPDIR elsewhere (e.g. /tmp)"
            )


_etc_lock = threading.Lock()
_etc_dirs: dict[int, Path] = {}


def _shared_etc() -> Path:
    """The sandbox ``/etc``, built once per process (~0.1 s of copying) and removed at exit.

    Keyed by pid so a forked worker builds its own rather than sharing its parent's,
    which the parent deletes when it exits.
    """
    pid = os.getpid()
    with _etc_lock:
        etc = _etc_dirs.get(pid)
        if etc is None or not etc.is_dir():
            root = Path(tempfile.mkdtemp(prefix=f"{_DIR_PREFIX}{pid}-etc-"))
            root.chmod(0o711)
            etc = root / "etc"
            _populate_etc(etc)
            _etc_dirs[pid] = etc
            atexit.register(shutil.rmtree, root, True)
        return etc


def _populate_etc(etc: Path) -> None:
    etc.mkdir(mode=0o755)
    for name in _ETC_FILES:
        src = Path("/etc") / name
        if src.is_symlink():
            (etc / name).symlink_to(os.readlink(src))
        elif src.is_file():
            shutil.copyfile(src, etc / name)
            (etc / name).chmod(0o644)
    for pattern in _ETC_DIRS:
        for src in sorted(Path("/etc").glob(pattern)):
            if src.is_dir() and not src.is_symlink():
                dest = etc / src.relative_to("/etc")
                shutil.copytree(src, dest, symlinks=True, ignore_dangling_symlinks=True)
    home = SANDBOX_DIR
    (etc / "passwd").write_text(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"{SANDBOX_USER}:x:{SANDBOX_UID}:{SANDBOX_UID}:{SANDBOX_USER}:{home}:/bin/bash\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    (etc / "group").write_text(
        f"root:x:0:\n{SANDBOX_USER}:x:{SANDBOX_UID}:\nnogroup:x:65534:\n"
    )
    (etc / "hostname").write_text("sandbox\n")
    (etc / "hosts").write_text("127.0.0.1\tlocalhost sandbox\n::1\tlocalhost\n")
    (etc / "mtab").symlink_to("/proc/self/mounts")
    for path in [etc, *etc.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


def _uid_pids(uid: int) -> list[int]:
    """Host pids whose real uid is ``uid`` (from /proc/PID/status, which, unlike the
    owner of /proc/PID, stays truthful for non-dumpable processes)."""
    pids: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(entry.name))
                        break
        except (FileNotFoundError, ProcessLookupError):
            continue
    return pids


def _kill_uid(uid: int) -> int:
    """SIGKILL every host process whose real uid is ``uid``; returns how many."""
    killed = 0
    for pid in _uid_pids(uid):
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            continue
    return killed


def _command(
    layout: _Layout,
    config: BwrapConfig,
    cmd: list[str],
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> list[str]:
    """The host argv that runs ``cmd`` in the sandbox: [setpriv] prlimit bwrap ... cmd.

    Used where a process must be the provider's own child (the tools server, streaming
    ``exec_remote`` handles, the availability check); ``exec`` and the file helpers go
    through the launcher instead (:func:`_launch_request`), which does the same steps.
    """
    tools = _binaries()
    if tools is None:
        raise SandboxUnavailableError("bwrap, prlimit or setpriv is not installed")
    limits = config.limits()
    # bwrap's own init (pid 1 inside, readable as /proc/1/environ by the payload) would
    # otherwise keep the host's environment, API keys included: as root, setpriv's
    # --reset-env clears it (leaving TERM and the caller's passwd entry) without an exec of
    # its own; otherwise `env -i` leads.
    argv: list[str] = [] if layout.drop_to_uid else [tools["env"], "-i"]
    if layout.cgroup is not None:
        argv += layout.cgroup.join_argv()  # as root, before anything can fork
    if layout.drop_to_uid:
        argv += [
            tools["setpriv"], "--reset-env", f"--reuid={layout.uid}", f"--regid={layout.gid}",
            "--clear-groups", "--",
        ]  # fmt: skip
    rlimits = limits.prlimit_args()
    if not layout.drop_to_uid:
        # NPROC counts every process of the caller's uid on the host: as non-root it
        # would cap the user's whole session, not the sandbox, so it is left alone.
        rlimits = [a for a in rlimits if not a.startswith("--nproc=")]
    argv += [tools["prlimit"], *rlimits, "--"]
    return [*argv, *_bwrap_argv(layout, config, cmd, cwd, env)]


def _launch_request(
    layout: _Layout,
    config: BwrapConfig,
    cmd: list[str],
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """What the launcher (:mod:`harness.sandbox.launcher`) needs to run ``cmd`` with the
    same cgroups, uid and rlimits as :func:`_command`'s chain, and an empty environment
    for bwrap itself (its init's environ is readable inside)."""
    limits = config.limits()
    rlimits = [
        ["RLIMIT_AS", limits.memory_bytes],
        ["RLIMIT_FSIZE", limits.file_size_bytes],
        ["RLIMIT_CPU", limits.cpu_s],
        ["RLIMIT_NOFILE", limits.open_files],
        ["RLIMIT_CORE", 0],
    ]
    if layout.drop_to_uid:  # as in _command: NPROC binds only the sample's own uid
        rlimits.append(["RLIMIT_NPROC", limits.pids])
    group = layout.cgroup
    return {
        "argv": _bwrap_argv(layout, config, cmd, cwd, env),
        "cgroup_files": group.procs_files() if group is not None else [],
        "ids": [layout.uid, layout.gid] if layout.drop_to_uid else None,
        "rlimits": rlimits,
    }


def _use_launcher() -> bool:
    """``INSPECT_BWRAP_LAUNCHER=0`` runs execs through the old ``sh``/``setpriv``/
    ``prlimit`` chain and Inspect's ``subprocess()`` (to compare, or to rule it out)."""
    return os.environ.get("INSPECT_BWRAP_LAUNCHER", "1") != "0"


async def _run(
    layout: _Layout,
    config: BwrapConfig,
    cmd: list[str],
    *,
    input: str | bytes | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    timeout: int | None = None,
    output_limit: int,
    concurrency: bool = True,
) -> ExecResult[bytes]:
    """Run ``cmd`` in the sample and capture its output (bytes), by the launcher or,
    where it is turned off, by Inspect's ``subprocess()`` over :func:`_command`."""
    data = input.encode() if isinstance(input, str) else input
    limit = timeout if timeout is not None else config.timeout_s
    if not _use_launcher():
        return await subprocess(
            _command(layout, config, cmd, cwd, env), text=False, input=data, cwd="/",
            timeout=limit, output_limit=output_limit, concurrency=concurrency,
        )  # fmt: skip
    if _binaries() is None:
        raise SandboxUnavailableError("bwrap, prlimit or setpriv is not installed")
    request = _launch_request(layout, config, cmd, cwd, env)
    async with _throttle(concurrency):
        code, out, err = await execs.run(request, data, limit, output_limit)
    return ExecResult(code == 0, code, out, err)


@contextlib.asynccontextmanager
async def _throttle(enabled: bool) -> AsyncIterator[None]:
    """Inspect's ``subprocesses`` concurrency limit (``max_subprocesses``), which its
    ``subprocess()`` applies, for execs that ask for it."""
    if not enabled:
        yield
        return
    async with inspect_concurrency("subprocesses", max_subprocesses(), resizable=True):
        yield


def _bwrap_argv(
    layout: _Layout,
    config: BwrapConfig,
    cmd: list[str],
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> list[str]:
    """bwrap's own argv for ``cmd``: the sample's mounts, namespaces and environment."""
    tools = _binaries()
    if tools is None:
        raise SandboxUnavailableError("bwrap, prlimit or setpriv is not installed")
    limits = config.limits()
    workdir = SANDBOX_DIR if cwd is None else os.path.join(SANDBOX_DIR, cwd)
    sandbox_env = {
        "PATH": DEFAULT_PATH,
        "HOME": SANDBOX_DIR,
        "USER": SANDBOX_USER,
        "LOGNAME": SANDBOX_USER,
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        **config.env,
        **(env or {}),
    }
    tmp_size = str(limits.tmp_bytes)
    argv = [
        tools["bwrap"],
        "--unshare-all", "--unshare-user", "--disable-userns",
        "--die-with-parent", "--new-session",
        "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "sandbox",
        "--ro-bind", "/usr", "/usr", *_root_dirs(),
        "--ro-bind", str(layout.etc), "/etc",
        "--proc", "/proc",
        "--dev", "/dev", "--size", tmp_size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
        "--bind", str(layout.work), SANDBOX_DIR,
        "--bind", str(layout.tmp), "/tmp",
        "--bind", str(layout.var_tmp), "/var/tmp",
    ]  # fmt: skip
    if layout.tools_tree is not None:
        argv += sandbox_tools.bind_args(layout.tools_tree)
    for path in config.ro_binds:
        argv += ["--ro-bind", str(layout.ro_sources.get(path, path)), path]
    argv += ["--remount-ro", "/", "--chdir", workdir, "--clearenv"]
    for key, value in sandbox_env.items():
        argv += ["--setenv", key, value]
    return [*argv, "--", *cmd]


def bwrap_available() -> bool:
    """Whether a sandbox can actually start here (tools present, namespaces allowed).

    Runs ``true`` in a sandbox built exactly as samples get them, so it also catches
    kernels or containers that forbid unprivileged user namespaces.
    """
    if _binaries() is None:
        return False
    try:
        layout = _Layout.create(BwrapConfig(), per_sample=False)
    except OSError:
        return False
    try:
        run = sp.run(
            _command(layout, BwrapConfig(), ["true"]),
            stdin=sp.DEVNULL, capture_output=True, timeout=30, cwd="/",
        )  # fmt: skip
        return run.returncode == 0
    except (OSError, sp.TimeoutExpired):
        return False
    finally:
        layout.remove()


def _oserror(stderr: str, path: str) -> OSError:
    """The OSError a failed in-sandbox file helper stands for (from its stderr)."""
    for needle, kind in (
        ("No such file", FileNotFoundError),
        ("Directory nonexistent", FileNotFoundError),
        ("Not a directory", NotADirectoryError),
        ("Is a directory", IsADirectoryError),
        ("Permission denied", PermissionError),
        ("Read-only file system", PermissionError),
        ("No space left", OSError),
    ):
        if needle in stderr:
            return kind(f"{path}: {stderr.strip()}")
    return OSError(f"bwrap sandbox file operation failed on {path}: {stderr.strip()}")


def _named(ex: OSError, path: str) -> OSError:
    """``ex`` with the sandbox path in its message (os errors name only the last part)."""
    if path in str(ex):
        return ex
    if ex.errno:
        return type(ex)(ex.errno, f"{path}: {ex.strerror or ex}")
    return type(ex)(f"{path}: {ex}")


def _execvp_failure(result: ExecResult[str]) -> str | None:
    """bwrap's own message when it could not exec the command (it exits 1 and says so)."""
    if result.returncode != 1 or not result.stderr.startswith("bwrap: execvp "):
        return None
    return result.stderr.splitlines()[0]


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"


@sandboxenv(name="bwrap")
class BwrapSandboxEnvironment(SandboxEnvironment):
    """One sample's bubblewrap sandbox (see the module docstring for what it isolates)."""

    # Configs resolved at task_init, when Inspect has chdir'ed to the task's directory
    # (relative config file paths are relative to it; sample_init may run elsewhere).
    _configs: dict[str, BwrapConfig] = {}

    def __init__(self, config: BwrapConfig) -> None:
        super().__init__()
        self.config = config
        self._layout: _Layout | None = _Layout.create(config)
        self._service: sp.Popen[bytes] | None = None
        self._service_lock: anyio.Lock | None = None
        self._ticket: Any = None  # the admission this sample holds (sample_init's samples)

    # ---- lifecycle -------------------------------------------------------------

    @classmethod
    def _config(cls, config: SandboxEnvironmentConfigType | None) -> BwrapConfig:
        if isinstance(config, str) and config in cls._configs:
            return cls._configs[config]
        return load_config(config)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        if _binaries() is None:
            raise prerequisite_error(
                "The bwrap sandbox needs bubblewrap and util-linux (prlimit, setpriv): "
                "apt-get install bubblewrap util-linux"
            )
        if isinstance(config, str):
            cls._configs[config] = load_config(config)

    @classmethod
    async def sample_init(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        metadata: dict[str, str],
    ) -> dict[str, SandboxEnvironment]:
        resolved = cls._config(config)
        ticket = await admission.admit(resolved.memory_bytes, resolved.cpus)
        try:
            env = await anyio.to_thread.run_sync(cls, resolved)
        except BaseException:
            admission.release(ticket)
            raise
        group = env.cgroup
        admission.track(ticket, group.memory_usage if group is not None else None)
        env._ticket = ticket
        return {"default": env}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for environment in environments.values():
            await anyio.to_thread.run_sync(environment.as_type(BwrapSandboxEnvironment).cleanup)

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        """Remove work dirs, filesystems and cgroups left by dead processes
        (``inspect sandbox cleanup bwrap``)."""
        base = Path(tempfile.gettempdir())
        for path in base.glob(f"{_DIR_PREFIX}*"):
            if id is not None and path.name != id:
                continue
            pid = path.name[len(_DIR_PREFIX) :].split("-", 1)[0]
            if id is None and pid.isdigit() and Path(f"/proc/{pid}").exists():
                continue
            if (path / "disk").is_mount():
                sp.run(["umount", "-l", str(path / "disk")], capture_output=True)
            shutil.rmtree(path, ignore_errors=True)
        if id is None and cgroups.cgroup_support().usable:
            cgroups.remove_stale_groups()

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return BwrapConfig(**config)

    @classmethod
    def default_concurrency(cls) -> int | None:
        """None: samples are admitted by the host's free memory and CPU in ``sample_init``
        (:mod:`harness.sandbox.admission`, which logs the limit it chose), not by a fixed
        count; ``max_sandboxes`` still caps them when a user sets it."""
        return None

    def cleanup(self) -> None:
        """Stop the sample's processes, remove its cgroup, filesystem and files (idempotent)."""
        self._stop_service()
        if self._ticket is not None:
            admission.release(self._ticket)
            self._ticket = None
        layout, self._layout = self._layout, None
        if layout is not None:
            layout.remove()

    @property
    def layout(self) -> _Layout:
        if self._layout is None:
            raise SandboxUnavailableError("this bwrap sandbox has been cleaned up")
        return self._layout

    @property
    def host_uid(self) -> int:
        """Host uid the sample's processes run as (unique per sample when run as root)."""
        return self.layout.uid

    @property
    def work_dir(self) -> Path:
        """Host path of ``/sandbox`` (for tests and debugging; don't write into it)."""
        return self.layout.work

    @property
    def cgroup(self) -> SampleCgroup | None:
        """The sample's cgroup (None where the host offers none)."""
        return self.layout.cgroup

    @property
    def disk(self) -> SampleDisk | None:
        """The sample's size-limited filesystem (None where none could be made)."""
        return self.layout.disk

    # ---- exec --------------------------------------------------------------------

    def _check_user(self, user: str | None) -> None:
        if user is not None and user not in (SANDBOX_USER, str(SANDBOX_UID)):
            raise SandboxUserUnsupportedError(
                f"bwrap sandbox runs commands as {SANDBOX_USER!r} only, not {user!r}"
            )

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        """Run ``cmd`` in a fresh sandbox process tree over this sample's filesystem.

        The exec's bwrap is started by the launcher (:mod:`harness.sandbox.launcher`),
        which joins it to the sample's cgroups, drops it to the sample's uid and sets its
        rlimits in the forked child. ``timeout`` (else the config's ``timeout_s``) raises
        ``TimeoutError`` once the whole tree has been killed (SIGKILL at the limit, no
        grace: the sandbox is thrown away anyway); cancellation kills it the same way.
        ``timeout_retry`` is ignored: a retry of a command that ran out of time would
        only do so again. ``concurrency`` throttles by Inspect's ``max_subprocesses``, as
        its ``subprocess()`` does. Output beyond Inspect's exec limit keeps its trailing
        part, as Inspect's local sandbox does. A command that is not executable raises
        ``PermissionError``. When the sample hit its memory or process limit during the
        exec, stderr ends with a line saying so.
        """
        self._check_user(user)
        if not cmd:
            raise ValueError("exec needs a command")
        layout = self.layout
        if cmd[0] == sandbox_tools.TOOLS_CLI and layout.tools_tree is not None:
            if cmd[1:] == ["start-server"]:
                await self._ensure_service()
                return ExecResult(True, 0, "", "")
            if cmd[1:] == ["stop-server"]:
                await anyio.to_thread.run_sync(self._stop_service)
                return ExecResult(True, 0, "", "")
            await self._ensure_service()
        before = self._limit_events()
        raw = await _run(
            layout, self.config, cmd, input=input, cwd=cwd, env=env, timeout=timeout,
            output_limit=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE, concurrency=concurrency,
        )  # fmt: skip
        result = ExecResult(raw.success, raw.returncode, raw.stdout.decode(errors="replace"),
                            raw.stderr.decode(errors="replace"))  # fmt: skip
        failure = _execvp_failure(result)
        if failure is not None and "Permission denied" in failure:
            raise PermissionError(f"{cmd[0]}: permission denied (not an executable file?)")
        note = self._limit_note(before)
        if note:
            result = ExecResult(result.success, result.returncode, result.stdout,
                                result.stderr + note)  # fmt: skip
        return result

    @overload
    async def exec_remote(
        self,
        cmd: list[str],
        options: ExecRemoteStreamingOptions | None = None,
        *,
        stream: Literal[True] = True,
    ) -> ExecRemoteProcess: ...

    @overload
    async def exec_remote(
        self,
        cmd: list[str],
        options: ExecRemoteAwaitableOptions | None = None,
        *,
        stream: Literal[False],
    ) -> ExecResult[str]: ...

    async def exec_remote(
        self,
        cmd: list[str],
        options: ExecRemoteStreamingOptions | ExecRemoteAwaitableOptions | None = None,
        *,
        stream: bool = True,
    ) -> ExecRemoteProcess | ExecResult[str]:
        """Start ``cmd`` in the sample and return a live handle (``stream=True``) or, with
        ``stream=False``, its result; see :mod:`harness.sandbox.remote`.

        Unlike Inspect's default, no tool server is injected and nothing is polled: the
        handle holds the exec's own bwrap, so output streams as written and ``kill()``
        ends the exec's whole PID namespace. The config's ``timeout_s`` does not apply
        (a handle runs until it ends or is killed); ``options.timeout`` does in awaitable
        mode. Poll options are accepted and have nothing to tune.
        """
        opts = options or (ExecRemoteStreamingOptions() if stream else ExecRemoteAwaitableOptions())
        self._check_user(opts.user)
        if not cmd:
            raise ValueError("exec_remote needs a command")
        argv = _command(self.layout, self.config, cmd, opts.cwd, opts.env)
        handle = BwrapRemoteProcess(argv, opts)
        return handle if stream else await awaitable(handle, opts)

    def _limit_events(self) -> tuple[int, int]:
        group = self.layout.cgroup
        return (0, 0) if group is None else (group.oom_kills(), group.pids_refusals())

    def _limit_note(self, before: tuple[int, int]) -> str:
        """Lines telling the sample which of its per-sample limits it ran into."""
        group = self.layout.cgroup
        if group is None:
            return ""
        (oom_now, refused_now), (oom_then, refused_then) = self._limit_events(), before
        oom, refused = oom_now - oom_then, refused_now - refused_then
        lines = []
        if oom:
            lines.append(
                f"bwrap sandbox: out of memory: the sample's processes together reached its "
                f"memory limit ({_size(self.config.memory_bytes)}); the kernel killed {oom} "
                f"of them"
            )
        if refused:
            lines.append(
                f"bwrap sandbox: process limit: the sample may run {self.config.pids} "
                f"processes and threads at once; {refused} fork(s) were refused"
            )
        return "".join(f"\n{line}\n" for line in lines)

    # ---- Inspect's tool-support server ---------------------------------------------

    async def _ensure_service(self) -> None:
        """Start the sample's long-lived bwrap that runs Inspect's tool-support server
        (``inspect-sandbox-tools start-server``), unless it already runs.

        An ordinary exec's processes die with it, so the server (and the shells that
        ``bash_session`` keeps) live in this one instead; the tool calls themselves are
        ordinary execs of the launcher, which reach the server through its socket in
        ``/var/tmp``. It runs with the sample's mounts, uid, cgroup and rlimits, without
        the wall-clock limit, and cleanup kills it.
        """
        if self._service_lock is None:
            self._service_lock = anyio.Lock()
        async with self._service_lock:
            if self._service is not None and self._service.poll() is None:
                return
            script = (
                f'{sandbox_tools.TOOLS_CLI} start-server >/dev/null 2>&1; rc=$?; echo "ready $rc"; '
                '[ "$rc" -eq 0 ] && exec sleep infinity; exit "$rc"'
            )
            argv = _command(self.layout, self.config, ["/bin/sh", "-c", script])
            proc = sp.Popen(argv, stdin=sp.DEVNULL, stdout=sp.PIPE, stderr=sp.DEVNULL, cwd="/")
            self._service = proc
            assert proc.stdout is not None
            stdout: IO[bytes] = proc.stdout
            try:
                with anyio.fail_after(120):
                    line = await anyio.to_thread.run_sync(stdout.readline,
                                                          abandon_on_cancel=True)  # fmt: skip
            except TimeoutError:
                self._stop_service()
                raise RuntimeError(
                    "bwrap sandbox: the sandbox tools server did not start"
                ) from None
            if line.strip() != b"ready 0":
                self._stop_service()
                raise RuntimeError(
                    f"bwrap sandbox: the sandbox tools server failed to start ({line!r})"
                )

    def _stop_service(self) -> None:
        proc, self._service = self._service, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()  # its bwrap is the namespace's parent: the whole tree goes
            try:
                proc.wait(timeout=10)
            except sp.TimeoutExpired:
                logger.warning("bwrap sandbox: tools server %s did not exit", proc.pid)
        if proc.stdout is not None:
            proc.stdout.close()

    # ---- files -------------------------------------------------------------------

    def _resolve(self, file: str) -> tuple[str, Path | None, list[str] | None]:
        """The in-sandbox path of ``file`` and, when it lies plainly in one of the
        sample's writable places, that place's host folder and the components below it
        (``None``: only the sandbox itself may resolve it)."""
        inside = file if file.startswith("/") else f"{SANDBOX_DIR}/{file}"
        parts = [p for p in inside.split("/") if p not in ("", ".")]
        path = "/" + "/".join(parts)
        if ".." in parts:
            return path, None, None
        if path == sandbox_tools.TOOLS_DIR or path.startswith(f"{sandbox_tools.TOOLS_DIR}/"):
            return path, None, None  # read-only binds the host folder doesn't show
        for mount in sorted(WRITABLE, key=len, reverse=True):
            depth = mount.count("/")
            if parts[:depth] == mount.strip("/").split("/"):
                return path, self.layout.mounts[mount], parts[depth:]
        return path, None, None

    def _may(self, st: os.stat_result, want: int) -> bool:
        """Whether the sandbox user may ``want`` (r=4, w=2, x=1) a file with this stat.

        The host side runs as root, which the kernel would let through anything; this is
        the check the kernel makes for the sample's uid (owner, group, then other bits).
        Without root the host user is the sample's user and the kernel checks itself.
        """
        layout = self.layout
        if not layout.drop_to_uid:
            return True
        if st.st_uid == layout.uid:
            bits = st.st_mode >> 6
        elif st.st_gid == layout.gid:
            bits = st.st_mode >> 3
        else:
            bits = st.st_mode
        return bits & want == want

    def _open(
        self, host: Path, parts: list[str], path: str, flags: int, create_dirs: bool = False
    ) -> int:
        """Open host/<parts> as the sandbox user would, without following any symlink
        (``_Indirect``: the sandbox resolves it)."""
        layout = self.layout
        writing = bool(flags & (os.O_WRONLY | os.O_RDWR))
        dir_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        dirfd = os.open(host, dir_flags)
        try:
            for part in parts[:-1]:
                if not self._may(os.fstat(dirfd), 1):
                    raise PermissionError(errno.EACCES, f"{path}: permission denied")
                try:
                    nextfd = os.open(part, dir_flags, dir_fd=dirfd)
                except FileNotFoundError:
                    if not create_dirs:
                        raise
                    if not self._may(os.fstat(dirfd), 3):
                        raise PermissionError(errno.EACCES, f"{path}: permission denied") from None
                    os.mkdir(part, 0o755, dir_fd=dirfd)
                    if layout.drop_to_uid:
                        os.chown(part, layout.uid, layout.gid, dir_fd=dirfd, follow_symlinks=False)
                    nextfd = os.open(part, dir_flags, dir_fd=dirfd)
                except NotADirectoryError:
                    if stat.S_ISLNK(os.stat(part, dir_fd=dirfd, follow_symlinks=False).st_mode):
                        raise _Indirect() from None
                    raise
                os.close(dirfd)
                dirfd = nextfd
            leaf = parts[-1]
            parent = os.fstat(dirfd)
            if not self._may(parent, 1):
                raise PermissionError(errno.EACCES, f"{path}: permission denied")
            try:
                st: os.stat_result | None = os.stat(leaf, dir_fd=dirfd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise _Indirect()
            if st is not None and stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, f"{path} is a directory")
            if st is None and not writing:
                raise FileNotFoundError(errno.ENOENT, f"{path}: no such file")
            allowed = self._may(parent, 3) if st is None else self._may(st, 2 if writing else 4)
            if not allowed:
                raise PermissionError(errno.EACCES, f"{path}: permission denied")
            try:
                flags |= os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
                fd = os.open(leaf, flags, 0o644, dir_fd=dirfd)
            except OSError as ex:
                if ex.errno == errno.ELOOP:
                    raise _Indirect() from None
                raise
            if st is None and layout.drop_to_uid:
                os.fchown(fd, layout.uid, layout.gid)
            return fd
        finally:
            os.close(dirfd)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Read a file as the sandbox user sees it; paths in the sample's writable places
        are read from the host without following symlinks (and with the sandbox user's
        permissions), anything else (or any symlink) from inside."""
        path, host, parts = self._resolve(file)
        data: bytes | None = None
        if parts == []:
            raise IsADirectoryError(errno.EISDIR, f"{path} is a directory")
        try:
            if host is not None and parts is not None:
                try:
                    data = self._read_host(host, parts, path)
                except _Indirect:
                    data = None
            if data is None:
                data = await self._read_inside(path)
        except OSError as ex:
            raise _named(ex, path) from None
        return data.decode("utf-8") if text else data

    def _read_host(self, host: Path, parts: list[str], path: str) -> bytes:
        fd = self._open(host, parts, path, os.O_RDONLY)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise PermissionError(errno.EACCES, f"{path} is not a regular file")
            if st.st_size > SandboxEnvironmentLimits.MAX_READ_FILE_SIZE:
                raise OutputLimitExceededError(
                    SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
                )
            return f.read(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE + 1)

    async def _read_inside(self, path: str) -> bytes:
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        result = await _run(self.layout, self.config, ["/bin/sh", "-c", _READ_SCRIPT, "sh", path],
                            output_limit=limit + 1)  # fmt: skip
        if result.returncode == _RC_ISDIR:
            raise IsADirectoryError(errno.EISDIR, f"{path} is a directory")
        if result.returncode == _RC_NOENT:
            raise FileNotFoundError(errno.ENOENT, f"{path}: no such file in the sandbox")
        if result.returncode != 0:
            raise _oserror(result.stderr.decode(errors="replace"), path)
        if len(result.stdout) > limit:
            raise OutputLimitExceededError(
                SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
            )
        return result.stdout

    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Write a file as the sandbox user would (parents created, owned by that user).

        Only ``/sandbox``, ``/tmp`` and ``/var/tmp`` are writable (the sample's own
        filesystem, so its disk quota applies); anything else raises ``PermissionError``.
        """
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        path, host, parts = self._resolve(file)
        if parts == []:
            raise IsADirectoryError(errno.EISDIR, f"{path} is a directory")
        if host is None and ".." not in path.split("/"):
            writable = any(path.startswith(f"{m}/") for m in WRITABLE)
            if not writable or path.startswith(f"{sandbox_tools.TOOLS_DIR}/"):
                raise PermissionError(
                    errno.EROFS, f"{path}: read-only in a bwrap sandbox (only "
                    f"{', '.join(WRITABLE)} are writable)"
                )  # fmt: skip
        try:
            if host is not None and parts is not None:
                try:
                    self._write_host(host, parts, path, data)
                    return
                except _Indirect:
                    pass
            await self._write_inside(path, data)
        except OSError as ex:
            raise _named(ex, path) from None

    def _write_host(self, host: Path, parts: list[str], path: str, data: bytes) -> None:
        fd = self._open(host, parts, path, os.O_WRONLY | os.O_CREAT, create_dirs=True)
        with os.fdopen(fd, "wb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise PermissionError(errno.EACCES, f"{path} is not a regular file")
            if st.st_nlink > 1:
                raise PermissionError(
                    errno.EACCES, f"{path} has other hard links; not writing through them"
                )
            os.ftruncate(fd, 0)
            f.write(data)

    async def _write_inside(self, path: str, data: bytes) -> None:
        result = await _run(self.layout, self.config, ["/bin/sh", "-c", _WRITE_SCRIPT, "sh", path],
                            input=data, output_limit=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE)
        if result.returncode == _RC_ISDIR:
            raise IsADirectoryError(errno.EISDIR, f"{path} is a directory")
        if result.returncode != 0:
            raise _oserror(result.stderr.decode(errors="replace"), path)
