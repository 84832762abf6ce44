"""T2I concept vectors: learned vectors added to the multi-modal attention heads of a tiny
joint-attention (MM-DiT-style) generator vs at its bottleneck, on biased captioned shapes.

The paper (responsible T2I diffusion; abstract in ``shared/papers``, code
github.com/Moslem-Sh21/responsible-t2i-diffusion): "multi-modal attention heads in
ViT-based DMs exhibit a linear semantic structure: injected concept vectors combine
linearly at the attention level and induce near-linear effects at the model output,
satisfying homogeneity and additivity ... significantly improved fairness while
preserving visual fidelity". Each sample is a cell (seed): a generator trained on 3,000
seeded captioned images (``environments/t2i_concepts``: a red or blue, small or large
square or disk; captions that leave colour or size out show red and small 90% of the
time), two concept vectors (blue, large) learned on the frozen generator, and 128
generations from neutral captions and fixed noise per scale. Both methods train the same
generator (same seed) and are scored on the same prompts and noise: attribute success,
balance (the vector applied to half of the prompts), off-target change, homogeneity
(R^2 of the output change against scale x the change at scale 1), additivity (relative
error of the change under the summed vectors against the sum of changes) and joint
success under the summed vectors.

    inspect eval harness/t2i_concepts --model none
    python -m harness.method_tasks --keys success_blue,balance,homogeneity,additivity_err logs/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.t2i_concepts import attributes, make_captioned, neutral_prompts
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 6
DEFAULT_N_TRAIN = 3000
DEFAULT_N_PROMPTS = 128
DEFAULT_BIAS = 0.9
DEFAULT_METHOD = "attn-concepts"
DEFAULT_BASELINE = "bottleneck-concepts"
DEFAULT_SEED = 100  # seed 0 was used while writing the methods; the report uses others
SCALES = (0.5, 1.0, 1.5, 2.0)
FAMILY = "t2i_concepts"
VERSION = "1.0.0"


def homogeneity(base: np.ndarray, by_scale: Mapping[float, np.ndarray]) -> float:
    """R^2 of the output changes ``G(s v) - G(0)`` against ``s (G(v) - G(0))`` over the
    scales other than 1 (1 = exactly homogeneous)."""
    unit = by_scale[1.0] - base
    resid = sum(float((((by_scale[s] - base) - s * unit) ** 2).sum())
                for s in by_scale if s != 1.0)
    total = sum(float(((by_scale[s] - base) ** 2).sum()) for s in by_scale if s != 1.0)
    return 1.0 - resid / max(total, 1e-12)


def additivity_error(base: np.ndarray, a: np.ndarray, b: np.ndarray, both: np.ndarray) -> float:
    """``||G(v_a + v_b) - G(0) - (G(v_a) - G(0)) - (G(v_b) - G(0))|| / ||G(v_a + v_b) - G(0)||``
    (0 = exactly additive)."""
    joint = both - base
    return float(np.linalg.norm(joint - (a - base) - (b - base)) /
                 max(float(np.linalg.norm(joint)), 1e-12))


class ConceptProblem:
    """Cells are (seed,); the truth is nothing hidden but the attribute reader (exact)."""

    def __init__(self, n_train: int = DEFAULT_N_TRAIN, n_prompts: int = DEFAULT_N_PROMPTS,
                 bias: float = DEFAULT_BIAS) -> None:
        self.n_train, self.n_prompts, self.bias = n_train, n_prompts, bias

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        seed = int(cell["seed"])
        train = make_captioned(self.n_train, seed=2 * seed + 1, bias=self.bias)
        rng = np.random.default_rng(2 * seed + 2)
        inputs = {"images": train.images, "captions": train.captions, "blue": train.colour,
                  "large": train.large, "prompts": neutral_prompts(self.n_prompts, 2 * seed + 2),
                  "noise": rng.standard_normal((self.n_prompts, *train.images.shape[1:]))}
        return inputs, None

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        gen = {k: np.asarray(v, dtype=float) for k, v in outputs.items()
               if k == "base" or "@" in k}
        attrs = {k: attributes(v) for k, v in gen.items()}
        blue, large = attrs["blue@1"], attrs["large@1"]
        base = attrs["base"]
        both = attrs["both@1"]
        p_half = (base[0].mean() + blue[0].mean()) / 2  # the vector on half of the prompts
        add = additivity_error(gen["base"], gen["blue@1"], gen["large@1"], gen["both@1"])
        return {
            "success_blue": float(blue[0].mean()), "success_large": float(large[1].mean()),
            "base_blue": float(base[0].mean()), "base_large": float(base[1].mean()),
            "balance": float(1.0 - 2.0 * abs(p_half - 0.5)),
            "off_target": float(abs(blue[1].mean() - base[1].mean())),
            "visible": float(blue[2].mean()),
            "homogeneity": homogeneity(gen["base"], {s: gen[f"blue@{s:g}"] for s in SCALES}),
            "additivity_err": add, "loss": add,
            "joint_success": float((both[0] * both[1]).mean()),
            "vector_size": float(outputs.get("vector_size", 0)),
        }


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 100}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"])})


@benchmark("t2i_concepts")
@task
def t2i_concepts(
    n_seeds: int = DEFAULT_N_SEEDS,
    n_train: int = DEFAULT_N_TRAIN,
    n_prompts: int = DEFAULT_N_PROMPTS,
    bias: float = DEFAULT_BIAS,
    gen_steps: int = 600,
    concept_steps: int = 150,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """Concept vectors in attention heads vs at a bottleneck: linearity and fairness.

    Args:
        n_seeds: Independent cells (data, generator and concept seeds).
        n_train: Captioned training images.
        n_prompts: Neutral prompts generated per scale (with fixed noise).
        bias: Share of red (and of small) among images whose caption leaves it out.
        gen_steps: The generator's Adam steps.
        concept_steps: Each concept vector's Adam steps (both methods).
        method: The plain method scored (``attn-concepts`` or ``bottleneck-concepts``).
        baseline: Run on the same cell too (or ``none``).
        seed: First cell's seed.
        scale: Multiplies ``gen_steps`` (the training-size factor shared by method tasks).
        sandbox: ``bwrap`` to run the methods in the bubblewrap sandbox.
    """
    config = {"gen_steps": max(int(round(gen_steps * scale)), 1),
              "concept_steps": concept_steps}
    return method_task(
        name="t2i_concepts", family=FAMILY, problem=ConceptProblem(n_train, n_prompts, bias),
        samples=[record_to_sample({"seed": seed + i}) for i in range(n_seeds)],
        method=method, baseline=baseline, version=VERSION, config=config,
        baseline_config=config, sandbox=sandbox,
        metadata={"paper": "https://github.com/Moslem-Sh21/responsible-t2i-diffusion"},
    )
