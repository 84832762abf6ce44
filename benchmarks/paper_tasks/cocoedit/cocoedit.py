"""CoCoEdit: region-regularised RL for content-consistent image editing, against GRPO on a
spatially agnostic edit-success reward, on seeded recolouring scenes.

CoCoEdit ("Content-Consistent Editing" by region regularised reinforcement learning; the
abstract is in ``shared/papers``, code github.com/langmanbusi/CoCoEdit): "existing models
mainly focus on the editing effects of intended objects and regions, often leading to
unwanted changes in unintended regions ... we introduce a pixel-level similarity reward ...
[and] a region-based regularizer". Each sample is a cell (seed): seeded scenes from
``environments/cocoedit`` (an object on a smooth background and a "make the <shape>
<colour>" instruction with its region), 2,000 leaky pre-training pairs (the ideal edit plus
a global tint toward the new colour), 512 RL instructions with their masks and 200 test
instructions without. Both methods start from the same pre-trained editor (same seed) and
are scored on the test edits: edit success (the region's mean colour within 0.15 of the
requested colour), PSNR outside the region against the source (content consistency, the
paper's metric), PSNR inside the region against the ideal edit.

    inspect eval harness/cocoedit --model none
    inspect eval harness/cocoedit --model none -T n_seeds=3 -T rl_steps=150
    python -m harness.method_tasks --keys edit_success,psnr_out,psnr_out_success logs/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.cocoedit import leaky_targets, make_edit_set
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 10
DEFAULT_N_PRETRAIN = 2000
DEFAULT_N_RL = 512
DEFAULT_N_TEST = 200
DEFAULT_LEAK = 0.35
DEFAULT_METHOD = "cocoedit"
DEFAULT_BASELINE = "grpo-edit"
DEFAULT_SEED = 100  # seed 0 was used while writing the methods; the report uses others
SUCCESS_TOL = 0.15
FAMILY = "region_editing"
VERSION = "1.0.0"


def edit_scores(edited: np.ndarray, source: np.ndarray, target: np.ndarray, mask: np.ndarray,
                colour: np.ndarray) -> dict[str, np.ndarray]:
    """Per edit: success (region mean colour within :data:`SUCCESS_TOL` of the requested
    colour), PSNR outside the region vs the source, PSNR inside vs the ideal edit, and the
    outside-region RMSE (peak 1, MSE floored at 1e-6 so PSNR is at most 60 dB)."""
    m = mask[:, None]
    out = 1.0 - m

    def mse(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.maximum(((a - b) ** 2 * w).sum(axis=(1, 2, 3)) / (3 * w.sum(axis=(1, 2, 3))),
                          1e-6)

    mse_out = mse(edited, source, out)
    region_colour = (edited * m).sum(axis=(2, 3)) / m.sum(axis=(2, 3))
    return {
        "success": (np.linalg.norm(region_colour - colour, axis=1) < SUCCESS_TOL).astype(float),
        "psnr_out": -10 * np.log10(mse_out),
        "psnr_in": -10 * np.log10(mse(edited, target, np.broadcast_to(m, edited.shape))),
        "rmse_out": np.sqrt(mse_out),
    }


class EditProblem:
    """Cells are (seed,); the truth is the test scenes with their regions and ideal edits."""

    def __init__(self, n_pretrain: int = DEFAULT_N_PRETRAIN, n_rl: int = DEFAULT_N_RL,
                 n_test: int = DEFAULT_N_TEST, leak: float = DEFAULT_LEAK) -> None:
        self.n_pretrain, self.n_rl, self.n_test, self.leak = n_pretrain, n_rl, n_test, leak

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        seed = int(cell["seed"])
        pre = make_edit_set(self.n_pretrain, seed=3 * seed + 1)
        rl = make_edit_set(self.n_rl, seed=3 * seed + 2)
        test = make_edit_set(self.n_test, seed=3 * seed + 3)
        inputs = {
            "pretrain": {"source": pre.source, "instruction": pre.instruction,
                         "target": leaky_targets(pre, self.leak)},
            "rl": {"source": rl.source, "instruction": rl.instruction, "mask": rl.mask,
                   "colour": rl.colour},
            "test": {"source": test.source, "instruction": test.instruction},
        }
        return inputs, test

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        values: dict[str, float] = {}
        for prefix, key in (("", "edited"), ("pre_", "pretrained")):
            s = edit_scores(np.asarray(outputs[key], dtype=float), truth.source, truth.target,
                            truth.mask, truth.colour)
            ok = s["success"] > 0
            values.update({
                f"{prefix}edit_success": float(s["success"].mean()),
                f"{prefix}psnr_out": float(s["psnr_out"].mean()),
                f"{prefix}psnr_in": float(s["psnr_in"].mean()),
                f"{prefix}rmse_out": float(s["rmse_out"].mean()),
            })
            if ok.any():
                values[f"{prefix}psnr_out_success"] = float(s["psnr_out"][ok].mean())
        values["loss"] = values["rmse_out"]
        return values


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 100}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"])})


@benchmark("cocoedit")
@task
def cocoedit(
    n_seeds: int = DEFAULT_N_SEEDS,
    n_pretrain: int = DEFAULT_N_PRETRAIN,
    n_rl: int = DEFAULT_N_RL,
    n_test: int = DEFAULT_N_TEST,
    leak: float = DEFAULT_LEAK,
    pretrain_steps: int = 400,
    rl_steps: int = 300,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """CoCoEdit vs GRPO on an edit-success reward: content consistency at equal success.

    Args:
        n_seeds: Independent cells (data and training seeds).
        n_pretrain: Leaky pre-training pairs.
        n_rl: RL instructions (with their masks).
        n_test: Test instructions (scored).
        leak: The pre-training targets' global tint toward the new colour (0 = none).
        pretrain_steps: Supervised steps of the off-the-shelf editor.
        rl_steps: GRPO steps (both methods).
        method: The plain method scored (``cocoedit`` or ``grpo-edit``).
        baseline: Run on the same cell too (or ``none``).
        seed: First cell's seed.
        scale: Multiplies ``rl_steps`` (the training-size factor shared by method tasks).
        sandbox: ``bwrap`` to run the methods in the bubblewrap sandbox.
    """
    config = {"pretrain_steps": pretrain_steps,
              "rl_steps": max(int(round(rl_steps * scale)), 1)}
    return method_task(
        name="cocoedit", family=FAMILY,
        problem=EditProblem(n_pretrain, n_rl, n_test, leak),
        samples=[record_to_sample({"seed": seed + i}) for i in range(n_seeds)],
        method=method, baseline=baseline, version=VERSION, config=config,
        baseline_config=config, sandbox=sandbox, metadata={"paper": "https://github.com/langmanbusi/CoCoEdit"},
    )
