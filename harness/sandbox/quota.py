"""A disk quota per ``bwrap`` sample: its writable places live on a size-limited filesystem.

``RLIMIT_FSIZE`` bounds one file; nothing in it bounds a sample that writes many. So each
sample's ``/sandbox``, ``/tmp`` and ``/var/tmp`` are folders of one small ext4 filesystem,
made for the sample in a sparse image file and loop-mounted (``nosuid,nodev``) on the
host. A write past the quota fails with ``ENOSPC`` inside the sandbox; the image never
grows past the quota, so the host's free space is touched by at most that much, and
teardown unmounts the filesystem and deletes the image.

Making one costs ~20 ms (``mkfs.ext4`` without a journal, inode tables left to the
kernel, ``mount -o loop``). It needs root (mounting) and loop devices; where either is
missing :func:`quota_support` says so, the provider warns once, and samples fall back to
plain folders on the host's disk with only the per-file limit.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess as sp
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

_SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
_TOOLS = ("mkfs.ext4", "mount", "umount")


@dataclass(frozen=True)
class QuotaSupport:
    usable: bool
    reason: str = ""
    """Why not, with the fix (empty when usable)."""


def _tool(name: str) -> str | None:
    return shutil.which(name, path=_SYSTEM_PATH) or shutil.which(name)


@functools.cache
def quota_support() -> QuotaSupport:
    """Whether per-sample filesystems can be made here (checked once per process)."""
    if os.geteuid() != 0:
        return QuotaSupport(False, "mounting a per-sample filesystem needs root; run as root")
    missing = [t for t in _TOOLS if _tool(t) is None]
    if missing:
        return QuotaSupport(False, f"{', '.join(missing)} not installed; apt-get install "
                                   "e2fsprogs mount")  # fmt: skip
    if not Path("/dev/loop-control").exists():
        return QuotaSupport(False, "no loop devices (/dev/loop-control); `modprobe loop`, or "
                                   "give the container --device /dev/loop-control")  # fmt: skip
    return QuotaSupport(True)


@functools.cache
def warn_unsupported_once() -> None:
    support = quota_support()
    if not support.usable:
        logger.warning(
            "bwrap sandbox: no disk quota per sample (only the per-file size limit): %s. "
            "`harness doctor` checks this.", support.reason,
        )  # fmt: skip


class QuotaError(OSError):
    """The per-sample filesystem could not be made (the message says what failed)."""


class SampleDisk:
    """A loop-mounted ext4 of ``size`` bytes at ``mount_point`` (backed by ``image``)."""

    def __init__(self, image: Path, mount_point: Path, size: int) -> None:
        self.image = image
        self.mount_point = mount_point
        self.size = size
        self.mounted = False

    @classmethod
    def create(cls, image: Path, mount_point: Path, size: int) -> SampleDisk:
        """Make and mount the filesystem; ``mount_point`` must exist and be empty."""
        free = shutil.disk_usage(image.parent).free
        if free < size:
            raise QuotaError(
                f"the host has {free / 2**30:.1f} GiB free at {image.parent}, less than the "
                f"sample's disk quota of {size / 2**30:.1f} GiB; free space or lower disk_bytes"
            )
        disk = cls(image, mount_point, size)
        try:
            with open(image, "wb") as f:
                f.truncate(size)  # sparse: blocks are taken only as the sample writes
            _run([_tool("mkfs.ext4") or "mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal",
                  "-E", "lazy_itable_init=1,nodiscard", str(image)])  # fmt: skip
            options = "loop,nosuid,nodev,noatime,noinit_itable"
            _run([_tool("mount") or "mount", "-t", "ext4", "-o", options, str(image),
                  str(mount_point)])  # fmt: skip
            disk.mounted = True
            return disk
        except BaseException:
            disk.remove()
            raise

    def used(self) -> int:
        """Bytes in use on the sample's filesystem."""
        usage = shutil.disk_usage(self.mount_point)
        return usage.used

    def remove(self) -> None:
        """Unmount (lazily if something still holds it) and delete the image (idempotent)."""
        if self.mounted:
            umount = _tool("umount") or "umount"
            done = sp.run([umount, str(self.mount_point)], capture_output=True)
            if done.returncode != 0:
                sp.run([umount, "-l", str(self.mount_point)], capture_output=True)
            self.mounted = False
        try:
            self.image.unlink()
        except FileNotFoundError:
            pass


def _run(argv: list[str]) -> None:
    done = sp.run(argv, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise QuotaError(f"{' '.join(argv[:1])} failed: {(done.stderr or done.stdout).strip()}")
