"""The bwrap sandbox's admission of samples by host memory and CPU (no bwrap needed)."""

from __future__ import annotations

import logging

import anyio
import pytest

from harness.sandbox.admission import (
    CPU_OVERSUBSCRIBE,
    Admission,
    HostResources,
    admission_limit,
    host_resources,
)

GiB = 2**30


def test_host_resources_reads_this_host() -> None:
    host = host_resources()
    assert 0 < host.available_memory <= host.total_memory
    assert host.cpus >= 1


@pytest.mark.parametrize(
    ("available", "cpus", "memory", "per_cpu", "expected"),
    [
        (16 * GiB, 8, 2 * GiB, 1.0, 7),   # memory binds: (16 - 1.6) // 2
        (64 * GiB, 2, 1 * GiB, 1.0, 4),   # cpu binds: 2 cores x 2
        (64 * GiB, 2, 1 * GiB, 0.5, 8),   # half-core samples: twice as many
        (1 * GiB, 4, 2 * GiB, 1.0, 1),    # nothing fits: one still runs
    ],
)  # fmt: skip
def test_the_limit_follows_the_binding_resource(
    available: int, cpus: int, memory: int, per_cpu: float, expected: int
) -> None:
    host = HostResources(available_memory=available, total_memory=16 * GiB, cpus=cpus)
    limit = admission_limit(host, memory, per_cpu)
    assert limit.samples == expected
    assert limit.by_cpu == int(cpus * CPU_OVERSUBSCRIBE / per_cpu)
    assert f"at most {expected} sample(s)" in limit.describe()


def test_admission_waits_for_memory_and_logs_its_limit(caplog: pytest.LogCaptureFixture) -> None:
    """Three 2 GiB samples on a host with 5.6 GiB usable: two run, the third waits until
    one ends; a running sample's unused headroom counts as taken."""
    host = {"available": 7 * GiB}

    def resources() -> HostResources:
        return HostResources(available_memory=host["available"], total_memory=14 * GiB, cpus=8)

    gate = Admission(resources)
    admitted: list[int] = []

    async def main() -> None:
        first = await gate.admit(2 * GiB, 1.0)
        await gate.admit(2 * GiB, 1.0)
        admitted.extend([1, 2])
        async with anyio.create_task_group() as tg:

            async def third() -> None:
                await gate.admit(2 * GiB, 1.0)
                admitted.append(3)

            tg.start_soon(third)
            await anyio.sleep(0.6)
            assert admitted == [1, 2]  # 7 - 1.4 reserve - 2 x 2 headroom < 2
            gate.release(first)
            await anyio.sleep(0.6)
        assert admitted == [1, 2, 3] and gate.live == 2

    with caplog.at_level(logging.INFO, logger="harness.sandbox.admission"):
        anyio.run(main)
    assert any("admitting at most 2 sample(s)" in r.getMessage() for r in caplog.records)


def test_used_memory_is_no_longer_headroom() -> None:
    """A sample whose cgroup already holds its memory promises nothing more: the host's
    available memory already shows it."""
    gate = Admission(lambda: HostResources(4 * GiB, 10 * GiB, 8))

    async def main() -> None:
        ticket = await gate.admit(2 * GiB, 1.0)
        assert not gate._fits(2 * GiB, 1.0)  # 4 - 1 reserve - 2 headroom < 2
        gate.track(ticket, lambda: 2 * GiB)
        assert gate._fits(2 * GiB, 1.0)

    anyio.run(main)


def test_cpu_quota_caps_admission() -> None:
    gate = Admission(lambda: HostResources(100 * GiB, 100 * GiB, 1))

    async def main() -> None:
        await gate.admit(GiB, 1.0)
        await gate.admit(GiB, 1.0)
        assert not gate._fits(GiB, 1.0)  # 1 core x 2 = 2 samples of one core

    anyio.run(main)
