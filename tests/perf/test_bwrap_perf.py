"""Cost of the bwrap sandbox, against bare bwrap and Inspect's docker sandbox, in one run.

Measure with (on a quiet machine; quote ``uptime``'s load average beside every number)::

    .venv/bin/pytest tests/perf/test_bwrap_perf.py --benchmark-enable -m perf

- exec of ``true``, median of 50: the provider with its per-sample cgroup and disk quota
  in place (its launcher joining the cgroup, dropping the uid and setting rlimits in the
  forked child ahead of bwrap, the sample's mounts), bare ``bwrap ... true``, and ``exec``
  on Inspect's docker sandbox (targets: provider <= 20 ms and <= 0.1x docker; <= 1.5x
  bare in ``test_exec_overhead_side_by_side``);
- a sample's create + teardown (its filesystem, cgroup and folders), bwrap and docker;
- how many bwrap samples at a given memory limit this machine holds at once, each with
  all of that memory in use (a probe that counts, then reports; it asserts only that each
  sample did what it should).

Nothing here asserts a time (timings are not test outcomes).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from harness.sandbox.bwrap import BwrapSandboxEnvironment, bwrap_available
from harness.sandbox.limits import BwrapConfig, MiB, SandboxLimits
from harness.sandbox.samples import open_sample, unavailable

pytestmark = [
    pytest.mark.perf,
    pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot start here"),
]

ROUNDS = 50


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def _load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def test_provider_exec_true(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    """With the sample's cgroup and quota in place (where the host offers them)."""
    env = BwrapSandboxEnvironment(BwrapConfig())
    benchmark.extra_info.update(load=_load(), cgroup=env.cgroup is not None,
                                quota=env.disk is not None)  # fmt: skip
    try:
        result = benchmark.pedantic(
            lambda: loop.run_until_complete(env.exec(["true"])),
            rounds=ROUNDS, iterations=1, warmup_rounds=3,
        )  # fmt: skip
    finally:
        env.cleanup()
    assert (result.success, result.stdout, result.stderr) == (True, "", "")


def test_bare_bwrap_true(benchmark: Any) -> None:
    """The floor: bubblewrap alone, with the same namespaces and a minimal root."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--", "true"]  # fmt: skip
    benchmark.extra_info["load"] = _load()
    proc = benchmark.pedantic(lambda: subprocess.run(argv), rounds=ROUNDS, iterations=1,
                              warmup_rounds=3)  # fmt: skip
    assert proc.returncode == 0


@pytest.mark.docker
def test_docker_exec_true(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    """Inspect's docker sandbox: ``exec(["true"])`` on a running container."""
    if reason := unavailable("docker"):
        pytest.skip(reason)
    context = open_sample("docker", SandboxLimits())
    env = loop.run_until_complete(context.__aenter__())
    benchmark.extra_info["load"] = _load()
    try:
        result = benchmark.pedantic(
            lambda: loop.run_until_complete(env.exec(["true"])),
            rounds=ROUNDS, iterations=1, warmup_rounds=3,
        )  # fmt: skip
    finally:
        loop.run_until_complete(context.__aexit__(None, None, None))
    assert result.success


@pytest.mark.parametrize("provider", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_sample_create_and_teardown(
    benchmark: Any, loop: asyncio.AbstractEventLoop, provider: str
) -> None:
    if reason := unavailable(provider):
        pytest.skip(reason)

    async def one() -> bool:
        async with open_sample(provider, SandboxLimits()) as env:
            return (await env.exec(["true"])).success

    benchmark.extra_info["load"] = _load()
    rounds = 20 if provider == "bwrap" else 5
    ok = benchmark.pedantic(lambda: loop.run_until_complete(one()), rounds=rounds,
                            iterations=1, warmup_rounds=1)  # fmt: skip
    assert ok


def _bare_argv() -> list[str]:
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    return [bwrap, "--unshare-all", "--die-with-parent", "--new-session",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--", "true"]  # fmt: skip


class _OwnGroups:
    """Moves the calling thread into cgroups of its own and back (cgroup v1, as root).

    Why: the provider's exec runs in the sample's own cpu (and memory, pids) groups,
    which under load get a CPU share of their own, while a bare bwrap started from the
    test competes inside the test's group; timing the bare bwrap from groups of its own
    too ("bare, own cgroup") removes that advantage from the comparison.
    """

    def __init__(self) -> None:
        from harness.sandbox import cgroups

        support = cgroups.cgroup_support()
        self.group = None
        if support.mode != "v1" or os.geteuid() != 0:
            return
        self.group = cgroups.SampleCgroup.create(2**40, 2**20, float(os.cpu_count() or 1),
                                                 support)  # fmt: skip
        assert self.group is not None
        here = {}
        with open("/proc/thread-self/cgroup") as f:
            for line in f:
                _, names, path = line.rstrip("\n").split(":", 2)
                for name in names.split(","):
                    here[name] = path
        self.back = sorted({str(support.roots[c].parent / here[c].lstrip("/") / "tasks")
                            for c in self.group.paths})  # fmt: skip

    def _write(self, files: list[str]) -> None:
        for name in files:
            with open(name, "w") as f:
                f.write("0")

    def enter(self) -> None:
        if self.group is not None:
            self._write(self.group.procs_files())

    def leave(self) -> None:
        if self.group is not None:
            self._write(self.back)

    def remove(self) -> None:
        if self.group is not None:
            self.leave()
            self.group.remove()


def test_exec_overhead_side_by_side(
    loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue-52 ratio: provider ``exec(["true"])`` against bare ``bwrap ... true``,
    interleaved round by round so all see the same load; as root also against the bare
    bwrap run unprivileged as the sample's uid (``setpriv``), which is what the provider's
    bwrap is: an unprivileged bwrap builds its user namespaces itself and costs more than
    one started as root. The provider runs both ways: through its launcher (the default)
    and through the old ``sh``/``setpriv``/``prlimit`` chain under Inspect's
    ``subprocess()`` (``INSPECT_BWRAP_LAUNCHER=0``). The bare bwrap also runs from cgroups
    of its own (see ``_OwnGroups``). Prints the medians, the ratios and the load average."""
    import statistics
    import time

    env = BwrapSandboxEnvironment(BwrapConfig())
    bare = _bare_argv()
    floors = {"bare": bare}
    if env.layout.drop_to_uid:
        setpriv = shutil.which("setpriv")
        assert setpriv is not None
        floors["bare as sample uid"] = [setpriv, f"--reuid={env.host_uid}",
                                        f"--regid={env.host_uid}", "--clear-groups", "--",
                                        *bare]  # fmt: skip
    own = _OwnGroups()
    if own.group is not None:
        floors["bare, own cgroup"] = bare
    providers = {"provider": "1", "provider, old chain": "0"}
    times: dict[str, list[float]] = {name: [] for name in [*providers, *floors]}
    load_before, has_cgroup = _load(), env.cgroup is not None
    try:
        for round_ in range(ROUNDS + 3):
            for name, switch in providers.items():
                monkeypatch.setenv("INSPECT_BWRAP_LAUNCHER", switch)
                started = time.perf_counter()
                result = loop.run_until_complete(env.exec(["true"]))
                elapsed = time.perf_counter() - started
                assert result.success
                if round_ >= 3:
                    times[name].append(elapsed)
            for name, argv in floors.items():
                if name == "bare, own cgroup":
                    own.enter()
                started = time.perf_counter()
                assert subprocess.run(argv).returncode == 0
                if round_ >= 3:
                    times[name].append(time.perf_counter() - started)
                own.leave()
    finally:
        own.remove()
        env.cleanup()
    med = {name: statistics.median(values) * 1000 for name, values in times.items()}
    # paired: the median over rounds of each round's own ratio, less moved by load that
    # drifts during the run than the ratio of the two medians
    def paired(provider: str, floor: str) -> float:
        return statistics.median(a / b for a, b in zip(times[provider], times[floor], strict=True))

    ratios = "; ".join(
        f"{provider} = "
        + ", ".join(f"{med[provider] / med[floor]:.2f}x {floor} (paired "
                    f"{paired(provider, floor):.2f}x)" for floor in floors)  # fmt: skip
        for provider in providers
    )
    print(f"\nexec(['true']) median of {ROUNDS}: "
          + ", ".join(f"{name} {value:.1f} ms" for name, value in med.items())
          + f"; {ratios}; before: {load_before}; after: {_load()}; "
          f"cgroup={has_cgroup}")  # fmt: skip
    assert all(len(values) == ROUNDS for values in times.values())


MEMORY_LIMIT = 512 * MiB
MAX_SAMPLES = 16


@pytest.mark.slow
def test_concurrent_samples_at_memory_limit(loop: asyncio.AbstractEventLoop) -> None:
    """Start as many samples of ``MEMORY_LIMIT`` as fit in the host's available memory
    less a reserve of half its total (at most ``MAX_SAMPLES``), every one holding
    ~90% of its limit in a process that sleeps; reports how many held it at once. The
    count is fixed before any starts, so the probe never pushes the host into swap."""
    held = int(MEMORY_LIMIT * 0.9)
    code = f"import time; b = bytearray({held}); print('held', flush=True); time.sleep(10)"

    def available() -> int:
        with open("/proc/meminfo") as f:
            info = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in f}
        return info["MemAvailable"]

    reserve = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    count = max(1, min(MAX_SAMPLES, (available() - reserve) // MEMORY_LIMIT))
    envs: list[BwrapSandboxEnvironment] = []
    tasks: list[asyncio.Task[Any]] = []
    started = loop.time()
    try:
        for _ in range(count):
            env = BwrapSandboxEnvironment(BwrapConfig(memory_bytes=MEMORY_LIMIT))
            envs.append(env)
            tasks.append(loop.create_task(env.exec(["python3", "-c", code], timeout=60,
                                                  concurrency=False)))
            loop.run_until_complete(asyncio.sleep(0.3))
        resident = 0

        async def watch() -> None:  # the most the samples held together
            nonlocal resident
            while not all(t.done() for t in tasks):
                now = sum(env.cgroup.memory_usage() for env in envs if env.cgroup is not None)
                resident = max(resident, now)
                await asyncio.sleep(0.2)

        loop.run_until_complete(watch())
        results = loop.run_until_complete(asyncio.gather(*tasks))
    finally:
        for env in envs:
            env.cleanup()
    elapsed = loop.time() - started
    held_ok = sum(r.success and r.stdout.startswith("held") for r in results)
    print(f"\n{held_ok}/{len(envs)} bwrap samples at {MEMORY_LIMIT // MiB} MiB each held "
          f"their memory at once ({resident / 2**30:.1f} GiB resident together; "
          f"{elapsed:.1f} s; {_load()}; cpus={os.cpu_count()})")  # fmt: skip
    assert held_ok == len(envs) > 0
