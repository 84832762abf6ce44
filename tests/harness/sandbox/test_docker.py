"""Docker helpers: compose policy, host parsing, and a real Inspect sample in a compose sandbox.

The `docker` tests need an engine >= 24 with compose v2 and the offline base image
(`bash .ci/system.sh docker dockerd base-image`); they skip with the reason otherwise.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.sandbox import docker as dk

# --------------------------------------------------------------------------- no engine needed


def test_compose_file_has_policy_keys(tmp_path: Path) -> None:
    services = {
        "default": dk.ServiceSpec(default=True, cpus=0.5, mem_limit="256m"),
        "app": dk.ServiceSpec(build="app"),
    }
    path = dk.compose_file(tmp_path, services, base_image=dk.DEFAULT_BASE_TAG)
    assert path == tmp_path / "compose.yaml"
    doc = yaml.safe_load(path.read_text())
    default, app = doc["services"]["default"], doc["services"]["app"]
    for svc in (default, app):
        assert svc["network_mode"] == "none"
        assert svc["init"] is True
        assert svc["x-local"] is True
        assert "cpus" in svc and "mem_limit" in svc
    assert default["image"] == dk.DEFAULT_BASE_TAG
    assert (default["cpus"], default["mem_limit"], default["x-default"]) == (0.5, "256m", True)
    assert app["build"]["network"] == "none"
    assert app["build"]["args"] == {"BASE_IMAGE": dk.DEFAULT_BASE_TAG}
    assert dk.policy_violations(path) == []


def test_portable_compose_reads_base_from_environment() -> None:
    doc = dk.compose_config({"s": dk.ServiceSpec(build=".")})
    assert doc["services"]["s"]["build"]["args"]["BASE_IMAGE"] == (
        "${EVALSUITE_BASE_IMAGE:-python:3.12-slim}"
    )
    # a public image run directly is not marked local, so Inspect may pull it
    assert "x-local" not in dk.compose_config()["services"]["default"]


def test_reference_compose_and_dockerfile_follow_policy() -> None:
    assert dk.policy_violations(dk.BASE_IMAGE_DIR / "compose.yaml") == []
    dockerfile = (dk.BASE_IMAGE_DIR / "Dockerfile").read_text()
    assert f"ARG BASE_IMAGE={dk.PUBLIC_BASE_IMAGE}" in dockerfile
    assert "FROM ${BASE_IMAGE}" in dockerfile


def test_policy_violations_names_each_breach() -> None:
    bad = {
        "services": {
            "web": {"image": "evalsuite/x", "build": {"context": "."}, "networks": ["n"]},
        }
    }
    problems = dk.policy_violations(bad)
    for needle in ("network_mode", "networks", "init", "cpu", "memory", "build.network",
                   "x-local"):
        assert any(needle in p for p in problems), (needle, problems)
    deploy = {"services": {"s": {"image": "python:3.12-slim", "network_mode": "none",
                                 "init": True, "deploy": {"resources": {"limits": {
                                     "cpus": "1", "memory": "1g"}}}}}}
    assert dk.policy_violations(deploy) == []


def test_apt_mirror_from_deb822_and_one_line_sources(tmp_path: Path) -> None:
    d = tmp_path / "sources.list.d"
    d.mkdir()
    (d / "a-node.sources").write_text(
        "Types: deb\nURIs: http://node.invalid/x\nSuites: nodistro\nComponents: main\n"
    )
    (d / "debian.sources").write_text(
        "Types: deb\nURIs: http://off.invalid/debian\nSuites: bookworm\nEnabled: no\n\n"
        "Types: deb\n# comment\nURIs: http://mirror.invalid/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n\n"
        "Types: deb\nURIs: http://mirror.invalid/debian-security\nSuites: bookworm-security\n"
    )
    (d / "ignored.list.disabled").write_text("deb http://nope.invalid/debian bookworm main\n")
    missing = tmp_path / "sources.list"
    assert dk.apt_mirror(d, missing, "bookworm") == "http://mirror.invalid/debian"

    one_line = tmp_path / "one.list"
    one_line.write_text(
        "deb [signed-by=/k.gpg] http://sec.invalid/debian-security bookworm-security main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://one.invalid/debian trixie main\n"
    )
    assert dk.apt_mirror(tmp_path / "none.d", one_line, "trixie") == "http://one.invalid/debian"
    with pytest.raises(LookupError):
        dk.apt_mirror(d, one_line, "sid")


def test_parse_version_and_suite() -> None:
    assert dk.parse_version("v2.40.3") == (2, 40, 3)
    assert dk.parse_version("26.1.5+dfsg1") >= dk.MIN_ENGINE
    assert dk.parse_version("20.10.24+dfsg1") < dk.MIN_ENGINE
    assert dk.parse_version("none") == ()
    assert dk.resolve_suite("any:tag", "trixie") == "trixie"


def test_base_packages_cover_sandbox_needs() -> None:
    pkgs = dk.base_packages(["jq", "python3"])
    assert {"python3", "python3-pip", "python3-numpy", "python3-pytest", "iproute2"} <= set(pkgs)
    assert pkgs.count("python3") == 1 and pkgs[-1] == "jq"


def test_docker_status_without_docker_does_not_raise(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    st = dk.docker_status()
    assert st["docker_cli"] is None
    assert not st["daemon_running"] and not st["compose"] and not st["base_image"]


# --------------------------------------------------------------------------- real engine


def _docker_ready() -> str | None:
    """None when the docker tests can run, else why not."""
    st = dk.docker_status()
    if not st["daemon_running"]:
        return "no docker engine answers (bash .ci/system.sh docker dockerd)"
    if not st["engine_ok"] or not st["compose_ok"]:
        return f"engine {st['engine_version']} / compose {st['compose_version']} too old"
    if not st["base_image"]:
        return f"{st['base_image_tag']} missing (harness sandbox build-base)"
    return None


@pytest.fixture(scope="module")
def docker_ready() -> None:
    reason = _docker_ready()
    if reason:
        pytest.skip(reason)


@pytest.fixture
def host_listener() -> Iterator[tuple[int, list[str]]]:
    """A TCP listener on the host's 127.0.0.1; yields (port, peers it accepted)."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, peer = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(f"{peer[0]}:{peer[1]}")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join()
        server.close()


def _run_in_sandbox(compose: Path, commands: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """Run one Inspect sample whose solver calls the bash() tool for each command (no model
    generate happens) and return each command's output, read back from the eval log."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import Generate, TaskState, solver
    from inspect_ai.tool import bash

    @solver
    def run_commands():  # type: ignore[no-untyped-def]
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            shell = bash(timeout=60)
            for key, cmd in commands.items():
                state.metadata[key] = str(await shell(command=cmd))
            return state

        return solve

    task = Task(
        dataset=[Sample(input="run the commands", target="")],
        solver=run_commands(),
        sandbox=("docker", str(compose)),
    )
    (log,) = eval(task, model="mockllm/model", log_dir=str(tmp_path / "logs"),
                  display="none", sandbox_cleanup=True)
    assert log.status == "success", log.error
    assert log.samples is not None
    sample = log.samples[0]
    assert sample.error is None, sample.error
    return {k: str(sample.metadata[k]) for k in commands}


@pytest.mark.docker
def test_bash_in_compose_sandbox_without_network(
    docker_ready: None, host_listener: tuple[int, list[str]], tmp_path: Path
) -> None:
    port, accepted = host_listener
    # the listener works from the host, so a refusal inside means no route, not no server
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass
    compose = dk.compose_file(
        tmp_path / "sandbox",
        {"default": dk.ServiceSpec(image=dk.DEFAULT_BASE_TAG, default=True)},
    )
    probe = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=5)\n"
        "    print('CONNECTED')\n"
        "except OSError as exc:\n"
        "    print('FAILED', type(exc).__name__)\n"
    )
    out = _run_in_sandbox(
        compose,
        {
            "echo": "echo hello-$((6*7)) && python3 -c 'import numpy; print(numpy.__name__)'",
            "ifaces": "ls /sys/class/net",
            "links": "ip -o link show | awk -F': ' '{print $2}'",
            "connect": f"python3 - <<'EOF'\n{probe}EOF",
        },
        tmp_path,
    )
    assert out["echo"].split() == ["hello-42", "numpy"]
    assert out["ifaces"].split() == ["lo"]
    assert out["links"].split() == ["lo"]
    assert out["connect"].startswith("FAILED"), out["connect"]
    assert len(accepted) == 1  # only the host's own probe reached the listener


@pytest.mark.docker
def test_reference_dockerfile_builds_offline(
    docker_ready: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference Dockerfile builds with no network on top of the local base image."""
    monkeypatch.setenv(dk.BASE_IMAGE_ENV, dk.DEFAULT_BASE_TAG)
    ctx = tmp_path / "sandbox"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text((dk.BASE_IMAGE_DIR / "Dockerfile").read_text())
    compose = dk.compose_file(
        ctx, {"default": dk.ServiceSpec(build=".", image="evalsuite/sandbox-test:latest",
                                        default=True)}
    )
    out = _run_in_sandbox(compose, {"where": "pwd && python -c 'import pandas, pytest'"},
                          tmp_path)
    assert out["where"].strip() == "/workspace"
