"""Docker helpers for sandboxed tasks: machine status, the offline base image, compose files.

Inspect's docker sandbox needs Engine >= 24.0.6 and Compose >= 2.21 (``.ci/system.sh docker
dockerd`` installs and starts them). Our CI machines reach no image registry, so the base image
is made from Debian packages: ``debootstrap`` a minimal root file system with Python and the
scientific stack, then ``docker import`` it. Dockerfiles take the base as ``ARG BASE_IMAGE`` so
that a normal machine uses the public ``python:3.12-slim`` instead.

Every compose file follows one policy, checked by :func:`policy_violations`: no network at run
or build time (``network_mode: none``, ``build.network: none``; the daemon runs without a
bridge anyway), cpu/memory/pid limits, ``init: true`` so signals reach the agent's processes,
and ``x-local: true`` on images built here so Inspect does not try to pull them.

    harness sandbox build-base                      # ~1 min, idempotent
    python -m harness.sandbox.docker status         # what `harness doctor` reports
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DEFAULT_BASE_TAG = "evalsuite/base:bookworm"
PUBLIC_BASE_IMAGE = "python:3.12-slim"
BASE_IMAGE_ENV = "EVALSUITE_BASE_IMAGE"
PORTABLE_BASE_IMAGE = f"${{{BASE_IMAGE_ENV}:-{PUBLIC_BASE_IMAGE}}}"
MIN_ENGINE = (24, 0, 6)
MIN_COMPOSE = (2, 21, 0)
BASE_IMAGE_DIR = Path(__file__).parent / "base_image"
PACKAGES_FILE = BASE_IMAGE_DIR / "packages.txt"
KEEP_ALIVE = ("tail", "-f", "/dev/null")
LABEL_PREFIX = "org.evalsuite"

Progress = Callable[[str], None]


# --------------------------------------------------------------------------- status


STATUS_TIMEOUT = 20.0
"""Seconds a status probe may take: ``docker compose version`` took over 5 s on a loaded
2-core machine, and a timed-out probe reads as "compose absent", which skips docker tests."""


def _run(cmd: Sequence[str], timeout: float = STATUS_TIMEOUT
         ) -> subprocess.CompletedProcess[str] | None:
    """Run a short command; None when it cannot start or times out (status must not raise)."""
    try:
        return subprocess.run(
            list(cmd), capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None


def parse_version(text: str) -> tuple[int, ...]:
    """Leading dotted numbers of a version string: 'v2.40.3' -> (2, 40, 3), '26.1.5+dfsg1' ->
    (26, 1, 5). Empty tuple when there are none."""
    match = re.search(r"(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else ()


def _image_id(tag: str) -> str | None:
    done = _run(["docker", "image", "inspect", "--format", "{{.Id}}", tag])
    if done is None or done.returncode != 0:
        return None
    return done.stdout.strip() or None


def image_exists(tag: str) -> bool:
    """Whether the local image store holds ``tag`` (False when docker does not answer)."""
    return _image_id(tag) is not None


def docker_status(base_tag: str = DEFAULT_BASE_TAG) -> dict[str, Any]:
    """What ``harness doctor`` shows: engine, compose, daemon and base image, each with its
    version where known. Uses short subprocess calls; never raises."""
    status: dict[str, Any] = {
        "docker_cli": shutil.which("docker"),
        "engine": False,
        "engine_version": None,
        "engine_ok": False,
        "daemon_running": False,
        "compose": False,
        "compose_version": None,
        "compose_ok": False,
        "base_image": False,
        "base_image_tag": base_tag,
    }
    if status["docker_cli"] is None:
        return status
    server = _run(["docker", "version", "--format", "{{.Server.Version}}"])
    if server is not None and server.returncode == 0 and server.stdout.strip():
        status["daemon_running"] = True
        status["engine_version"] = server.stdout.strip()
    else:  # daemon down: report the installed engine, if any
        local = _run(["dockerd", "--version"]) if shutil.which("dockerd") else None
        if local is not None and local.returncode == 0:
            found = re.search(r"version\s+([^\s,]+)", local.stdout)
            status["engine_version"] = found.group(1) if found else None
    status["engine"] = status["engine_version"] is not None
    status["engine_ok"] = bool(status["engine_version"]) and (
        parse_version(status["engine_version"]) >= MIN_ENGINE
    )
    compose = _run(["docker", "compose", "version", "--short"])
    if compose is not None and compose.returncode == 0 and compose.stdout.strip():
        status["compose"] = True
        status["compose_version"] = compose.stdout.strip().lstrip("v")
        status["compose_ok"] = parse_version(status["compose_version"]) >= MIN_COMPOSE
    if status["daemon_running"]:
        status["base_image"] = image_exists(base_tag)
    return status


# --------------------------------------------------------------------------- base image


def os_release(path: Path = Path("/etc/os-release")) -> dict[str, str]:
    """The host's /etc/os-release as a dict (empty when absent)."""
    fields: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip('"')
    return fields


def apt_mirror(
    sources_dir: Path = Path("/etc/apt/sources.list.d"),
    sources_list: Path = Path("/etc/apt/sources.list"),
    codename: str | None = None,
) -> str:
    """The Debian mirror the host already uses: the URI of the first enabled ``deb`` entry
    whose suites include ``codename`` (deb822 ``*.sources`` first, then ``sources.list``).

    Read from the host so no registry host is written into the project and any local proxy
    or snapshot mirror is followed. Raises LookupError when there is none.
    """
    codename = codename or os_release().get("VERSION_CODENAME", "")
    for source in sorted(sources_dir.glob("*.sources")) if sources_dir.is_dir() else []:
        for stanza in re.split(r"\n\s*\n", source.read_text()):
            entry: dict[str, str] = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                key, _, value = line.partition(":")
                entry[key.strip().lower()] = value.strip()
            if (
                "deb" in entry.get("types", "").split()
                and entry.get("enabled", "yes").lower() != "no"
                and codename in entry.get("suites", "").split()
                and entry.get("uris")
            ):
                return entry["uris"].split()[0]
    if sources_list.exists():
        for line in sources_list.read_text().splitlines():
            words = re.sub(r"\[[^\]]*\]", " ", line).split()
            if len(words) >= 3 and words[0] == "deb" and words[2] == codename:
                return words[1]
    raise LookupError(f"no enabled deb source for '{codename}' in {sources_dir} or {sources_list}")


def resolve_suite(tag: str, suite: str | None = None) -> str:
    """The Debian suite to bootstrap: ``suite`` if given, else the one the tag names
    (``...:bookworm``) when debootstrap knows it, else the host's codename.

    The tag wins over the host so that Debian 12 and 13 CI machines build the same image
    (same Python) under the same name.
    """
    if suite:
        return suite
    named = tag.rpartition(":")[2]
    if named and (Path("/usr/share/debootstrap/scripts") / named).exists():
        return named
    host = os_release().get("VERSION_CODENAME")
    if not host:
        raise LookupError("cannot tell the Debian suite: pass suite=")
    return host


def base_packages(extra: Iterable[str] = ()) -> list[str]:
    """Packages for ``debootstrap --include``: base_image/packages.txt plus ``extra``."""
    listed = [
        line.strip()
        for line in PACKAGES_FILE.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    return list(dict.fromkeys([*listed, *extra]))


def _scratch_dir() -> str:
    """A roomy, disk-backed temp root (a root file system is ~400 MB; /tmp may be tmpfs)."""
    return "/var/tmp" if os.path.isdir("/var/tmp") else tempfile.gettempdir()


def build_base_image(
    tag: str = DEFAULT_BASE_TAG,
    suite: str | None = None,
    extra_packages: Sequence[str] = (),
    rebuild: bool = False,
    progress: Progress | None = None,
) -> str:
    """Make the offline base image and return its tag; a no-op when it exists (unless
    ``rebuild``). Needs root, debootstrap and a running daemon; ~1 min on a fresh machine.

    debootstrap --variant=minbase --include=PACKAGES SUITE ROOTFS MIRROR
    tar -C ROOTFS -c . | docker import --change ... - TAG
    """
    say = progress or (lambda _msg: None)
    old_id = _image_id(tag)
    if old_id and not rebuild:
        say(f"{tag} already present")
        return tag
    server = _run(["docker", "version", "--format", "{{.Server.Version}}"], timeout=10)
    if server is None or server.returncode != 0:
        raise RuntimeError("docker daemon is not answering: run `bash .ci/system.sh dockerd`")
    debootstrap = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
    if not os.path.exists(debootstrap):
        raise RuntimeError("debootstrap is missing: apt-get install debootstrap")
    if os.geteuid() != 0:
        raise PermissionError("debootstrap needs root")
    suite = resolve_suite(tag, suite)
    mirror = apt_mirror()
    packages = base_packages(extra_packages)
    work = Path(tempfile.mkdtemp(prefix="evalsuite-rootfs-", dir=_scratch_dir()))
    rootfs = work / "rootfs"
    try:
        say(f"debootstrap {suite} from {mirror} ({len(packages)} packages)")
        done = subprocess.run(
            [debootstrap, "--variant=minbase", f"--include={','.join(packages)}",
             suite, str(rootfs), mirror],
            capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            log = rootfs / "debootstrap" / "debootstrap.log"
            detail = log.read_text()[-2000:] if log.exists() else done.stderr[-2000:]
            raise RuntimeError(f"debootstrap failed ({done.returncode}):\n{detail}")
        _slim(rootfs)
        say(f"docker import {tag}")
        _import_rootfs(rootfs, tag, suite, packages)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if old_id and old_id != _image_id(tag):
        # the replaced image is now untagged; images built FROM it keep it alive (rm fails)
        _run(["docker", "image", "rm", old_id], timeout=60)
    return tag


def _slim(rootfs: Path) -> None:
    """Drop what only the bootstrap needed (downloaded .debs, apt lists): ~100 MB."""
    for pattern in ("var/cache/apt/archives/*.deb", "var/lib/apt/lists/*", "var/log/*.log"):
        for path in rootfs.glob(pattern):
            if path.is_file():
                path.unlink()


def _import_rootfs(rootfs: Path, tag: str, suite: str, packages: Sequence[str]) -> None:
    """Stream the root file system into ``docker import`` with env, workdir and labels."""
    changes = [
        "ENV LANG=C.UTF-8",
        "WORKDIR /root",
        'CMD ["/bin/bash"]',
        f"LABEL {LABEL_PREFIX}.base=1 {LABEL_PREFIX}.suite={suite} "
        f"{LABEL_PREFIX}.packages={','.join(packages)}",
    ]
    importer = ["docker", "import"]
    for change in changes:
        importer += ["--change", change]
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    try:
        done = subprocess.run(
            [*importer, "-", tag], stdin=tar.stdout, capture_output=True, text=True, check=False
        )
    finally:
        if tar.stdout is not None:
            tar.stdout.close()
        tar_rc = tar.wait()
    if tar_rc != 0 or done.returncode != 0:
        raise RuntimeError(f"docker import failed (tar {tar_rc}): {done.stderr.strip()}")


# --------------------------------------------------------------------------- compose files


@dataclass(frozen=True)
class ServiceSpec:
    """One compose service under the sandbox policy.

    ``build`` is a context folder (relative to the compose file) holding a Dockerfile that
    starts ``ARG BASE_IMAGE`` / ``FROM ${BASE_IMAGE}``; without it the service runs ``image``
    (by default the base image) directly.
    """

    image: str | None = None
    build: str | None = None
    dockerfile: str = "Dockerfile"
    cpus: float = 1.0
    mem_limit: str = "1g"
    pids_limit: int = 512
    working_dir: str | None = None
    command: Sequence[str] = KEEP_ALIVE
    environment: Mapping[str, str] = field(default_factory=dict)
    default: bool = False


def _is_local(image: str) -> bool:
    return image.startswith("evalsuite/")


def compose_config(
    services: Mapping[str, ServiceSpec] | None = None, base_image: str | None = None
) -> dict[str, Any]:
    """The compose document (a dict) for ``services`` (default: one ``default`` service on the
    base image). ``base_image`` None keeps it portable: the image or build argument reads
    ``${EVALSUITE_BASE_IMAGE:-python:3.12-slim}``, which compose fills in from the environment."""
    base = base_image or PORTABLE_BASE_IMAGE
    services = services or {"default": ServiceSpec(default=True)}
    out: dict[str, Any] = {}
    for name, spec in services.items():
        svc: dict[str, Any] = {}
        if spec.build is not None:
            svc["build"] = {
                "context": spec.build,
                "dockerfile": spec.dockerfile,
                "network": "none",
                "args": {"BASE_IMAGE": base},
            }
            svc["image"] = spec.image or f"evalsuite/sandbox-{name}:latest"
            svc["x-local"] = True
        else:
            svc["image"] = spec.image or base
            if _is_local(svc["image"]):
                svc["x-local"] = True
        if spec.default:
            svc["x-default"] = True
        svc["command"] = list(spec.command)
        if spec.working_dir:
            svc["working_dir"] = spec.working_dir
        if spec.environment:
            svc["environment"] = dict(spec.environment)
        svc.update(
            init=True,
            network_mode="none",
            cpus=spec.cpus,
            mem_limit=spec.mem_limit,
            pids_limit=spec.pids_limit,
        )
        out[name] = svc
    return {"services": out}


def compose_file(
    path: str | os.PathLike[str],
    services: Mapping[str, ServiceSpec] | None = None,
    base_image: str | None = None,
) -> Path:
    """Write :func:`compose_config` as YAML to ``path`` (a file, or a folder that gets
    ``compose.yaml``) and return the file's path."""
    target = Path(path)
    if target.is_dir():
        target = target / "compose.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    config = compose_config(services, base_image)
    header = "# Written by harness.sandbox.docker.compose_file (sandbox policy: no network).\n"
    target.write_text(header + yaml.safe_dump(config, sort_keys=False))
    return target


def policy_violations(config: Mapping[str, Any] | str | os.PathLike[str]) -> list[str]:
    """Every way a compose document (dict, or path to a YAML file) breaks the sandbox policy;
    empty when it follows it. Benchmarks' tests call this on their compose.yaml."""
    if not isinstance(config, Mapping):
        config = yaml.safe_load(Path(config).read_text()) or {}
    problems: list[str] = []
    services = config.get("services") or {}
    if not services:
        problems.append("no services")
    for name, svc in services.items():
        svc = svc or {}
        if svc.get("network_mode") != "none":
            problems.append(f"{name}: network_mode must be 'none'")
        if svc.get("networks"):
            problems.append(f"{name}: must not join networks")
        if svc.get("init") is not True:
            problems.append(f"{name}: init must be true")
        limits = (svc.get("deploy") or {}).get("resources", {}).get("limits", {})
        if "cpus" not in svc and "cpus" not in limits:
            problems.append(f"{name}: no cpu limit (cpus)")
        if "mem_limit" not in svc and "memory" not in limits:
            problems.append(f"{name}: no memory limit (mem_limit)")
        build = svc.get("build")
        if build is not None:
            if not isinstance(build, Mapping) or build.get("network") != "none":
                problems.append(f"{name}: build.network must be 'none'")
            if not svc.get("x-local"):
                problems.append(f"{name}: a built image needs x-local: true")
        elif _is_local(str(svc.get("image", ""))) and not svc.get("x-local"):
            problems.append(f"{name}: local image needs x-local: true")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m harness.sandbox.docker status|build-base [--tag T] [--rebuild]``: the same
    functions as the ``harness`` CLI, usable before its dependencies are importable."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m harness.sandbox.docker")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("status")
    build = sub.add_parser("build-base")
    build.add_argument("--tag", default=DEFAULT_BASE_TAG)
    build.add_argument("--suite", default=None)
    build.add_argument("--package", action="append", default=[])
    build.add_argument("--rebuild", action="store_true")
    args = parser.parse_args(argv)
    if args.cmd == "status":
        print(json.dumps(docker_status(), indent=2))
        return 0
    tag = build_base_image(
        args.tag, args.suite, args.package, args.rebuild,
        progress=lambda msg: print(f"[build-base] {msg}", file=sys.stderr),
    )
    print(tag)
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    raise SystemExit(guarded(main))
