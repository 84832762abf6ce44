"""Admit bwrap samples by what the host has free, not by a fixed count.

A fixed ``max_sandboxes`` is wrong on every host but the one it was tuned on: too high and
samples at their memory limit push the host into swap or its OOM killer; too low and cores
sit idle. Here a sample starts only when

- **memory**: the host's available memory (``MemAvailable``), less a reserve for the host
  itself and less the headroom every running sample may still grow into (its memory limit
  minus what its cgroup holds now), covers the new sample's memory limit; and
- **CPU**: the running samples' CPU quotas together stay within the host's cores times an
  oversubscription factor (agent samples mostly wait on their model, so 2 by default).

One sample is always admitted when none runs, so a limit larger than the host still makes
progress. The limit chosen is logged once per (memory, cpus) configuration and again
whenever it changes, as ``bwrap sandbox: admitting ...``.

This replaces the provider's ``default_concurrency`` (Inspect's ``max_sandboxes`` remains
an upper bound when a user sets it).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

import anyio

logger = logging.getLogger(__name__)

RESERVE_FRACTION = 0.10
"""Share of the host's total memory never promised to samples (the host's own needs)."""
CPU_OVERSUBSCRIBE = 2.0
"""Sample CPU quotas may add up to this many times the host's cores."""
POLL_S = 0.25
"""How often a waiting sample looks again (memory frees without notice)."""


@dataclass(frozen=True)
class HostResources:
    """What the host offers now."""

    available_memory: int
    """``MemAvailable`` in bytes: free plus reclaimable memory."""
    total_memory: int
    cpus: int
    """Cores this process may run on (its affinity mask, which a container or taskset sets)."""


def host_resources() -> HostResources:
    """Read ``/proc/meminfo`` and the affinity mask (Linux only, as bwrap is)."""
    info: dict[str, int] = {}
    with open("/proc/meminfo", encoding="ascii") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("MemAvailable", "MemTotal"):
                info[key] = int(rest.split()[0]) * 1024
    return HostResources(available_memory=info["MemAvailable"], total_memory=info["MemTotal"],
                         cpus=len(os.sched_getaffinity(0)))  # fmt: skip


@dataclass(frozen=True)
class AdmissionLimit:
    """How many samples of one configuration the host holds at once, and why."""

    samples: int
    by_memory: int
    by_cpu: int
    host: HostResources
    memory_bytes: int
    cpus: float

    def describe(self) -> str:
        gib = 2**30
        reserve = int(self.host.total_memory * RESERVE_FRACTION)
        return (
            f"bwrap sandbox: admitting at most {self.samples} sample(s) at once "
            f"(memory: {self.host.available_memory / gib:.1f} GiB available - "
            f"{reserve / gib:.1f} GiB reserve = {self.by_memory} x "
            f"{self.memory_bytes / gib:.2f} GiB; cpu: {self.host.cpus} core(s) x "
            f"{CPU_OVERSUBSCRIBE:g} / {self.cpus:g} per sample = {self.by_cpu})"
        )


def admission_limit(host: HostResources, memory_bytes: int, cpus: float) -> AdmissionLimit:
    """The number of idle samples of this size the host could start now (at least 1)."""
    reserve = int(host.total_memory * RESERVE_FRACTION)
    by_memory = max(0, host.available_memory - reserve) // memory_bytes
    by_cpu = int(host.cpus * CPU_OVERSUBSCRIBE / cpus)
    return AdmissionLimit(samples=max(1, min(by_memory, by_cpu)), by_memory=by_memory,
                          by_cpu=by_cpu, host=host, memory_bytes=memory_bytes,
                          cpus=cpus)  # fmt: skip


@dataclass(eq=False)
class _Admitted:
    memory_bytes: int
    cpus: float
    usage: Callable[[], int] | None
    """Bytes the sample's cgroup holds now (None: unknown, count its whole limit)."""

    def headroom(self) -> int:
        used = self.usage() if self.usage is not None else 0
        return max(0, self.memory_bytes - used)


class Admission:
    """The gate samples pass before they are created (one per process)."""

    def __init__(self, resources: Callable[[], HostResources] = host_resources) -> None:
        self._resources = resources
        self._live: list[_Admitted] = []
        self._logged: dict[tuple[int, float], int] = {}

    @property
    def live(self) -> int:
        return len(self._live)

    def _fits(self, memory_bytes: int, cpus: float) -> bool:
        if not self._live:
            return True
        host = self._resources()
        reserve = int(host.total_memory * RESERVE_FRACTION)
        promised = sum(sample.headroom() for sample in self._live)
        memory_ok = host.available_memory - reserve - promised >= memory_bytes
        cpu_ok = sum(s.cpus for s in self._live) + cpus <= host.cpus * CPU_OVERSUBSCRIBE
        return memory_ok and cpu_ok

    def _log_limit(self, memory_bytes: int, cpus: float) -> None:
        limit = admission_limit(self._resources(), memory_bytes, cpus)
        key = (memory_bytes, cpus)
        if self._logged.get(key) != limit.samples:
            self._logged[key] = limit.samples
            logger.info(limit.describe())

    async def admit(self, memory_bytes: int, cpus: float) -> _Admitted:
        """Wait until a sample of this size fits, then count it as running."""
        self._log_limit(memory_bytes, cpus)
        while not self._fits(memory_bytes, cpus):
            await anyio.sleep(POLL_S)
        ticket = _Admitted(memory_bytes, cpus, None)
        self._live.append(ticket)
        return ticket

    def track(self, ticket: _Admitted, usage: Callable[[], int] | None) -> None:
        """Count the sample's memory by its cgroup's use from now on (when it has one)."""
        ticket.usage = usage

    def release(self, ticket: _Admitted) -> None:
        if ticket in self._live:
            self._live.remove(ticket)


admission = Admission()
"""The process's gate (Inspect runs all of an eval's samples in one process)."""
