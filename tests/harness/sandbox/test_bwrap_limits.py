"""Limits and config of the bwrap sandbox: parsing, validation, and that a configured
limit is the one the sandbox enforces."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel, ValidationError

from harness.sandbox.bwrap import BwrapSandboxEnvironment, bwrap_available
from harness.sandbox.limits import (
    DEFAULT_PIDS,
    BwrapConfig,
    GiB,
    MiB,
    SandboxLimits,
    load_config,
    parse_size,
)

needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot start here")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1024", 1024), ("512M", 512 * MiB), ("2GiB", 2 * GiB), ("1.5g", 3 * GiB // 2),
     ("64k", 64 * 1024), ("3 MB", 3 * MiB), (77, 77)],
)  # fmt: skip
def test_parse_size(text: str | int, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "lots", "1X", "-5M", True])
def test_parse_size_rejects(bad: str | bool) -> None:
    with pytest.raises(ValueError):
        parse_size(bad)


def test_limits_validate_and_render_prlimit() -> None:
    limits = SandboxLimits(memory_bytes=GiB, pids=10, cpu_s=5)
    args = limits.prlimit_args()
    assert f"--as={GiB}" in args and "--nproc=10" in args and "--cpu=5" in args
    assert "--core=0" in args
    for bad in ({"pids": 0}, {"memory_bytes": -1}, {"timeout_s": 1.5}):
        with pytest.raises(ValueError):
            SandboxLimits(**bad)  # type: ignore[arg-type]


def test_from_mapping_parses_sizes_and_rejects_unknown() -> None:
    limits = SandboxLimits.from_mapping({"memory_bytes": "1G", "pids": "32"})
    assert (limits.memory_bytes, limits.pids, limits.cpu_s) == (GiB, 32, SandboxLimits().cpu_s)
    with pytest.raises(ValueError, match="memroy"):
        SandboxLimits.from_mapping({"memroy": 1})


def test_load_config_from_every_source(tmp_path: Path) -> None:
    assert load_config(None) == BwrapConfig()
    assert load_config(None).limits().pids == DEFAULT_PIDS
    yaml_file = tmp_path / "limits.yaml"
    yaml_file.write_text("memory_bytes: 512M\npids: 40\nro_binds: [/opt]\nenv: {A: b}\n")
    from_yaml = load_config(str(yaml_file))
    assert (from_yaml.memory_bytes, from_yaml.pids, from_yaml.ro_binds) == (512 * MiB, 40, ["/opt"])
    json_file = tmp_path / "limits.json"
    json_file.write_text(json.dumps({"timeout_s": 9}))
    assert load_config(json_file).timeout_s == 9
    assert load_config({"tmp_bytes": "1M"}).tmp_bytes == MiB
    assert load_config(SandboxLimits(pids=7)).pids == 7

    class Other(BaseModel):
        cpu_s: int = 3

    assert load_config(Other()).cpu_s == 3
    with pytest.raises(ValidationError):
        load_config({"nope": 1})
    with pytest.raises(ValidationError):
        load_config({"ro_binds": ["relative/path"]})
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(ValueError, match="mapping"):
        load_config(str(tmp_path / "list.yaml"))


def test_config_roundtrips_through_inspect_deserialize() -> None:
    config = BwrapConfig(memory_bytes=GiB, ro_binds=["/opt"], env={"X": "1"})
    rebuilt = BwrapSandboxEnvironment.config_deserialize(config.model_dump())
    assert rebuilt == config


@needs_bwrap
def test_configured_memory_limit_is_enforced() -> None:
    env = BwrapSandboxEnvironment(BwrapConfig(memory_bytes=256 * MiB))
    try:
        big = anyio.run(env.exec, ["python3", "-c", "b = bytearray(400 * 2**20)"])
        small = anyio.run(env.exec, ["python3", "-c", "b = bytearray(64 * 2**20); print('ok')"])
    finally:
        env.cleanup()
    assert not big.success and "MemoryError" in big.stderr
    assert small.success and small.stdout == "ok\n"


@needs_bwrap
def test_ro_binds_and_env_from_config() -> None:
    # ro_binds must be readable by other users: the sample runs as an unprivileged uid
    with tempfile.TemporaryDirectory() as tmp:
        shared = Path(tmp)
        shared.chmod(0o755)
        (shared / "data.txt").write_text("dataset")
        _check_ro_binds(shared)


def _check_ro_binds(shared: Path) -> None:
    env = BwrapSandboxEnvironment(BwrapConfig(ro_binds=[str(shared)], env={"MODE": "cfg"}))
    try:
        seen = anyio.run(env.exec, ["sh", "-c", f'cat {shared}/data.txt; echo " $MODE"'])
        wrote = anyio.run(env.exec, ["sh", "-c", f"echo x > {shared}/new"])
        override = anyio.run(lambda: env.exec(["sh", "-c", "echo $MODE"], env={"MODE": "call"}))
    finally:
        env.cleanup()
    assert seen.stdout == "dataset cfg\n"
    assert not wrote.success and not (shared / "new").exists()
    assert override.stdout == "call\n"


def test_per_sample_fields_parse() -> None:
    config = load_config({"disk_bytes": "128M", "cpus": 0.5, "inspect_tools": False})
    assert (config.disk_bytes, config.cpus, config.inspect_tools) == (128 * MiB, 0.5, False)
    for bad in ({"cpus": 0}, {"disk_bytes": True}, {"cpus": True}):
        with pytest.raises(ValidationError):
            load_config(bad)


def test_cgroup_probe_says_why_and_how_to_fix(tmp_path: Path) -> None:
    from harness.sandbox.cgroups import probe_cgroups

    empty = tmp_path / "mountinfo"
    empty.write_text("")
    support = probe_cgroups(empty)
    assert (support.mode, support.usable) == ("none", False)
    assert "fix:" in support.reason and "EVALSUITE_CGROUP_PARENT" in support.reason


def test_v2_and_v1_mount_tables_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.sandbox import cgroups

    table = tmp_path / "mountinfo"
    table.write_text(
        "35 31 0:32 / /nonexistent/memory rw - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /nonexistent/unified rw,relatime - cgroup2 cgroup2 rw\n"
    )
    mounts = cgroups._mounts(table)
    assert ("/nonexistent/unified", "cgroup2", {"rw"}) in mounts
    assert any(t == "cgroup" and "memory" in o for _, t, o in mounts)
    # a delegated v2 folder named by the environment is checked for the three controllers
    fake = tmp_path / "delegated"
    fake.mkdir()
    (fake / "cgroup.controllers").write_text("cpu memory\n")
    monkeypatch.setenv(cgroups.PARENT_ENV, str(fake))
    parent, reason = cgroups._v2_parent(mounts)
    assert parent is None and "pids" in reason


@needs_bwrap
def test_without_cgroups_or_quota_the_rlimits_remain(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.sandbox import bwrap, cgroups, quota

    monkeypatch.setattr(cgroups, "cgroup_support", lambda: cgroups.CgroupSupport("none", ()))
    monkeypatch.setattr(quota, "quota_support", lambda: quota.QuotaSupport(False, "test"))
    env = bwrap.BwrapSandboxEnvironment(BwrapConfig(memory_bytes=256 * MiB))
    try:
        assert env.cgroup is None and env.disk is None
        big = anyio.run(env.exec, ["python3", "-c", "b = bytearray(400 * 2**20)"])
        tmp = anyio.run(env.exec, ["sh", "-c", "echo x > /tmp/f && cat /tmp/f"])
    finally:
        env.cleanup()
    assert not big.success and "MemoryError" in big.stderr
    assert tmp.stdout == "x\n"


@needs_bwrap
def test_sample_cgroup_and_disk_exist_and_go(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.sandbox.cgroups import cgroup_support
    from harness.sandbox.quota import quota_support

    env = BwrapSandboxEnvironment(BwrapConfig(disk_bytes=32 * MiB))
    group, disk = env.cgroup, env.disk
    try:
        if cgroup_support().usable:
            assert group is not None and all(p.is_dir() for p in group.paths.values())
        if quota_support().usable:
            assert disk is not None and disk.mount_point.is_mount()
            df = anyio.run(env.exec, ["df", "-k", "/sandbox"]).stdout.splitlines()[1]
            assert int(df.split()[1]) <= 32 * 1024
    finally:
        env.cleanup()
    if group is not None:
        assert not any(p.exists() for p in group.paths.values())
    if disk is not None:
        assert not disk.mount_point.is_mount() and not disk.image.exists()
