"""HFM: path-decoupled hyperbolic flow matching vs Euclidean flow matching for few-shot
classification by transport to text roots.

Li, Jiang, Ye, He, Li, Xiao, Cheng and Chen, "Path-Decoupled Hyperbolic Flow Matching for
Few-Shot Adaptation" (ICML 2026), arXiv:2602.20479. Each sample is a cell (seed, shots): a
5-way episode on the novel digit classes 5-9 of sklearn's 8x8 digits (``environments/hfm``),
in the feature space of a small MLP trained on the base classes 0-4 and aligned there to
the text roots (MiniLM sentence embeddings of "a handwritten digit <name>", from
``harness.models.minilm``); ``shots`` support images per class, every other novel image a
query. A method sees the support set, the queries and the roots and returns a class per
query; scored by query accuracy.

    inspect eval harness/hfm --model none
    inspect eval harness/hfm --model none -T n_seeds=10 -T shots=1,4,16
    inspect eval harness/hfm --model none -T method=proto -T baseline=euclid-fm
    harness method tasks --by shots --keys accuracy logs/
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.hfm import CLASS_NAMES, make_episode
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 10
DEFAULT_SHOTS = "1,4,16"
DEFAULT_METHOD = "hfm"
DEFAULT_BASELINE = "euclid-fm"
DEFAULT_SEED = 100  # seeds 0-3 were used while writing the methods; the report uses others
PROMPT = "a handwritten digit {}"
FAMILY = "fewshot_transport"
VERSION = "1.0.0"


@lru_cache(maxsize=1)
def text_roots() -> np.ndarray:
    """The ten class names' MiniLM embeddings ``(10, 384)``, in digit order."""
    from harness.models.minilm import MiniLM

    return np.asarray(MiniLM.load().encode([PROMPT.format(n) for n in CLASS_NAMES]),
                      dtype=np.float64)


class FewShotProblem:
    """Cells are (seed, shots); the truth is the episode (query labels)."""

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        ep = make_episode(int(cell["seed"]), int(cell["shots"]), text_roots())
        return {"support_x": ep.support_x, "support_y": ep.support_y,
                "query_x": ep.query_x, "roots": ep.roots}, ep

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        pred = np.asarray(outputs["pred"], dtype=np.int64)
        acc = float((pred == truth.query_y).mean())
        zero = ((truth.query_x[:, None, :] - truth.roots[None, :, :]) ** 2).sum(axis=2)
        per_class = [float((pred[truth.query_y == c] == c).mean())
                     for c in range(len(truth.roots))]
        return {"loss": 1.0 - acc, "accuracy": acc, "worst_class_accuracy": min(per_class),
                "zero_shot_accuracy": float((zero.argmin(axis=1) == truth.query_y).mean()),
                "nfe": float(outputs["nfe"]), "steps_taken": float(outputs["steps_taken"])}


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 100, "shots": 4}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"]), "shots": int(record["shots"])})


def _ints(values: int | str | list[Any] | tuple[Any, ...]) -> list[int]:
    if isinstance(values, int):
        return [values]
    if isinstance(values, str):
        return [int(v) for v in values.split(",") if v.strip()]
    return [int(v) for v in values]


@benchmark("hfm")
@task
def hfm(
    n_seeds: int = DEFAULT_N_SEEDS,
    shots: int | str | list[int] = DEFAULT_SHOTS,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    train_steps: int = 400,
    steps: int = 8,
    step_weight: float = 0.1,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """HFM vs Euclidean flow matching: few-shot accuracy on novel digit classes.

    Args:
        n_seeds: Episodes per shot count.
        shots: Support images per class (comma-separated for several).
        method: The plain method scored (``hfm``, ``euclid-fm`` or ``proto``).
        baseline: Run on the same episode too (or ``none``).
        seed: First episode's seed.
        train_steps: Adam updates of either flow (the same for both).
        steps: Integration steps at inference (and HFM's unrolled supervision).
        step_weight: Weight of HFM's step-wise (path-decoupling) term.
        scale: Multiplies ``train_steps`` (the training-size factor shared by method tasks).
        sandbox: ``bwrap`` to run the methods in the bubblewrap sandbox.
    """
    records = [{"seed": seed + i, "shots": k} for k in _ints(shots) for i in range(n_seeds)]
    config = {"train_steps": max(int(round(train_steps * scale)), 10), "steps": steps,
              "step_weight": step_weight}
    return method_task(
        name="hfm", family=FAMILY, problem=FewShotProblem(),
        samples=[record_to_sample(r) for r in records], method=method, baseline=baseline,
        version=VERSION, config=config, baseline_config=config, sandbox=sandbox,
        metadata={"paper": "2602.20479"},
    )
