"""A study's cells as an Inspect Flow spec (issue 52 item 3): the spec names one task per
cell, Flow accepts it, and a grid run by Flow reads here exactly as the suite's own run of
the same study does (same cells, items and scores)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import polars as pl
import pytest
import yaml

from harness.factorial.flow import FLOW_TASK, flow_spec, write_flow_spec
from harness.factorial.report.frame import study_frame
from harness.factorial.run import run_study
from harness.factorial.study import StudyError, load_study

STUDY = textwrap.dedent("""\
    name: flowable
    response:
      tasks:
        - name: harness/arithmetic
          args: {n: 4, seed: 7, agent: react}
      scores: [exact_integer]
    factors:
      - name: model
        binds_to: model
        levels:
          - {label: oracle, value: scripted/arith-oracle}
          - {label: ltr, value: scripted/arith-left-to-right}
      - name: intervention
        binds_to: intervention
        levels: [none, distractor]
    """)


def _study(folder: Path, text: str = STUDY) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "study.yaml"
    path.write_text(text)
    return path


def _scores(log_dir: Path) -> pl.DataFrame:
    frame = study_frame(log_dir).filter(pl.col("score_key") == "exact_integer")
    return frame.select("cell_id", "task", "model", "intervention", "sample_id", "epoch",
                        "score_value").sort("cell_id", "sample_id", "epoch")


def test_spec_has_one_task_per_cell_logging_into_the_run(tmp_path: Path) -> None:
    path = _study(tmp_path / "s")
    spec = flow_spec(path, log_dir=tmp_path / "logs")
    cells = load_study(path).cells()
    assert spec["log_dir"] == str((tmp_path / "logs").resolve())
    assert [t["args"]["cell"] for t in spec["tasks"]] == [c.id for c in cells]
    assert {t["factory"] for t in spec["tasks"]} == {FLOW_TASK}
    assert [t["model"]["name"] for t in spec["tasks"]] == [c.model for c in cells]
    assert [t["flow_metadata"]["levels"] for t in spec["tasks"]] == [c.levels for c in cells]


def test_recipe_cells_are_refused_with_the_reason(tmp_path: Path) -> None:
    text = STUDY.replace("binds_to: intervention\n    levels: [none, distractor]",
                         "binds_to: model_args\n    key: recipe\n    levels: [tinylm]")
    path = _study(tmp_path / "s", text)
    with pytest.raises(StudyError, match="recipe"):
        flow_spec(path)


@pytest.mark.slow
def test_a_grid_run_by_flow_reads_as_the_suites_own_run(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Flow's in-process run of the emitted spec, then the suite's analysis input: equal to
    `harness study run` on the same study, cell for cell and item for item. Flow's
    requirements freeze is patched out: it shells out to `uv pip compile`, which asks the
    package index (this test must not touch the network)."""
    pytest.importorskip("inspect_flow", reason="Inspect Flow is optional: "
                        "pip install -e .[flow] to run the spec test")
    from inspect_flow._launcher import inproc
    from inspect_flow.api import load_spec, run

    monkeypatch.setattr(inproc, "write_flow_requirements", lambda *a, **k: None)
    path = _study(tmp_path / "s")
    ours = tmp_path / "ours"
    assert run_study(path, log_dir=ours).success

    out = write_flow_spec(path, tmp_path / "flow.yaml", log_dir=tmp_path / "flow_logs")
    assert yaml.safe_load(out.read_text())["tasks"][0]["factory"] == FLOW_TASK
    spec = load_spec(str(out))  # Flow's own validation of the file
    assert len(spec.tasks or []) == 4
    result = run(spec, base_dir=str(tmp_path))
    assert result.success
    flow_logs = tmp_path / "flow_logs"
    assert (flow_logs / "study.yaml").read_text() == path.read_text()
    theirs = _scores(flow_logs)
    assert theirs.height == 4 * 4
    assert "study_cell" not in str(set(theirs["task"].to_list()))  # the cell's own task
    assert theirs.equals(_scores(ours))
    # the suite's runner sees Flow's cells as done: nothing to run again
    assert run_study(path, log_dir=flow_logs).ran == []
