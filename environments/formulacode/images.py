"""Docker side of the offline pack: the task-family image and a container session.

The family image (``docker/Dockerfile``) is built from the offline base image with no
network and tagged by the pack's content digest and the base image's id, so it is rebuilt
exactly when a task, the Dockerfile, the repo script or the base image changes. Real
dataset tasks instead run in their published ``image_name``
(``formulacode/all:<repo>-<sha>--final``), which needs a reachable registry:
:func:`image_available` tells which are present so callers can skip the rest cleanly.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

from environments.formulacode.pack import pack_digest

ENV_DIR = Path(__file__).parent
IMAGE_REPO = "evalsuite/formulacode-pack"
DEFAULT_BASE = "evalsuite/base:bookworm"
REPOS_IN_IMAGE = "/opt/formulacode/repos"
WORKDIR = "/workspace/repo"


def family_image_tag() -> str:
    """``evalsuite/formulacode-pack:<digest>`` of the current pack and base image.

    The base image's id is part of the digest, so rebuilding the base (a package added to
    it, e.g. valgrind for the cycles measure) rebuilds the family image on next use instead
    of reusing one built from the old base."""
    base_id = _local_image_id(base_image())
    if base_id is None:
        return f"{IMAGE_REPO}:{pack_digest()}"
    both = hashlib.sha256(f"{pack_digest()}\n{base_id}".encode()).hexdigest()[:12]
    return f"{IMAGE_REPO}:{both}"


def _local_image_id(tag: str) -> str | None:
    """The local image id of ``tag`` (None when absent or docker does not answer)."""
    try:
        done = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", tag],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def base_image() -> str:
    """The base to build from: ``$EVALSUITE_BASE_IMAGE`` or the offline Debian image."""
    return os.environ.get("EVALSUITE_BASE_IMAGE", DEFAULT_BASE)


def image_available(tag: str) -> bool:
    """Whether the local docker store holds ``tag`` (False when docker does not answer)."""
    return _local_image_id(tag) is not None


def ensure_family_image(rebuild: bool = False) -> str:
    """Build the family image unless present; returns its tag. Offline (``--network
    none``); raises RuntimeError with docker's message on failure."""
    tag = family_image_tag()
    if not rebuild and image_available(tag):
        return tag
    cmd = ["docker", "build", "--network", "none", "--build-arg", f"BASE_IMAGE={base_image()}",
           "-f", str(ENV_DIR / "docker" / "Dockerfile"), "-t", tag, str(ENV_DIR)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"building {tag} failed:\n{done.stderr[-3000:]}")
    return tag


class Container:
    """A throw-away container of the family image (no network, cpu/memory limits)."""

    def __init__(self, image: str, cpus: float = 2.0, memory: str = "4g") -> None:
        self.name = f"fc-{uuid.uuid4().hex[:10]}"
        cmd = ["docker", "run", "-d", "--rm", "--init", "--network", "none", "--name", self.name,
               f"--cpus={cpus}", f"--memory={memory}", "--pids-limit=1024", image,
               "tail", "-f", "/dev/null"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"docker run failed: {done.stderr.strip()}")

    def exec(self, cmd: list[str], timeout: float | None = None,
             stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["docker", "exec", "-i", self.name, *cmd], capture_output=True,
                              text=True, timeout=timeout, input=stdin, check=False)

    def write(self, path: str, text: str) -> None:
        done = self.exec(["sh", "-c", f"mkdir -p \"$(dirname '{path}')\" && cat > '{path}'"],
                         stdin=text)
        if done.returncode != 0:
            raise RuntimeError(f"cannot write {path}: {done.stderr}")

    def close(self) -> None:
        subprocess.run(["docker", "rm", "-f", self.name], capture_output=True, check=False)

    def __enter__(self) -> Container:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
