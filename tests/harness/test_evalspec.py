"""eval.yaml: parsing, errors that name file/line/field, lookup through the registry."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import evalspec, registry
from harness.evalspec import (
    EvalSpec,
    EvalSpecError,
    errored_policy,
    headline_for,
    load_spec,
    lower_is_better,
    metric_summary,
    parse_spec,
    spec_for_task,
    task_name,
)

VALID = """\
title: "Throw-away"
description: "a benchmark for tests"
paper: "2602.08367"
version: "2.0.0"
group: Tests
errored: zero
floor_agents: ["scripted/x-random"]
ceiling_agents: ["scripted/x-oracle"]
tasks:
  - name: evx
    aliases: [evx_old]
    samples: 4
    headline: acc
    metrics:
      acc:
        lower_is_better: false
        summary: "accuracy"
  - name: evx_bound
    version: "2.1.0"
    samples: 1
    headline: scorer/bound
    errored: drop
    metrics:
      scorer/bound:
        lower_is_better: true
        summary: "an upper bound, minimised"
      scorer/gap:
        lower_is_better: false
        errored: zero
        summary: "gap closed"
"""


def _error(text: str) -> str:
    with pytest.raises(EvalSpecError) as info:
        parse_spec(text, "b/eval.yaml")
    return str(info.value)


def test_a_valid_file_parses_with_defaults_and_policies() -> None:
    spec = parse_spec(VALID)
    assert spec.paper_url == "https://arxiv.org/abs/2602.08367"
    plain, bound = spec.tasks
    assert spec.task("evx_old") is plain and spec.task("nope") is None
    assert (spec.task_version(plain), spec.task_version(bound)) == ("2.0.0", "2.1.0")
    assert spec.policy(plain) == "zero" and spec.policy(plain, "acc") == "zero"
    assert spec.policy(bound, "scorer/bound") == "drop"
    assert spec.policy(bound, "scorer/gap") == "zero"  # the metric's own policy wins
    assert plain.epochs == 1 and plain.args == {}


@pytest.mark.parametrize(("edit", "expected"), [
    (("    samples: 4\n", "    samples: four\n"),
     "b/eval.yaml:12: tasks[0].samples: Input should be a valid integer"),
    (('version: "2.0.0"', "version: 2.0"),
     "b/eval.yaml:4: version: Input should be a valid string"),
    (("errored: zero\n", "errored: maybe\n"), "b/eval.yaml:6: errored: Input should be 'zero'"),
    (("        summary: \"accuracy\"\n", "        summary: \"accuracy\"\n        sumary: x\n"),
     "b/eval.yaml:18: tasks[0].metrics.acc.sumary: Extra inputs are not permitted"),
    (("    headline: acc\n", "    headline: accuracy\n"),
     "b/eval.yaml:13: tasks[0].headline: 'accuracy' is not among the task's metrics (acc)"),
    (('paper: "2602.08367"', 'paper: "the paper"'), "b/eval.yaml:3: paper: Value error, not an"),
    (("    aliases: [evx_old]\n", "    aliases: [evx_bound]\n"),
     "b/eval.yaml:18: tasks[1].name: task name 'evx_bound' is already used by tasks[0]"),
])
def test_errors_name_the_file_the_line_and_the_field(edit: tuple[str, str],
                                                      expected: str) -> None:
    old, new = edit
    assert old in VALID
    assert expected in _error(VALID.replace(old, new, 1))


def test_a_missing_field_points_at_its_parent() -> None:
    message = _error(VALID.replace("    samples: 4\n", "", 1))
    assert "b/eval.yaml:10: tasks[0].samples: Field required" in message


def test_zero_on_a_minimised_metric_is_rejected_with_its_line() -> None:
    text = VALID.replace("    errored: drop\n", "", 1)  # the bound task falls back to zero
    message = _error(text)
    assert "b/eval.yaml:24: tasks[1].metrics.scorer/bound.lower_is_better:" in message
    assert "would beat every real result" in message
    data = parse_spec(VALID).model_dump()
    data["tasks"][1]["errored"] = None
    with pytest.raises(ValueError, match="would beat every real result"):
        EvalSpec.model_validate(data)  # built in code, not from a file: still checked


def test_not_yaml_and_not_a_mapping() -> None:
    assert _error("a: 1\nb: [1\n").startswith("b/eval.yaml:3: not valid YAML")  # where it ends
    assert _error("- a\n- b\n") == "b/eval.yaml:1: <eval.yaml>: the file must be a YAML mapping"


def test_task_name_normalises_the_spellings_of_a_task() -> None:
    for spelled in ("harness/arithmetic", "benchmarks/arithmetic", "arithmetic",
                    "benchmarks/arithmetic/arithmetic.py"):
        assert task_name(spelled) == "arithmetic"
    assert task_name("benchmarks/causalgame/causalgame.py@causalgame_all") == "causalgame_all"
    assert task_name("synth/bench") == "synth/bench"  # another package's task is not ours


def _dummy() -> None:
    """A throw-away benchmark's task function."""


@pytest.fixture
def registered(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "eval.yaml").write_text(VALID)
    registry.register("benchmark", "evx", _dummy, folder=tmp_path, task="harness/evx")
    registry.register("benchmark", "evx_bound", _dummy, folder=tmp_path,
                      task="harness/evx_bound")
    yield tmp_path
    registry.unregister("benchmark", "evx")
    registry.unregister("benchmark", "evx_bound")


def test_lookup_goes_through_the_registry(registered: Path) -> None:
    found = spec_for_task("harness/evx")
    assert found is not None and found.benchmark == "evx" and found.version == "2.0.0"
    assert found.path == registered / "eval.yaml"
    old = spec_for_task("evx_old")  # an alias: found by searching the registered folders
    assert old is not None and old.name == "evx"
    assert spec_for_task("benchmarks/evx_bound") is not None
    assert headline_for("evx") == "acc" and headline_for("synth/none") is None
    assert lower_is_better("evx_bound") is True  # the headline by default
    assert lower_is_better("evx_bound", "scorer/gap") is False
    assert lower_is_better("synth/none", "acc") is False
    assert errored_policy("evx") == "zero" and errored_policy("evx_bound") == "drop"
    assert errored_policy("synth/none") == evalspec.DEFAULT_ERRORED_POLICY == "zero"
    assert metric_summary("evx_bound") == "an upper bound, minimised"


def test_the_cache_rereads_a_changed_file(registered: Path) -> None:
    path = registered / "eval.yaml"
    first = load_spec(registered)
    assert load_spec(path) is first  # cached
    path.write_text(VALID.replace("headline: acc", "headline: acc  # edited"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert load_spec(path) is not first


def test_a_broken_file_of_the_benchmark_asked_for_raises(registered: Path) -> None:
    (registered / "eval.yaml").write_text(VALID.replace("samples: 4", "samples: -1"))
    with pytest.raises(EvalSpecError, match=r"eval.yaml:12: tasks\[0\].samples"):
        spec_for_task("evx")


def test_every_registered_benchmark_has_its_task_in_an_eval_yaml() -> None:
    entries = registry.entries("benchmark")
    if not entries:
        pytest.skip("no benchmark registered (plugins not installed)")
    missing = [e.name for e in entries if spec_for_task(e.name) is None]
    assert not missing, f"benchmarks without an eval.yaml task entry: {missing}"
