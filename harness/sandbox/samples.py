"""Open one sandbox sample outside an eval, on ``bwrap`` or on Inspect's ``docker``.

Tests, the escape probes and the measurements drive both providers through the same
lifecycle Inspect uses (``task_init``, ``sample_init``, ``sample_cleanup``,
``task_cleanup``) with the same limits::

    async with open_sample("docker", SandboxLimits(memory_bytes="256M", pids=64)) as sbx:
        await sbx.exec(["true"])

For docker the limits become compose keys: ``mem_limit`` with ``memswap_limit`` equal to it
(swap off), ``pids_limit``, ``cpus``, ``network_mode: none``, ``init: true``. With
``hardened=True`` the container's root is read-only and ``/sandbox`` (the working dir),
``/tmp`` and ``/var/tmp`` are tmpfs of ``disk_bytes`` each: the nearest docker gets to the
bwrap sample's disk quota on storage drivers without one (overlay2 on ext4 has none, so
without it a container can fill the host's disk). tmpfs pages count against the
container's memory limit.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import yaml
from inspect_ai.util import SandboxEnvironment

from harness.sandbox.limits import BwrapConfig, SandboxLimits

PROVIDERS = ("bwrap", "docker")
DOCKER_WORKDIR = "/sandbox"


def docker_compose(limits: SandboxLimits, image: str, hardened: bool = False) -> dict[str, Any]:
    """The compose document of a one-service docker sample with ``limits``."""
    svc: dict[str, Any] = {
        "image": image,
        "x-default": True,
        "command": ["tail", "-f", "/dev/null"],
        "init": True,
        "network_mode": "none",
        "working_dir": DOCKER_WORKDIR,
        "cpus": limits.cpus,
        "mem_limit": limits.memory_bytes,
        "memswap_limit": limits.memory_bytes,
        "pids_limit": limits.pids,
    }
    if image.startswith("evalsuite/"):
        svc["x-local"] = True
    if hardened:
        size = limits.disk_bytes
        svc["read_only"] = True
        svc["tmpfs"] = [f"{path}:size={size},mode=1777,exec" for path in
                        (DOCKER_WORKDIR, "/tmp", "/var/tmp")]  # fmt: skip
    return {"services": {"default": svc}}


def docker_image() -> str:
    """The image docker samples run: ``$EVALSUITE_BASE_IMAGE`` or the offline base image."""
    from harness.sandbox.docker import BASE_IMAGE_ENV, DEFAULT_BASE_TAG

    return os.environ.get(BASE_IMAGE_ENV) or DEFAULT_BASE_TAG


@asynccontextmanager
async def open_sample(
    provider: str,
    limits: SandboxLimits | None = None,
    hardened: bool = False,
    **bwrap_options: Any,
) -> AsyncIterator[SandboxEnvironment]:
    """One fresh sample of ``provider`` with ``limits`` (default limits when None), cleaned
    up on exit. ``bwrap_options`` are further :class:`BwrapConfig` fields."""
    limits = limits or SandboxLimits()
    if provider == "bwrap":
        from harness.sandbox.bwrap import BwrapSandboxEnvironment

        bwrap_config = BwrapConfig(**limits.model_dump(), **bwrap_options)
        env = await anyio.to_thread.run_sync(BwrapSandboxEnvironment, bwrap_config)
        try:
            yield env
        finally:
            await anyio.to_thread.run_sync(env.cleanup)
        return
    if provider != "docker":
        raise ValueError(f"unknown provider {provider!r}; expected one of {PROVIDERS}")
    from harness.inspect_compat import sandbox_environment_type

    docker = sandbox_environment_type("docker")
    with tempfile.TemporaryDirectory(prefix="evalsuite-docker-sample-") as folder:
        compose = Path(folder) / "compose.yaml"
        compose.write_text(yaml.safe_dump(docker_compose(limits, docker_image(), hardened)))
        task = f"evalsuite-sample-{secrets.token_hex(4)}"
        config = str(compose)
        await docker.task_init(task, config)
        try:
            environments = await docker.sample_init(task, config, {})
            try:
                yield environments["default"]
            finally:
                await docker.sample_cleanup(task, config, environments, False)
        finally:
            await docker.task_cleanup(task, config, True)


def unavailable(provider: str) -> str | None:
    """Why ``provider`` cannot start a sample here (None when it can)."""
    if provider == "bwrap":
        from harness.sandbox.bwrap import bwrap_available

        return None if bwrap_available() else "bubblewrap cannot start here"
    from harness.sandbox import docker as dk

    st = dk.docker_status()
    if not st["daemon_running"]:
        return "no docker engine answers (bash .ci/system.sh docker dockerd)"
    if not st["engine_ok"] or not st["compose_ok"]:
        return f"engine {st['engine_version']} / compose {st['compose_version']} too old"
    if not dk.image_exists(docker_image()):
        return f"{docker_image()} missing (bash .ci/system.sh base-image)"
    return None
