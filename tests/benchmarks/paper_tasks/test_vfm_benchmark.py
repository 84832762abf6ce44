"""The VFM method task: the scoring separates exact posterior draws from prior draws, ids
are stable, and a tiny eval runs end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.vfm import vfm as vfm_module
from environments.vfm import posterior, sample_posterior
from harness.method_tasks import summarise


def test_energy_distance_is_zero_on_itself_and_grows_with_shift() -> None:
    x = np.random.default_rng(0).standard_normal((200, 2))
    assert abs(vfm_module.energy_distance(x, x)) < 1e-12
    assert vfm_module.energy_distance(x, x + 1.0) > vfm_module.energy_distance(x, x + 0.3) > 0


def test_scores_tell_exact_posterior_from_prior() -> None:
    problem = vfm_module.PosteriorProblem(n_obs=24, n_train=500)
    cell = {"seed": 1, "kind": "project"}
    _, truth = problem.prepare(cell)
    post = posterior(truth.prior, truth.a, truth.sigma, truth.y)
    rng = np.random.default_rng(5)
    exact = problem.score({"samples": sample_posterior(post, 256, rng), "nfe": 0}, truth, cell)
    prior = problem.score({"samples": truth.prior.sample(24 * 256, rng).reshape(24, 256, 2),
                           "nfe": 0}, truth, cell)
    assert exact["energy"] < 3 * exact["energy_exact"] + 0.01 < prior["energy"]
    assert exact["mode_tv"] < 0.1 < prior["mode_tv"]
    assert exact["coverage90"] > 0.75 and exact["fit_rmse"] < 0.2 < prior["fit_rmse"]


def test_ids_and_kinds() -> None:
    assert vfm_module.record_to_sample({"seed": 100, "kind": "inpaint"}).id == \
        "seed=100,kind=inpaint"
    task = vfm_module.vfm(n_seeds=2, kinds="project,inpaint")
    assert [s.id for s in task.dataset] == ["seed=100,kind=project", "seed=100,kind=inpaint",
                                            "seed=101,kind=project", "seed=101,kind=inpaint"]


@pytest.mark.slow
def test_vfm_runs_with_model_none(tmp_path: Path) -> None:
    task = vfm_module.vfm(n_seeds=2, n_obs=8, n_train=1000, adapter_steps=200, guided_steps=4,
                          teacher_steps=300, distill_steps=200)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"energy", "coverage90", "nfe", "mode_tv"} <= set(rows)
    assert rows["nfe"]["method"][0] == 1.0 and rows["nfe"]["baseline"][0] == 4.0
