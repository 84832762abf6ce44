"""What one study cell asks of the machine that runs it: CPUs, GPUs and memory.

Why: the Ray executor schedules each cell as one Ray task, and Ray admits a task only where
its declared resources are free. Asking one CPU for every cell (what the executor used to do)
puts two vLLM cells on one GPU and twenty sandboxed cells on a laptop. The figure is derived
from what the cell already says (its model's backend, its sandbox's limits), so a study
states nothing extra in the common case, and ``study.yaml`` overrides it where it knows
better::

    resources:                       # every cell
      num_cpus: 2
    resource_levels:                 # cells with this level of this factor
      model=hf-1.5b: {num_gpus: 1, memory: 24GiB}

The derivation (:func:`derive_resources`) is a pure function of the model string, its args
and the task's sandbox spec, tested without Ray; :func:`cell_resources` applies the study's
overrides on top, and :func:`infeasible` says which cells no node of a cluster could ever
admit (Ray would otherwise leave them pending forever).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict

from harness.factorial.resource_spec import ResourceSpec
from harness.sandbox.limits import DEFAULT_CPUS, DEFAULT_MEMORY_BYTES, GiB, parse_size

if TYPE_CHECKING:
    from harness.factorial.study import Cell, Study

__all__ = [
    "GPU_PROVIDERS",
    "ResourceSpec",
    "Resources",
    "cell_resources",
    "derive_resources",
    "infeasible",
    "sandbox_type",
]

GPU_PROVIDERS: frozenset[str] = frozenset({"vllm", "hf", "whitebox"})
"""Model providers that hold the weights in the cell's own process (on a GPU unless their
args say ``device: cpu``). Every other provider calls a server or runs in-process on CPU."""

SANDBOXED: frozenset[str] = frozenset({"docker", "bwrap"})
"""Sandbox types whose samples run processes of their own (so the cell needs their CPU and
memory); ``local`` runs in the worker itself and adds nothing."""


class Resources(BaseModel):
    """What one cell (one Ray task) reserves. ``memory`` in bytes; None reserves none."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    memory: int | None = None

    def merged(self, spec: ResourceSpec | None) -> Resources:
        """These resources with the fields ``spec`` sets replaced."""
        if spec is None:
            return self
        return self.model_copy(update=spec.model_dump(exclude_none=True))

    def ray_options(self) -> dict[str, Any]:
        """Keyword arguments for ``ray.remote(...)`` / ``.options(...)``."""
        options: dict[str, Any] = {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus}
        if self.memory:
            options["memory"] = self.memory
        return options


def sandbox_type(spec: Any) -> tuple[str | None, Any]:
    """``(type, config)`` of a task's or cell's sandbox value, however it was written:
    ``"docker"``, ``("docker", "compose.yaml")``, ``SandboxEnvironmentSpec`` or None."""
    if spec is None or spec == "none":
        return None, None
    if isinstance(spec, str):
        return spec, None
    if isinstance(spec, (tuple, list)):
        return str(spec[0]), (spec[1] if len(spec) > 1 else None)
    return getattr(spec, "type", None), getattr(spec, "config", None)


def _compose_limits(config: Any) -> tuple[float | None, int | None]:
    """CPUs and memory the services of a compose file ask for together (None: not stated)."""
    if not isinstance(config, (str, Path)) or not str(config).endswith((".yaml", ".yml")):
        return None, None
    path = Path(config)
    if not path.is_file():
        return None, None
    services = (yaml.safe_load(path.read_text()) or {}).get("services") or {}
    cpus: float | None = None
    memory: int | None = None
    for service in services.values():
        limits = ((service.get("deploy") or {}).get("resources") or {}).get("limits") or {}
        cpu = service.get("cpus", limits.get("cpus"))
        mem = service.get("mem_limit", limits.get("memory"))
        if cpu is not None:
            cpus = (cpus or 0.0) + float(cpu)
        if mem is not None:
            memory = (memory or 0) + parse_size(str(mem))
    return cpus, memory


def derive_resources(model: str | None, model_args: Mapping[str, Any] | None = None,
                     sandbox: Any = None) -> Resources:
    """The resources a cell needs, from its model and its sandbox alone.

    - A model whose provider holds weights in the cell's process (:data:`GPU_PROVIDERS`)
      takes GPUs: ``tensor_parallel_size`` of them for vLLM, else one; none when its args
      put it on the CPU (``device: cpu``).
    - A sandboxed task (``docker``, ``bwrap``) takes one sample's sandbox limits: the compose
      file's summed ``cpus`` / ``mem_limit`` (or ``deploy.resources.limits``) for docker,
      the config's ``cpus`` / ``memory_bytes`` for bwrap, else the sandbox defaults (1 CPU,
      2 GiB). Samples of a cell that run at once share that reservation; a study whose cells
      run many sandboxes at once says so with an override.
    - Everything else: one CPU, no memory reserved.
    """
    args = dict(model_args or {})
    provider = (model or "").split("/", 1)[0]
    gpus = 0.0
    if provider in GPU_PROVIDERS and str(args.get("device", "")).lower() != "cpu":
        gpus = float(args.get("tensor_parallel_size", 1)) if provider == "vllm" else 1.0
    kind, config = sandbox_type(sandbox)
    cpus, memory = 1.0, None
    if kind in SANDBOXED:
        if kind == "docker":
            stated_cpus, stated_memory = _compose_limits(config)
        else:
            stated_cpus = getattr(config, "cpus", None)
            stated_memory = getattr(config, "memory_bytes", None)
        cpus = float(stated_cpus) if stated_cpus is not None else DEFAULT_CPUS
        memory = int(stated_memory) if stated_memory is not None else DEFAULT_MEMORY_BYTES
    return Resources(num_cpus=cpus, num_gpus=gpus, memory=memory)


def cell_resources(cell: Cell, study: Study, task_sandbox: Any = None) -> Resources:
    """A cell's resources: derived (:func:`derive_resources`, the cell's own sandbox level
    winning over the task's ``task_sandbox``), then the study's ``resources``, then each
    matching ``resource_levels`` entry (``factor=label``) in the order the file lists them."""
    sandbox = task_sandbox if cell.sandbox is None else cell.sandbox
    resources = derive_resources(cell.model, cell.model_args, sandbox).merged(study.resources)
    for selector, spec in study.resource_levels.items():
        factor, _, label = selector.partition("=")
        if cell.levels.get(factor) == label:
            resources = resources.merged(spec)
    return resources


def infeasible(needs: Mapping[str, Resources],
               nodes: list[Mapping[str, float]]) -> dict[str, str]:
    """Cells no single node could ever admit, with why (``needs 1 GPU; largest node has 0``).

    ``nodes`` are the nodes' total resources as Ray names them (``CPU``, ``GPU``,
    ``memory``). Ray queues an unsatisfiable task forever, so the runner refuses up front.
    """
    keys = (("num_cpus", "CPU"), ("num_gpus", "GPU"), ("memory", "memory"))
    problems: dict[str, str] = {}
    for cell_id, need in needs.items():
        wanted = {ray_key: float(getattr(need, attribute) or 0) for attribute, ray_key in keys}
        if any(all(wanted[k] <= float(node.get(k, 0.0)) for k in wanted) for node in nodes):
            continue
        largest = {k: max((float(n.get(k, 0.0)) for n in nodes), default=0.0) for k in wanted}
        short = [f"{_amount(k, wanted[k])} (largest node has {_amount(k, largest[k])})"
                 for k in wanted if wanted[k] > largest[k]]
        problems[cell_id] = "needs " + (", ".join(short) if short else ", ".join(
            _amount(k, v) for k, v in wanted.items() if v) + " on one node; no node has "
            "them all")
    return problems


def _amount(key: str, value: float) -> str:
    """``2 GPU``, ``4 CPU``, ``16 GiB memory``: how a refusal names a quantity."""
    return f"{value / GiB:g} GiB memory" if key == "memory" else f"{value:g} {key}"
