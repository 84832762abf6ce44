"""Every benchmark folder's eval.yaml against the task it describes.

Per folder: the file parses; each task it lists builds with its default arguments (only
FormulaCode's docker image build is stubbed: the pack's records and the Task are real) and
has the stated version, sample count and epochs; every metric key belongs to one of the
task's scorers; the keys the committed ladder logs hold are all described; the README has
the paper link and an ``## Evaluation Report``; and every registered benchmark is covered.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness import registry
from harness.evalspec import EvalSpec, load_spec, spec_for_task
from harness.inspect_compat import registry_info_name

REPO = Path(__file__).resolve().parents[2]
PUBLISHED_LOGS = REPO / "leaderboards" / "ladder" / "logs"
FOLDERS = ["arithmetic", "causalgame", "formulacode", "medversa", "open_problems", "probes",
           "worldtravel", "worldtravel_webscape",
           *(f"paper_tasks/{p}" for p in ("tpg", "treca", "sika_gp", "hmh", "ucast", "tfface",
                                          "cdat", "tabpe", "kupbi", "scout", "udm",
                                          "household", "polysae", "brain_compression",
                                          "cocoedit", "t2i_concepts", "vfm", "hfm"))]
TASKS: dict[str, str] = {
    "arithmetic": "benchmarks.arithmetic.arithmetic:arithmetic",
    "causalgame": "benchmarks.causalgame.causalgame:causalgame",
    "formulacode": "benchmarks.formulacode.formulacode:formulacode",
    "medversa": "benchmarks.medversa.medversa:medversa",
    "circle_packing": "benchmarks.open_problems.open_problems:circle_packing",
    "first_autocorrelation": "benchmarks.open_problems.open_problems:first_autocorrelation",
    "passkey": "benchmarks.probes.passkey:passkey",
    "esamp_arith": "benchmarks.probes.esamp_arith:esamp_arith",
    "mvr_workload": "benchmarks.probes.mvr_workload:mvr_workload",
    "bpb": "benchmarks.probes.bpb:bpb",
    "induction": "benchmarks.probes.induction:induction",
    "needle": "benchmarks.probes.needle:needle",
    "worldtravel": "benchmarks.worldtravel.worldtravel:worldtravel",
    "worldtravel_webscape": "benchmarks.worldtravel_webscape.worldtravel_webscape:"
                            "worldtravel_webscape",
    "tpg_ab": "benchmarks.paper_tasks.tpg.tpg:tpg_ab",
    "treca": "benchmarks.paper_tasks.treca.treca:treca",
    "sika_gp": "benchmarks.paper_tasks.sika_gp.sika_gp:sika_gp",
    "hmh": "benchmarks.paper_tasks.hmh.hmh:hmh",
    "ucast": "benchmarks.paper_tasks.ucast.ucast:ucast",
    "tfface": "benchmarks.paper_tasks.tfface.tfface:tfface",
    "cdat": "benchmarks.paper_tasks.cdat.cdat:cdat",
    "tabpe": "benchmarks.paper_tasks.tabpe.tabpe:tabpe",
    "kupbi": "benchmarks.paper_tasks.kupbi.kupbi:kupbi",
    "scout": "benchmarks.paper_tasks.scout.scout:scout",
    "household": "benchmarks.paper_tasks.household.household:household",
    "udm_grpo": "benchmarks.paper_tasks.udm.udm:udm_grpo",
    "vfm": "benchmarks.paper_tasks.vfm.vfm:vfm",
    "hfm": "benchmarks.paper_tasks.hfm.hfm:hfm",
    "polysae": "benchmarks.paper_tasks.polysae.polysae:polysae",
    "brain_compression": "benchmarks.paper_tasks.brain_compression.brain_compression:"
                         "brain_compression",
    "cocoedit": "benchmarks.paper_tasks.cocoedit.cocoedit:cocoedit",
    "t2i_concepts": "benchmarks.paper_tasks.t2i_concepts.t2i_concepts:t2i_concepts",
}
"""Task name -> its ``@task`` function (imported directly: tests may import benchmarks)."""

# issue 50, part 2 (Rubik HMM, VIPO, MetaMoE)
FOLDERS += [f"paper_tasks/{p}" for p in ("rubik_hmm", "vipo", "metamoe")]
TASKS.update({
    "rubik_hmm": "benchmarks.paper_tasks.rubik_hmm.rubik_hmm:rubik_hmm",
    "vipo": "benchmarks.paper_tasks.vipo.vipo:vipo",
    "metamoe": "benchmarks.paper_tasks.metamoe.metamoe:metamoe",
})


def _function(name: str) -> Callable[..., Any]:
    module, _, attr = TASKS[name].partition(":")
    return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


def _build(name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    if name == "formulacode":  # building the pack's image needs docker; the task needs a tag
        module = importlib.import_module("benchmarks.formulacode.formulacode")
        monkeypatch.setattr(module, "ensure_family_image", lambda: "formulacode-pack:test")
        monkeypatch.setenv("FORMULACODE_IMAGE", "formulacode-pack:test")
    return _function(name)()


def _spec(folder: str) -> EvalSpec:
    return load_spec(REPO / "benchmarks" / folder)


@pytest.mark.parametrize("folder", FOLDERS)
def test_eval_yaml_matches_the_built_tasks(folder: str, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _spec(folder)
    for entry in spec.tasks:
        task = _build(entry.name, monkeypatch)
        assert task.version == spec.task_version(entry), entry.name
        assert len(task.dataset) == entry.samples, entry.name
        assert (task.epochs or 1) == entry.epochs, entry.name
        scorers = task.scorer if isinstance(task.scorer, list) else [task.scorer]
        names = {registry_info_name(s).rsplit("/", 1)[-1] for s in scorers}
        for key in entry.metrics:
            assert key.split("/", 1)[0] in names, (entry.name, key, names)
        assert entry.headline in entry.metrics


@pytest.mark.parametrize("folder", FOLDERS)
def test_readme_links_the_paper_and_has_an_evaluation_report(folder: str) -> None:
    spec = _spec(folder)
    readme = REPO / "benchmarks" / folder / "README.md"
    assert readme.is_file(), f"{folder} has no README.md"
    text = readme.read_text()
    assert "\n## Evaluation Report" in text
    if spec.paper is None:
        assert "no paper" in text.lower(), f"{folder}: say in the README that it has no paper"
    else:
        assert spec.paper_url is not None and spec.paper_url in text, (folder, spec.paper_url)


@pytest.mark.skipif(not PUBLISHED_LOGS.is_dir(), reason="published logs not present")
def test_every_score_key_in_the_committed_logs_is_described() -> None:
    from harness.results import read_headers, read_results
    from harness.tool_validity import is_auxiliary

    frame = read_results(PUBLISHED_LOGS)
    assert read_headers(PUBLISHED_LOGS).height
    for (task,), group in frame.group_by(["task"]):
        found = spec_for_task(str(task))
        assert found is not None, f"logs of {task} match no eval.yaml task"
        keys = {k for k in group["score_key"].unique().to_list() if not is_auxiliary(k)}
        undescribed = keys - set(found.task.metrics)
        assert not undescribed, (task, undescribed)


def test_every_registered_benchmark_task_is_in_an_eval_yaml() -> None:
    for name in TASKS:
        _function(name)  # importing the task module registers it
    entries = registry.entries("benchmark")
    assert {e.name for e in entries} >= set(TASKS)
    for entry in entries:
        found = spec_for_task(entry.meta.get("task", entry.name))
        assert found is not None, f"{entry.name}: no eval.yaml task entry"
        assert found.path.parent == Path(entry.meta["folder"]), entry.name
        assert found.extra == entry.extra or entry.extra is None, entry.name


def test_the_first_autocorrelation_bound_is_minimised() -> None:
    _function("first_autocorrelation")
    found = spec_for_task("harness/first_autocorrelation")
    assert found is not None
    assert found.headline == "verified_objective/objective" and found.lower_is_better()
    assert found.policy() == "drop"  # 0 would beat every real bound
    assert not found.lower_is_better("verified_objective/gap_closed")
