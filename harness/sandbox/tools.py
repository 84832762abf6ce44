"""Inspect's in-sandbox tool support for the ``bwrap`` sandbox, provided read-only.

``text_editor()`` and ``bash_session()`` run Inspect's ``inspect-sandbox-tools`` inside the
sandbox: a launcher at ``/var/tmp/.<hash>/inspect-sandbox-tools`` (with its ``_internal``
tree) that forwards each call to a long-lived server over a unix socket in
``/var/tmp/.<hash>/.server``. Inspect ships the bundle inside its wheel
(``inspect_ai/binaries``); in Docker it copies it into every container with ``tar``.

Here it is unpacked once on the host (:func:`tools_tree`, a root-owned, read-only folder
shared by all samples) and bind-mounted read-only into every exec over placeholders in
the sample's own ``/var/tmp/.<hash>`` (owned by the sample user, mode 0700, so Inspect's
ownership checks find a trustworthy install and neither inject nor download anything).
The sample may write only the server's ``.server`` folder next to them. The server itself
runs in a long-lived bwrap of the sample (see ``BwrapSandboxEnvironment``), because an
ordinary exec's processes die with it.
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import shutil
import stat
import tarfile
import tempfile
from pathlib import Path

from ._inspect_compat import sandbox_tools_archive, sandbox_tools_paths

logger = logging.getLogger(__name__)

TOOLS_DIR, TOOLS_CLI = sandbox_tools_paths()
LAUNCHER = Path(TOOLS_CLI).name
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
_CACHE_PREFIX = "evalsuite-sandbox-tools"


def host_arch() -> str | None:
    return _ARCH.get(platform.machine().lower())


def _trustworthy(path: Path) -> bool:
    """Owned by us, a real folder, writable by nobody else (a shared /tmp is hostile)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))  # fmt: skip


def _extract(archive: Path, dest: Path) -> None:
    """Unpack the bundle into ``dest``: owned by us, readable and traversable by all."""
    with tarfile.open(archive, "r:gz") as tar:
        tar.extractall(dest, filter="data")
    for path in [dest, *dest.rglob("*")]:
        if path.is_symlink():
            continue
        executable = path.is_dir() or path.stat().st_mode & 0o111
        path.chmod(0o755 if executable else 0o644)


@functools.cache
def tools_tree() -> Path | None:
    """The unpacked tool-support bundle on the host (cached in the temp dir across
    processes, keyed by the bundle's name and size), or None when Inspect ships none for
    this machine. The folder holds ``inspect-sandbox-tools`` and ``_internal/``."""
    arch = host_arch()
    archive = sandbox_tools_archive(arch) if arch else None
    if archive is None:
        logger.info("bwrap sandbox: Inspect ships no sandbox tools for %s", platform.machine())
        return None
    base = Path(tempfile.gettempdir())
    key = f"{archive.name}-{archive.stat().st_size}"
    final = base / f"{_CACHE_PREFIX}-{os.geteuid()}-{key}"
    tree = final / "tree"
    if _trustworthy(final) and (tree / LAUNCHER).is_file():
        return tree
    staging = Path(tempfile.mkdtemp(prefix=f"{_CACHE_PREFIX}-staging-", dir=base))
    try:
        _extract(archive, staging / "tree")
        staging.chmod(0o755)
        try:
            os.rename(staging, final)
        except OSError:
            pass  # another process won the race (or a stale entry is in the way)
        if _trustworthy(final) and (tree / LAUNCHER).is_file():
            return tree
        # the shared name is unusable (planted by someone else): keep this process's copy
        private = Path(tempfile.mkdtemp(prefix=f"{_CACHE_PREFIX}-{os.getpid()}-", dir=base))
        os.rename(staging / "tree", private / "tree")
        private.chmod(0o755)
        import atexit

        atexit.register(shutil.rmtree, private, True)
        return private / "tree"
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def prepare_sample_dir(var_tmp: Path, uid: int, gid: int, chown: bool) -> Path:
    """Create the sample's ``/var/tmp/.<hash>`` with the placeholders the read-only binds
    cover; returns it (host side)."""
    folder = var_tmp / Path(TOOLS_DIR).name
    folder.mkdir(mode=0o700)
    (folder / LAUNCHER).touch(mode=0o755)
    (folder / "_internal").mkdir(mode=0o755)
    if chown:
        for path in (folder, folder / LAUNCHER, folder / "_internal"):
            os.chown(path, uid, gid)
    folder.chmod(0o700)
    return folder


def bind_args(tree: Path) -> list[str]:
    """bwrap options that lay the bundle read-only over the sample's placeholders."""
    return [
        "--ro-bind", str(tree / LAUNCHER), f"{TOOLS_DIR}/{LAUNCHER}",
        "--ro-bind", str(tree / "_internal"), f"{TOOLS_DIR}/_internal",
    ]  # fmt: skip
