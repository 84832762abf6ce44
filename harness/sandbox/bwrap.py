"""The ``bwrap`` Inspect sandbox: bubblewrap isolation without a daemon or an image.

Each sample gets a fresh host temp dir, mounted read-write at ``/sandbox`` (the cwd of
every exec); the host's ``/usr`` and an allowlisted copy of ``/etc`` are read-only; there
is no network (own, empty network namespace), a fresh ``/proc`` and ``/dev``, and an
in-memory ``/tmp`` that lives as long as one exec. Every exec is its own bwrap process
with its own PID namespace, so nothing it starts survives it: when the command returns,
times out or is cancelled, the namespace's init dies and the kernel kills the rest.

Limits (``harness.sandbox.limits``) are rlimits set by ``prlimit`` on the bwrap process.
``RLIMIT_NPROC`` does not bind root, so a root host runs each sample as a fresh
unprivileged host uid (``setpriv``); bwrap then builds an unprivileged user namespace in
which the payload is ``sandbox`` (uid 1000). The pid count is thereby per sample, and
that uid owning nothing else on the host is also what lets cleanup kill by uid.

Use it with ``Task(..., sandbox="bwrap")`` or ``sandbox=("bwrap", "limits.yaml")``;
``bash()`` and ``python()`` work unchanged (``python3`` is the host's system Python).
Tools that need a long-lived in-sandbox server (``bash_session``, ``text_editor``) do not.
"""

from __future__ import annotations

import atexit
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from inspect_ai.util import (
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
from pydantic import BaseModel

from harness.sandbox.limits import BwrapConfig, load_config

logger = logging.getLogger(__name__)

SANDBOX_DIR = "/sandbox"
"""In-sandbox mount point of the per-sample work dir (cwd of every exec)."""
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
    """Absolute paths of bwrap, prlimit and setpriv (never resolved via a sandbox PATH)."""
    found: dict[str, str] = {}
    for name in ("bwrap", "prlimit", "setpriv"):
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


@dataclass
class _Layout:
    """A sample's host side: ``root/`` (0711) holding ``work/`` (-> /sandbox), plus the
    process-wide ``etc`` it shares with every other sample."""

    root: Path
    work: Path
    etc: Path
    uid: int
    gid: int
    drop_to_uid: bool

    @classmethod
    def create(cls) -> _Layout:
        root = Path(tempfile.mkdtemp(prefix=f"{_DIR_PREFIX}{os.getpid()}-"))
        try:
            drop = _is_root()
            if drop:
                _check_traversable(root.parent)
            uid = _HOST_UID_BASE + secrets.randbelow(_HOST_UID_SPAN) if drop else os.getuid()
            gid = uid if drop else os.getgid()
            # The unprivileged bwrap must traverse root/ to reach the bind sources.
            root.chmod(0o711)
            work = root / "work"
            work.mkdir(mode=0o700)
            if drop:
                os.chown(work, uid, gid)
            etc = _shared_etc()
            return cls(root=root, work=work, etc=etc, uid=uid, gid=gid, drop_to_uid=drop)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise

    def remove(self) -> None:
        """Kill anything still running as the sample's uid, then delete its files."""
        if self.drop_to_uid:
            _kill_uid(self.uid)
        shutil.rmtree(self.root, ignore_errors=True)
        if self.root.exists():
            logger.warning("bwrap sandbox: could not remove %s", self.root)


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
    """The host argv that runs ``cmd`` in the sandbox: [setpriv] prlimit bwrap ... cmd."""
    tools = _binaries()
    if tools is None:
        raise SandboxUnavailableError("bwrap, prlimit or setpriv is not installed")
    limits = config.limits()
    argv: list[str] = []
    if layout.drop_to_uid:
        argv += [
            tools["setpriv"], f"--reuid={layout.uid}", f"--regid={layout.gid}",
            "--clear-groups", "--",
        ]  # fmt: skip
    rlimits = limits.prlimit_args()
    if not layout.drop_to_uid:
        # NPROC counts every process of the caller's uid on the host: as non-root it
        # would cap the user's whole session, not the sandbox, so it is left alone.
        rlimits = [a for a in rlimits if not a.startswith("--nproc=")]
    argv += [tools["prlimit"], *rlimits, "--"]

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
    argv += [
        tools["bwrap"],
        "--unshare-all", "--unshare-user", "--disable-userns",
        "--die-with-parent", "--new-session",
        "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "sandbox",
        "--ro-bind", "/usr", "/usr", *_root_dirs(),
        "--ro-bind", str(layout.etc), "/etc",
        "--proc", "/proc",
        "--dev", "/dev", "--size", tmp_size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
        "--size", tmp_size, "--tmpfs", "/tmp",
        "--bind", str(layout.work), SANDBOX_DIR,
    ]  # fmt: skip
    for path in config.ro_binds:
        argv += ["--ro-bind", path, path]
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
        layout = _Layout.create()
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
    ):
        if needle in stderr:
            return kind(f"{stderr.strip()} ({path})")
    return OSError(f"bwrap sandbox file operation failed on {path}: {stderr.strip()}")


@sandboxenv(name="bwrap")
class BwrapSandboxEnvironment(SandboxEnvironment):
    """One sample's bubblewrap sandbox (see the module docstring for what it isolates)."""

    # Configs resolved at task_init, when Inspect has chdir'ed to the task's directory
    # (relative config file paths are relative to it; sample_init may run elsewhere).
    _configs: dict[str, BwrapConfig] = {}

    def __init__(self, config: BwrapConfig) -> None:
        super().__init__()
        self.config = config
        self._layout: _Layout | None = _Layout.create()

    # ---- lifecycle -------------------------------------------------------------

    @classmethod
    def _config(cls, config: SandboxEnvironmentConfigType | None) -> BwrapConfig:
        if isinstance(config, str) and config in cls._configs:
            return cls._configs[config]
        return load_config(config)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        from harness.inspect_compat import prerequisite_error

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
        return {"default": cls(cls._config(config))}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for environment in environments.values():
            environment.as_type(BwrapSandboxEnvironment).cleanup()

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        """Remove work dirs left by dead processes (``inspect sandbox cleanup bwrap``)."""
        base = Path(tempfile.gettempdir())
        for path in base.glob(f"{_DIR_PREFIX}*"):
            if id is not None and path.name != id:
                continue
            pid = path.name[len(_DIR_PREFIX) :].split("-", 1)[0]
            if id is None and pid.isdigit() and Path(f"/proc/{pid}").exists():
                continue
            shutil.rmtree(path, ignore_errors=True)

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return BwrapConfig(**config)

    @classmethod
    def default_concurrency(cls) -> int | None:
        return 2 * len(os.sched_getaffinity(0))

    def cleanup(self) -> None:
        """Kill what still runs as this sample's uid and remove its work dir (idempotent)."""
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
        """Run ``cmd`` in a fresh sandbox process tree over this sample's ``/sandbox``.

        ``timeout`` (else the config's ``timeout_s``) raises ``TimeoutError`` with the
        whole tree killed at the limit (the error itself comes after the 2 s grace that
        Inspect's ``subprocess`` gives a terminated process). ``timeout_retry`` is
        ignored: a retry of a command that ran out of time would only do so again.
        Output beyond Inspect's exec limit keeps its trailing part, as Inspect's local
        sandbox does.
        """
        self._check_user(user)
        if not cmd:
            raise ValueError("exec needs a command")
        argv = _command(self.layout, self.config, cmd, cwd, env)
        return await subprocess(
            argv,
            input=input,
            cwd="/",
            timeout=timeout if timeout is not None else self.config.timeout_s,
            output_limit=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE,
            concurrency=concurrency,
        )

    # ---- files -------------------------------------------------------------------

    def _resolve(self, file: str) -> tuple[str, list[str] | None]:
        """The in-sandbox path of ``file`` and, when it lies plainly under /sandbox,
        its components there (``None``: only the sandbox itself may resolve it)."""
        inside = file if file.startswith("/") else f"{SANDBOX_DIR}/{file}"
        parts = [p for p in inside.split("/") if p not in ("", ".")]
        path = "/" + "/".join(parts)
        if ".." in parts or parts[:1] != [SANDBOX_DIR.strip("/")]:
            return path, None
        return path, parts[1:]

    def _open(self, parts: list[str], flags: int, create_dirs: bool = False) -> int:
        """Open work/<parts> from the host without following any symlink (``_Indirect``)."""
        layout = self.layout
        dir_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        dirfd = os.open(layout.work, dir_flags)
        try:
            for part in parts[:-1]:
                try:
                    nextfd = os.open(part, dir_flags, dir_fd=dirfd)
                except FileNotFoundError:
                    if not create_dirs:
                        raise
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
            try:
                flags |= os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
                return os.open(parts[-1], flags, 0o644, dir_fd=dirfd)
            except OSError as ex:
                if ex.errno == errno.ELOOP:
                    raise _Indirect() from None
                raise
        finally:
            os.close(dirfd)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Read a file as the sandbox sees it; paths under /sandbox are read from the host
        without following symlinks, anything else (or any symlink) from inside."""
        path, parts = self._resolve(file)
        data: bytes | None = None
        if parts == []:
            raise IsADirectoryError(f"{path} is a directory")
        if parts is not None:
            try:
                data = self._read_host(parts, path)
            except _Indirect:
                data = None
        if data is None:
            data = await self._read_inside(path)
        return data.decode("utf-8") if text else data

    def _read_host(self, parts: list[str], path: str) -> bytes:
        fd = self._open(parts, os.O_RDONLY)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(f"{path} is a directory")
            if not stat.S_ISREG(st.st_mode):
                raise PermissionError(f"{path} is not a regular file")
            if st.st_size > SandboxEnvironmentLimits.MAX_READ_FILE_SIZE:
                raise OutputLimitExceededError(
                    SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
                )
            return f.read(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE + 1)

    async def _read_inside(self, path: str) -> bytes:
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        argv = _command(self.layout, self.config, ["/bin/sh", "-c", _READ_SCRIPT, "sh", path])
        result = await subprocess(
            argv, text=False, cwd="/", timeout=self.config.timeout_s, output_limit=limit + 1
        )
        if result.returncode == _RC_ISDIR:
            raise IsADirectoryError(f"{path} is a directory")
        if result.returncode == _RC_NOENT:
            raise FileNotFoundError(f"{path}: no such file in the sandbox")
        if result.returncode != 0:
            raise _oserror(result.stderr.decode(errors="replace"), path)
        if len(result.stdout) > limit:
            raise OutputLimitExceededError(
                SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
            )
        return result.stdout

    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Write a file under /sandbox (parents created, owned by the sandbox user).

        Everything else in the sandbox is read-only or lives for one exec only, so a
        path outside /sandbox raises ``PermissionError``.
        """
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        path, parts = self._resolve(file)
        if parts == []:
            raise IsADirectoryError(f"{path} is a directory")
        if parts is None and not path.startswith(f"{SANDBOX_DIR}/"):
            raise PermissionError(f"{path}: only {SANDBOX_DIR} is writable in a bwrap sandbox")
        if parts is not None:
            try:
                self._write_host(parts, path, data)
                return
            except _Indirect:
                pass
        await self._write_inside(path, data)

    def _write_host(self, parts: list[str], path: str, data: bytes) -> None:
        layout = self.layout
        fd = self._open(parts, os.O_WRONLY | os.O_CREAT, create_dirs=True)
        with os.fdopen(fd, "wb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise PermissionError(f"{path} is not a regular file")
            if st.st_nlink > 1:
                raise PermissionError(f"{path} has other hard links; not writing through them")
            os.ftruncate(fd, 0)
            if layout.drop_to_uid:
                os.fchown(fd, layout.uid, layout.gid)
            f.write(data)

    async def _write_inside(self, path: str, data: bytes) -> None:
        argv = _command(self.layout, self.config, ["/bin/sh", "-c", _WRITE_SCRIPT, "sh", path])
        result = await subprocess(argv, input=data, cwd="/", timeout=self.config.timeout_s)
        if result.returncode == _RC_ISDIR:
            raise IsADirectoryError(f"{path} is a directory")
        if result.returncode != 0:
            raise _oserror(result.stderr, path)
