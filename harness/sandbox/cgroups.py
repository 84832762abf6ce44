"""Per-sample cgroups for the ``bwrap`` sandbox: memory (swap off), pids and CPU together.

The rlimits in :mod:`harness.sandbox.limits` bind each process; a cgroup binds the sample
as a whole, so four processes of 1.2 GB each meet one memory limit, the kernel's OOM killer
picks its victim inside the sample, and a fork bomb stops at the sample's pid count.

Both hierarchies are supported:

- **cgroup v2** (``memory.max``, ``memory.swap.max``, ``pids.max``, ``cpu.max``): samples
  live under ``<parent>/evalsuite-bwrap/``. The parent is ``$EVALSUITE_CGROUP_PARENT`` when
  set (a delegated, writable cgroup whose own ``cgroup.subtree_control`` you control), else
  the root of the cgroup2 mount when it offers the three controllers and is writable.
- **cgroup v1** (``memory.limit_in_bytes``, ``memory.memsw.limit_in_bytes``,
  ``pids.max``, ``cpu.cfs_quota_us``): one group per controller mount, each at
  ``<mount>/evalsuite-bwrap/<sample>``.

v2 is preferred when it has all three controllers; otherwise each v1 controller that is
mounted and writable is used. Where none is, :func:`cgroup_support` says why and how to
fix it, the provider warns once, and the per-process rlimits remain the only limits.

A sample's processes join its groups before ``bwrap`` starts (:meth:`SampleCgroup.join_argv`
is a two-line ``sh`` prefix run as root, writing ``0``, itself, into v1's ``tasks`` or v2's
``cgroup.procs``), so nothing the payload forks is ever outside.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import secrets
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

GROUP_DIR = "evalsuite-bwrap"
"""Name of the folder (in each hierarchy) that holds one group per live sample."""
PARENT_ENV = "EVALSUITE_CGROUP_PARENT"
CONTROLLERS = ("memory", "pids", "cpu")
CPU_PERIOD_US = 100_000
_MOUNTINFO = Path("/proc/self/mountinfo")


@dataclass(frozen=True)
class CgroupSupport:
    """What this host offers: ``mode`` is ``"v2"``, ``"v1"`` or ``"none"``."""

    mode: str
    controllers: tuple[str, ...]
    """The controllers a sample group gets (a subset of memory, pids, cpu)."""
    roots: dict[str, Path] = field(default_factory=dict)
    """Folder holding the sample groups, per controller (v2: one folder for all)."""
    reason: str = ""
    """Why a controller (or all of them) is missing, with the fix; empty when complete."""

    @property
    def usable(self) -> bool:
        return self.mode != "none"

    @property
    def complete(self) -> bool:
        return set(self.controllers) == set(CONTROLLERS)


def _mounts(mountinfo: Path = _MOUNTINFO) -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, super options) of every cgroup/cgroup2 mount."""
    found = []
    try:
        lines = mountinfo.read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        point = fields[4].replace("\\040", " ")
        found.append((point, tail[0], set(tail[2].split(","))))
    return found


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def _v2_parent(mounts: list[tuple[str, str, set[str]]]) -> tuple[Path | None, str]:
    """The cgroup2 folder to create ``evalsuite-bwrap`` in, or None with the reason."""
    explicit = os.environ.get(PARENT_ENV)
    candidates = [Path(explicit)] if explicit else [Path(p) for p, t, _ in mounts if t == "cgroup2"]
    reasons = []
    for parent in candidates:
        try:
            offered = set((parent / "cgroup.controllers").read_text().split())
        except OSError:
            reasons.append(f"{parent}: not a cgroup2 folder")
            continue
        missing = [c for c in CONTROLLERS if c not in offered]
        if missing:
            reasons.append(f"{parent} offers no {', '.join(missing)} controller")
            continue
        if not _writable_dir(parent):
            reasons.append(f"{parent} is not writable by this user")
            continue
        return parent, ""
    return None, "; ".join(reasons)


def _enable_subtree(folder: Path) -> None:
    """Make sure ``folder``'s children get the three controllers (v2)."""
    enabled = set((folder / "cgroup.subtree_control").read_text().split())
    missing = [c for c in CONTROLLERS if c not in enabled]
    if missing:
        (folder / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in missing))


@functools.cache
def cgroup_support() -> CgroupSupport:
    """Probe once per process which cgroup hierarchy can hold sample limits here."""
    return probe_cgroups()


def probe_cgroups(mountinfo: Path = _MOUNTINFO) -> CgroupSupport:
    """Uncached :func:`cgroup_support` (tests point it at other mount tables)."""
    mounts = _mounts(mountinfo)
    fix_root = (
        "run the eval as root, or delegate a cgroup v2 subtree to this user "
        f"(e.g. `systemd-run --user --scope -p Delegate=yes ...`) and point {PARENT_ENV} at it"
    )
    parent, v2_reason = _v2_parent(mounts)
    if parent is not None:
        root = parent / GROUP_DIR
        try:
            _enable_subtree(parent)
            root.mkdir(exist_ok=True)
            _enable_subtree(root)
            return CgroupSupport("v2", CONTROLLERS, {c: root for c in CONTROLLERS})
        except OSError as ex:
            v2_reason = f"cannot prepare {root}: {ex}"
    roots: dict[str, Path] = {}
    v1_reasons = []
    for controller in CONTROLLERS:
        point = next((Path(p) for p, t, opts in mounts if t == "cgroup" and controller in opts),
                     None)  # fmt: skip
        if point is None:
            v1_reasons.append(f"no cgroup v1 {controller} mount")
            continue
        if not _writable_dir(point):
            v1_reasons.append(f"{point} is not writable by this user")
            continue
        try:
            (point / GROUP_DIR).mkdir(exist_ok=True)
        except OSError as ex:
            v1_reasons.append(f"cannot create {point / GROUP_DIR}: {ex.strerror}")
            continue
        roots[controller] = point / GROUP_DIR
    if roots:
        missing = [c for c in CONTROLLERS if c not in roots]
        reason = ""
        if missing:
            reason = (f"cgroup v1 without {', '.join(missing)} ({'; '.join(v1_reasons)}); "
                      f"fix: mount those controllers or {fix_root}")  # fmt: skip
        return CgroupSupport("v1", tuple(c for c in CONTROLLERS if c in roots), roots, reason)
    why = "; ".join(r for r in (v2_reason, "; ".join(v1_reasons)) if r) or "no cgroup mounts"
    return CgroupSupport("none", (), {}, f"no writable cgroup hierarchy ({why}); fix: {fix_root}")


@functools.cache
def warn_unsupported_once() -> None:
    """Log, once per process, that samples only get per-process limits here."""
    support = cgroup_support()
    if not support.usable:
        logger.warning(
            "bwrap sandbox: samples have per-process limits only (memory, pids and CPU are "
            "not bounded per sample): %s. `harness doctor` checks this.", support.reason,
        )  # fmt: skip
    elif not support.complete:
        logger.warning("bwrap sandbox: partial per-sample limits: %s", support.reason)


def _read_int(path: Path, key: str | None = None) -> int:
    """An integer file, or the value of ``key`` in a ``key value`` file (0 when absent)."""
    try:
        text = path.read_text()
    except OSError:
        return 0
    if key is None:
        return int(text.split()[0]) if text.strip() else 0
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


class SampleCgroup:
    """One sample's groups: created with its limits, joined by every exec, removed at the end."""

    def __init__(self, support: CgroupSupport, name: str, paths: dict[str, Path]) -> None:
        self.support = support
        self.name = name
        self.paths = paths

    @classmethod
    def create(
        cls, memory_bytes: int, pids: int, cpus: float, support: CgroupSupport | None = None
    ) -> SampleCgroup | None:
        """A fresh group with these limits, or None when the host offers no cgroups."""
        support = support or cgroup_support()
        if not support.usable:
            return None
        name = f"{os.getpid()}-{secrets.token_hex(4)}"
        paths: dict[str, Path] = {}
        try:
            for controller in support.controllers:
                folder = support.roots[controller] / name
                if folder not in paths.values():
                    folder.mkdir()
                paths[controller] = folder
            group = cls(support, name, paths)
            group._limit(memory_bytes, pids, cpus)
            return group
        except OSError:
            cls(support, name, paths).remove()
            raise

    def _limit(self, memory_bytes: int, pids: int, cpus: float) -> None:
        quota = max(1000, int(cpus * CPU_PERIOD_US))
        if self.support.mode == "v2":
            folder = self.paths["memory"]
            (folder / "memory.max").write_text(str(memory_bytes))
            _write_optional(folder / "memory.swap.max", "0")
            (folder / "pids.max").write_text(str(pids))
            (folder / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
            return
        if "memory" in self.paths:
            folder = self.paths["memory"]
            (folder / "memory.limit_in_bytes").write_text(str(memory_bytes))
            # swap off: memory+swap may not exceed memory (needs swapaccount; else swappiness)
            _write_optional(folder / "memory.memsw.limit_in_bytes", str(memory_bytes))
            _write_optional(folder / "memory.swappiness", "0")
        if "pids" in self.paths:
            (self.paths["pids"] / "pids.max").write_text(str(pids))
        if "cpu" in self.paths:
            folder = self.paths["cpu"]
            (folder / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
            (folder / "cpu.cfs_quota_us").write_text(str(quota))

    def procs_files(self) -> list[str]:
        """The files a process writes ``0`` (itself) into to join, one per group: v1's
        ``tasks``, v2's ``cgroup.procs``.

        Why ``tasks`` and ``0`` on v1: the kernel moves the writing thread itself without
        taking the threadgroup lock, whose release waits for an RCU grace period; writing
        a pid to ``cgroup.procs`` takes it, which made the move into three v1 groups most
        of an exec's cost (tests/perf/test_bwrap_perf.py). The joining ``sh`` has one
        thread, so moving the thread moves the process, and everything it forks follows.
        """
        name = "cgroup.procs" if self.support.mode == "v2" else "tasks"
        return sorted({str(folder / name) for folder in self.paths.values()})

    def join_argv(self) -> list[str]:
        """An argv prefix that moves itself into the sample's groups, then execs the rest."""
        files = self.procs_files()
        script = (
            'n=$1; shift; while [ "$n" -gt 0 ]; do echo 0 > "$1" || exit 125; shift; '
            'n=$((n-1)); done; exec "$@"'
        )
        return ["/bin/sh", "-c", script, "sh", str(len(files)), *files]

    # ---- what happened -------------------------------------------------------------

    def oom_kills(self) -> int:
        """Processes the OOM killer killed in this sample so far."""
        folder = self.paths.get("memory")
        if folder is None:
            return 0
        if self.support.mode == "v2":
            return _read_int(folder / "memory.events", "oom_kill")
        return _read_int(folder / "memory.oom_control", "oom_kill")

    def pids_refusals(self) -> int:
        """Forks refused because the sample was at its pid limit."""
        folder = self.paths.get("pids")
        return 0 if folder is None else _read_int(folder / "pids.events", "max")

    def memory_usage(self) -> int:
        """Memory the sample uses now (bytes; 0 when unknown)."""
        folder = self.paths.get("memory")
        if folder is None:
            return 0
        name = "memory.current" if self.support.mode == "v2" else "memory.usage_in_bytes"
        return _read_int(folder / name)

    def memory_peak(self) -> int:
        """Most memory the sample has used at once (bytes; 0 when unknown)."""
        folder = self.paths.get("memory")
        if folder is None:
            return 0
        name = "memory.peak" if self.support.mode == "v2" else "memory.max_usage_in_bytes"
        return _read_int(folder / name)

    def pids(self) -> list[int]:
        """Host pids now in the sample's groups."""
        found: set[int] = set()
        for folder in self.paths.values():
            try:
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
            except OSError:
                continue
        return sorted(found)

    # ---- teardown ------------------------------------------------------------------

    def kill(self) -> None:
        """SIGKILL everything in the sample's groups (``cgroup.kill`` where there is one)."""
        if self.support.mode == "v2":
            for folder in set(self.paths.values()):
                _write_optional(folder / "cgroup.kill", "1")
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue

    def remove(self, wait_s: float = 5.0) -> bool:
        """Kill what is left and remove the groups; False if one would not go in time."""
        deadline = time.monotonic() + wait_s
        folders = sorted(set(self.paths.values()))
        while True:
            self.kill()
            remaining = [f for f in folders if not _rmdir(f)]
            if not remaining:
                return True
            if time.monotonic() > deadline:
                logger.warning("bwrap sandbox: could not remove cgroups %s", remaining)
                return False
            folders = remaining
            time.sleep(0.02)


def _write_optional(path: Path, value: str) -> bool:
    """Write ``value`` if the file exists and takes it; False otherwise."""
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _rmdir(folder: Path) -> bool:
    try:
        folder.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError as ex:
        if ex.errno in (errno.EBUSY, errno.ENOTEMPTY):
            return False
        raise


def stale_groups(support: CgroupSupport | None = None) -> Iterable[Path]:
    """Sample groups whose creating process is gone (for ``inspect sandbox cleanup``)."""
    support = support or cgroup_support()
    for root in set(support.roots.values()):
        for folder in root.iterdir() if root.is_dir() else ():
            pid = folder.name.split("-", 1)[0]
            if folder.is_dir() and pid.isdigit() and not Path(f"/proc/{pid}").exists():
                yield folder


def remove_stale_groups(support: CgroupSupport | None = None) -> int:
    """Kill and remove every stale sample group; returns how many went."""
    support = support or cgroup_support()
    removed = 0
    for folder in list(stale_groups(support)):
        group = SampleCgroup(support, folder.name, {c: r / folder.name
                                                    for c, r in support.roots.items()})  # fmt: skip
        removed += group.remove(wait_s=1.0)
    return removed
