"""VFM: one-step posterior sampling with a noise adapter trained jointly with the flow map,
against a guided multi-step rectified-flow sampler, on a 2-D mixture with exact posterior.

Mammadov, Takao, Chen, Baptista, Mardani, Teh and Berner, "Variational Flow Maps: Make Some
Noise for One-Step Conditional Generation" (ICML 2026), arXiv:2603.07276. Each sample is a
cell (seed, kind): a seeded 2-D Gaussian-mixture prior (``environments/vfm``), 4,000 prior
draws to learn it from, a noisy linear measurement (``project``: a random direction;
``inpaint``: the first coordinate) and 32 observations with hidden truths. A method sees
the draws, the operator, the noise level and the observations, and returns 256 posterior
draws per observation; it is scored against the exact posterior: energy distance, the mass
it puts on each mixture mode (total variation to the exact mode weights), coordinate-wise
90% interval coverage of the truth, and network evaluations per draw (NFE).

    inspect eval harness/vfm --model none
    inspect eval harness/vfm --model none -T n_seeds=20 -T kinds=project,inpaint
    inspect eval harness/vfm --model none -T method=vfm-frozen -T baseline=vfm
    harness method tasks --keys energy,mode_tv,coverage90,nfe logs/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.vfm import make_inverse_problem, posterior, sample_posterior
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 10
DEFAULT_KINDS = "project"
DEFAULT_METHOD = "vfm"
DEFAULT_BASELINE = "guided"
DEFAULT_SEED = 100  # seeds 0-3 were used while writing the methods; the report uses others
DEFAULT_N_OBS = 32
DEFAULT_N_TRAIN = 4000
DEFAULT_SIGMA = 0.1
DEFAULT_GUIDED_STEPS = 32
N_EXACT = 256
FAMILY = "vfm_posterior"
VERSION = "1.0.0"


def energy_distance(a: np.ndarray, b: np.ndarray) -> float:
    """``2 E|X-Y| - E|X-X'| - E|Y-Y'|`` between two samples (V-statistic; 0 iff equal laws
    in the limit)."""
    def mean_dist(p: np.ndarray, q: np.ndarray) -> float:
        return float(np.sqrt(((p[:, None, :] - q[None, :, :]) ** 2).sum(axis=-1)).mean())

    return 2 * mean_dist(a, b) - mean_dist(a, a) - mean_dist(b, b)


def mode_masses(samples: np.ndarray, weights: np.ndarray, means: np.ndarray,
                cov: np.ndarray) -> np.ndarray:
    """Per observation, the share of ``samples`` ``(n_obs, n, 2)`` whose most responsible
    posterior component is each ``k``: ``(n_obs, K)``."""
    prec = np.linalg.inv(cov)
    diff = samples[:, :, None, :] - means[:, None, :, :]
    logp = np.log(np.maximum(weights, 1e-300))[:, None, :] - 0.5 * np.einsum(
        "onki,ij,onkj->onk", diff, prec, diff)
    best = logp.argmax(axis=2)
    k = weights.shape[1]
    return (best[:, :, None] == np.arange(k)[None, None, :]).mean(axis=1)


class PosteriorProblem:
    """Cells are (seed, kind); the truth is the inverse problem and its exact posterior."""

    def __init__(self, n_obs: int = DEFAULT_N_OBS, n_train: int = DEFAULT_N_TRAIN,
                 sigma: float = DEFAULT_SIGMA) -> None:
        self.n_obs, self.n_train, self.sigma = n_obs, n_train, sigma

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        p = make_inverse_problem(int(cell["seed"]), n_train=self.n_train, n_obs=self.n_obs,
                                 sigma=self.sigma, kind=str(cell["kind"]))
        return {"x_train": p.x_train, "a": p.a, "sigma": p.sigma, "y": p.y}, p

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        samples = np.asarray(outputs["samples"], dtype=float)
        post = posterior(truth.prior, truth.a, truth.sigma, truth.y)
        rng = np.random.default_rng([int(cell["seed"]), 7])
        exact = sample_posterior(post, N_EXACT, rng)
        exact2 = sample_posterior(post, N_EXACT, rng)
        energy = np.mean([energy_distance(samples[i], exact[i]) for i in range(len(exact))])
        floor = np.mean([energy_distance(exact2[i], exact[i]) for i in range(len(exact))])
        tv = 0.5 * np.abs(mode_masses(samples, post.weights, post.means, post.cov)
                          - post.weights).sum(axis=1)
        lo, hi = np.quantile(samples, [0.05, 0.95], axis=1)
        cover = ((truth.x_true >= lo) & (truth.x_true <= hi)).mean()
        resid = samples @ truth.a.T - truth.y[:, None, :]
        out = {
            "loss": float(energy), "energy": float(energy), "energy_exact": float(floor),
            "mode_tv": float(tv.mean()), "coverage90": float(cover),
            "calibration_error": float(abs(cover - 0.9)),
            "fit_rmse": float(np.sqrt((resid**2).sum(axis=2).mean())),
            "nfe": float(outputs["nfe"]),
        }
        if "map_prior_rmse" in outputs:
            out["map_prior_rmse"] = float(outputs["map_prior_rmse"])
        return out


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 100, "kind": "project"}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"]), "kind": str(record["kind"])})


def _kinds(kinds: str | list[str] | tuple[str, ...]) -> list[str]:
    if isinstance(kinds, str):
        return [k.strip() for k in kinds.split(",") if k.strip()]
    return [str(k) for k in kinds]


@benchmark("vfm")
@task
def vfm(
    n_seeds: int = DEFAULT_N_SEEDS,
    kinds: str | list[str] = DEFAULT_KINDS,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    n_obs: int = DEFAULT_N_OBS,
    n_train: int = DEFAULT_N_TRAIN,
    sigma: float = DEFAULT_SIGMA,
    guided_steps: int = DEFAULT_GUIDED_STEPS,
    adapter_steps: int = 1500,
    teacher_steps: int = 1500,
    distill_steps: int = 1200,
    lam: float = 1.0,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """VFM vs a guided multi-step sampler: posterior quality per network evaluation.

    Args:
        n_seeds: Priors (and problems) per kind.
        kinds: Measurements: ``project`` (a random direction), ``inpaint`` (first coordinate).
        method: The plain method scored (``vfm``, ``vfm-frozen`` or ``guided``).
        baseline: Run on the same cell too (or ``none``).
        seed: First cell's seed.
        n_obs: Observations per cell.
        n_train: Prior draws the methods learn from.
        sigma: Measurement noise.
        guided_steps: Euler steps (= NFE) of the guided sampler.
        adapter_steps: Adam steps of the noise adapter (VFM's variational stage).
        teacher_steps: Adam steps of the rectified-flow teacher (every method's).
        distill_steps: Adam steps distilling the one-step flow map (the adapters').
        lam: Weight of the flow-map term in VFM's joint objective.
        scale: Multiplies ``n_train`` (the data-size factor shared by method tasks).
        sandbox: ``bwrap`` to run the methods in the bubblewrap sandbox.
    """
    records = [{"seed": seed + i, "kind": k} for i in range(n_seeds) for k in _kinds(kinds)]
    config = {"guided_steps": guided_steps, "adapter_steps": adapter_steps, "lam": lam,
              "teacher_steps": teacher_steps, "distill_steps": distill_steps}
    problem = PosteriorProblem(n_obs=n_obs, n_train=max(int(round(n_train * scale)), 200),
                               sigma=sigma)
    return method_task(
        name="vfm", family=FAMILY, problem=problem,
        samples=[record_to_sample(r) for r in records], method=method, baseline=baseline,
        version=VERSION, config=config, baseline_config=config, sandbox=sandbox,
        metadata={"paper": "2603.07276"},
    )
