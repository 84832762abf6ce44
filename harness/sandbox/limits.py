"""Resource limits and configuration for the ``bwrap`` sandbox.

Kept apart from the provider so the limits can be read, validated and tested without
starting a sandbox. A task picks its limits with any of::

    sandbox="bwrap"                                  # the defaults below
    sandbox=("bwrap", "limits.yaml")                 # a YAML or JSON file (flat mapping)
    sandbox=SandboxEnvironmentSpec("bwrap", BwrapConfig(memory_bytes="1GiB", pids=64))

The limits hold at two levels:

- **per sample**, where the host offers cgroups (:mod:`harness.sandbox.cgroups`): all of a
  sample's processes together get ``memory_bytes`` of memory (swap off), ``pids`` tasks and
  ``cpus`` cores of CPU time; and, where the host can mount a filesystem for it
  (:mod:`harness.sandbox.quota`), ``disk_bytes`` for everything the sample writes
  (``/sandbox``, ``/tmp`` and ``/var/tmp`` share it);
- **per process**, always, as the fallback where the host offers neither: rlimits set with
  ``prlimit`` just before ``bwrap`` starts (``memory_bytes`` as the address space of each
  process, ``pids`` as the tasks of the sample's own host uid, which is why the provider
  runs each sample as a fresh unprivileged uid, ``file_size_bytes``, ``cpu_s``,
  ``open_files``), ``timeout_s`` by the provider (wall clock), and ``tmp_bytes`` as the
  size of the in-memory ``/dev/shm``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

DEFAULT_TIMEOUT_S = 600
DEFAULT_CPU_S = 600
DEFAULT_MEMORY_BYTES = 2 * GiB
DEFAULT_PIDS = 256
DEFAULT_FILE_SIZE_BYTES = 1 * GiB
DEFAULT_OPEN_FILES = 1024
DEFAULT_TMP_BYTES = 256 * MiB
DEFAULT_DISK_BYTES = 2 * GiB
DEFAULT_CPUS = 1.0

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_UNIT = {"": 1, "k": KiB, "m": MiB, "g": GiB, "t": 1024 * GiB}


def parse_size(value: int | str) -> int:
    """Bytes from an int or a string such as ``"512M"``, ``"2GiB"`` or ``"1.5g"``.

    Units are binary (K = 1024) whether or not the ``i`` is written: limits are
    about memory pages and file blocks, where nobody means powers of ten.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int):
        return value
    match = _SIZE_RE.match(value)
    if match is None:
        raise ValueError(f"not a size: {value!r} (expected e.g. 512M, 2GiB, 1048576)")
    number, unit, _ = match.groups()
    return int(float(number) * _UNIT[unit.lower()])


_SIZE_FIELDS = ("memory_bytes", "file_size_bytes", "tmp_bytes", "disk_bytes")


class SandboxLimits(BaseModel):
    """Limits of a bwrap sample (positive numbers; sizes in bytes or like ``"2GiB"``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: int = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    """Wall-clock limit of an exec that passes no ``timeout`` of its own."""
    cpu_s: int = Field(default=DEFAULT_CPU_S, gt=0)
    """RLIMIT_CPU of each process (a process tree can use more; wall time bounds it)."""
    memory_bytes: int = Field(default=DEFAULT_MEMORY_BYTES, gt=0)
    """Memory of the whole sample (cgroup, swap off) and address space of each process
    (RLIMIT_AS, so one process that asks for more gets a plain ``MemoryError``)."""
    pids: int = Field(default=DEFAULT_PIDS, gt=0)
    """Tasks (processes and threads) of the whole sample, bwrap's own included (cgroup
    ``pids.max`` and RLIMIT_NPROC of the sample's uid)."""
    cpus: float = Field(default=DEFAULT_CPUS, gt=0)
    """Cores of CPU time the sample may use at once (cgroup CPU quota); the default is the
    one core a task gets unless it asks for more."""
    disk_bytes: int = Field(default=DEFAULT_DISK_BYTES, gt=0)
    """Disk quota of the sample: everything it writes to ``/sandbox``, ``/tmp`` and
    ``/var/tmp`` together (a size-limited filesystem; past it, writes fail with ENOSPC)."""
    file_size_bytes: int = Field(default=DEFAULT_FILE_SIZE_BYTES, gt=0)
    """RLIMIT_FSIZE: largest file a process may write."""
    open_files: int = Field(default=DEFAULT_OPEN_FILES, gt=0)
    """RLIMIT_NOFILE."""
    tmp_bytes: int = Field(default=DEFAULT_TMP_BYTES, gt=0)
    """Size of the in-memory ``/dev/shm``, fresh per exec (``/tmp`` is on the sample's disk)."""

    @field_validator(
        "timeout_s", "cpu_s", "memory_bytes", "pids", "cpus", "disk_bytes", "file_size_bytes",
        "open_files", "tmp_bytes", mode="before",
    )  # fmt: skip
    @classmethod
    def _no_bools(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("a limit must be a positive int, not a bool")
        return value

    @field_validator(*_SIZE_FIELDS, mode="before")
    @classmethod
    def _size(cls, value: int | str) -> int:
        return parse_size(value)

    def prlimit_args(self) -> list[str]:
        """Options for util-linux ``prlimit`` (soft = hard, so the payload can't raise them)."""
        return [
            f"--as={self.memory_bytes}",
            f"--nproc={self.pids}",
            f"--fsize={self.file_size_bytes}",
            f"--cpu={self.cpu_s}",
            f"--nofile={self.open_files}",
            "--core=0",
        ]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SandboxLimits:
        """Limits from a mapping of field names; sizes may be strings like ``"1GiB"``."""
        known = set(SandboxLimits.model_fields)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown sandbox limits: {sorted(unknown)}; known: {sorted(known)}")
        return cls.model_validate(dict(data))


class BwrapConfig(SandboxLimits):
    """Pydantic sandbox config for ``bwrap``: the limits plus what else to expose.

    Inspect serialises a config object into the eval log and rebuilds it through the
    provider's ``config_deserialize``, hence a pydantic model.
    """

    ro_binds: list[str] = Field(default_factory=list)
    """Extra host paths to expose read-only at the same path (e.g. a data set)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment given to every exec (an exec's own ``env`` wins)."""
    inspect_tools: bool = True
    """Provide Inspect's in-sandbox tool support read-only, for ``text_editor()`` and
    ``bash_session()`` (see :mod:`harness.sandbox.tools`)."""

    @field_validator("ro_binds")
    @classmethod
    def _absolute(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path.startswith("/"):
                raise ValueError(f"ro_binds entries must be absolute paths, got {path!r}")
        return value

    def limits(self) -> SandboxLimits:
        """The limit fields as a ``SandboxLimits``."""
        return SandboxLimits(**{name: getattr(self, name) for name in SandboxLimits.model_fields})


def load_config(
    config: BaseModel | SandboxLimits | str | Path | Mapping[str, Any] | None,
) -> BwrapConfig:
    """Resolve whatever Inspect hands a provider into a ``BwrapConfig``.

    ``None`` gives the defaults; a path names a YAML (``.yaml``/``.yml``) or JSON file
    holding a flat mapping of ``BwrapConfig`` fields (relative paths resolve against the
    current directory, which Inspect sets to the task's directory during init).
    """
    if config is None:
        return BwrapConfig()
    if isinstance(config, BwrapConfig):
        return config
    if isinstance(config, SandboxLimits):
        return BwrapConfig(**config.model_dump())
    if isinstance(config, BaseModel):
        return BwrapConfig.model_validate(config.model_dump())
    if isinstance(config, Mapping):
        return BwrapConfig.model_validate(dict(config))
    path = Path(config)
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml  # deferred: only file-configured sandboxes need it

        data = yaml.safe_load(text) or {}
    else:
        data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of bwrap config fields")
    return BwrapConfig.model_validate(data)
