"""Resources per study cell: derived from model backend and sandbox, overridden in study.yaml."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.factorial.resources import (
    Resources,
    cell_resources,
    derive_resources,
    infeasible,
)
from harness.factorial.study import StudyError, parse_study
from harness.sandbox.limits import GiB

REPO = Path(__file__).resolve().parents[3]
COMPOSE = REPO / "benchmarks" / "formulacode" / "compose.yaml"  # cpus: 2.0, mem_limit: 4g


class _BwrapConfig:
    """Stands for BwrapConfig: the derivation reads only ``cpus`` and ``memory_bytes``."""

    cpus = 0.5
    memory_bytes = 512 * 1024 * 1024


@pytest.mark.parametrize(("model", "args", "sandbox", "expected"), [
    ("scripted/arith-oracle", {}, None, Resources(num_cpus=1, num_gpus=0)),
    ("openai/gpt-4o", {}, "local", Resources(num_cpus=1, num_gpus=0)),
    ("vllm/Qwen/Qwen2.5-7B", {}, None, Resources(num_gpus=1)),
    ("vllm/Qwen/Qwen2.5-72B", {"tensor_parallel_size": 4}, None, Resources(num_gpus=4)),
    ("hf/gpt2", {}, None, Resources(num_gpus=1)),
    ("hf/gpt2", {"device": "cpu"}, None, Resources(num_gpus=0)),
    ("whitebox/smollm2", {}, None, Resources(num_gpus=1)),
    ("scripted/x", {}, ("docker", str(COMPOSE)), Resources(num_cpus=2, memory=4 * GiB)),
    ("scripted/x", {}, "docker", Resources(num_cpus=1, memory=2 * GiB)),  # no compose file
    ("scripted/x", {}, ("bwrap", _BwrapConfig()),
     Resources(num_cpus=0.5, memory=512 * 1024 * 1024)),
    ("vllm/m", {}, ("docker", str(COMPOSE)), Resources(num_cpus=2, num_gpus=1, memory=4 * GiB)),
])
def test_derived_from_backend_and_sandbox(model: str, args: dict[str, object],
                                          sandbox: object, expected: Resources) -> None:
    assert derive_resources(model, args, sandbox) == expected


def _study(extra: str) -> str:
    return textwrap.dedent("""\
        name: res
        response:
          tasks: [{name: harness/arithmetic, args: {n: 2}}]
        factors:
          - name: model
            binds_to: model
            levels:
              - {label: big, value: vllm/big}
              - {label: api, value: openai/gpt-4o}
          - name: box
            binds_to: sandbox
            levels: [none, docker]
        """) + extra


def test_study_overrides_derived_values_in_file_order() -> None:
    study = parse_study(_study(textwrap.dedent("""\
        resources: {num_cpus: 3}
        resource_levels:
          model=big: {num_gpus: 2, memory: 8GiB}
          box=docker: {memory: 1GiB}
        """)))
    got = {tuple(c.levels.values()): cell_resources(c, study) for c in study.cells()}
    assert got[("big", "none")] == Resources(num_cpus=3, num_gpus=2, memory=8 * GiB)
    assert got[("api", "none")] == Resources(num_cpus=3, num_gpus=0)
    # docker with no compose file: 2 GiB derived, 1 GiB from the later selector
    assert got[("api", "docker")] == Resources(num_cpus=3, num_gpus=0, memory=GiB)
    assert got[("big", "docker")] == Resources(num_cpus=3, num_gpus=2, memory=GiB)


def test_without_overrides_the_cell_keeps_the_derivation() -> None:
    study = parse_study(_study(""))
    got = {tuple(c.levels.values()): cell_resources(c, study) for c in study.cells()}
    assert got[("big", "none")] == Resources(num_cpus=1, num_gpus=1)
    assert got[("api", "docker")] == Resources(num_cpus=1, num_gpus=0, memory=2 * GiB)


def test_a_selector_must_name_a_level() -> None:
    with pytest.raises(StudyError, match=r"'model=small' is not factor=label"):
        parse_study(_study("resource_levels:\n  model=small: {num_gpus: 1}\n"))
    with pytest.raises(StudyError, match=r"resources"):
        parse_study(_study("resources: {gpus: 1}\n"))  # misspelt field


def test_ray_options_carry_memory_only_when_reserved() -> None:
    assert Resources().ray_options() == {"num_cpus": 1.0, "num_gpus": 0.0}
    assert Resources(memory=GiB).ray_options()["memory"] == GiB


def test_infeasible_names_what_no_node_has() -> None:
    cpu_node = {"CPU": 2.0, "memory": 8.0 * GiB}
    gpu_node = {"CPU": 8.0, "GPU": 1.0, "memory": 64.0 * GiB}
    needs = {
        "a": Resources(num_cpus=1),
        "b": Resources(num_gpus=1),
        "c": Resources(num_gpus=2),
        "d": Resources(num_cpus=4, memory=16 * GiB),
    }
    assert infeasible(needs, [cpu_node, gpu_node]) == {
        "c": "needs 2 GPU (largest node has 1 GPU)"}
    got = infeasible(needs, [cpu_node])
    assert set(got) == {"b", "c", "d"}
    assert got["d"] == ("needs 4 CPU (largest node has 2 CPU), 16 GiB memory "
                        "(largest node has 8 GiB memory)")
    # each resource exists somewhere, but not together on one node
    split = infeasible({"e": Resources(num_cpus=4, num_gpus=1)},
                       [{"CPU": 8.0}, {"CPU": 1.0, "GPU": 1.0}])
    assert split == {"e": "needs 4 CPU, 1 GPU on one node; no node has them all"}


def test_the_dry_run_plan_shows_each_cells_reservation(tmp_path: Path) -> None:
    from harness.factorial.run import plan
    from harness.factorial.study import load_study

    path = tmp_path / "study.yaml"
    path.write_text(_study("resource_levels:\n  box=docker: {memory: 1GiB}\n"))
    result = plan(load_study(path), tmp_path / "no-logs")
    got = {tuple(c.levels.values()): c.resources for c in result.cells}
    assert got[("big", "none")] == Resources(num_cpus=1, num_gpus=1)
    assert got[("api", "docker")] == Resources(num_cpus=1, memory=GiB)
    assert "model=api box=docker  [cpu=1 gpu=0 mem=1GiB]" in result.table()
