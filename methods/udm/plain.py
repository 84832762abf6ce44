"""UDM-GRPO and naive per-step GRPO as plain methods of the ``udm_strings`` method task.

Registering imports no torch (``harness list`` stays light); the run loads
:mod:`methods.udm.train` on first use. Inputs: ``vocab``, ``length``, ``corpus`` (pretraining
strings as token lists), ``constraints`` (the reward's data). Config: any
:class:`methods.udm.train.UDMConfig` option but ``algo`` (fixed by the method), and
``cache_dir``. Outputs: ``samples`` (``n_eval`` final strings after RL), ``samples_before``
(the same evaluation sampler on the pretrained model), the training curve's stability
summary (:func:`methods.udm.train.stability`), the last probe KL to the pretrained model and
CPU seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.plugins.plain_method import plain_method

__all__ = ["FAMILY", "naive_grpo", "udm_grpo"]

FAMILY = "udm_strings"


def _run(algo: str, inputs: Mapping[str, Any], config: Mapping[str, Any],
         seed: int) -> dict[str, Any]:
    from methods.udm.train import run, stability

    if "algo" in config and config["algo"] != algo:
        raise ValueError(f"method {algo} was given algo={config['algo']!r}")
    out = run(inputs, {**config, "algo": algo}, seed)
    curve = out["curve"]
    kls = [row["kl_ref"] for row in curve if "kl_ref" in row]
    return {"samples": out["samples"], "samples_before": out["samples_before"],
            **{f"train_{k}": v for k, v in stability(curve).items()},
            "kl_ref_last": kls[-1] if kls else 0.0,
            "kl_ref_max": max(kls) if kls else 0.0,
            "grad_norm_max": max((row["grad_norm"] for row in curve), default=0.0),
            "cpu_s": out["pretrain_cpu_s"] + out["train_cpu_s"] + out["eval_cpu_s"],
            "train_cpu_s": out["train_cpu_s"]}


@plain_method("udm-grpo", family=FAMILY, extra="cpu")
def udm_grpo(inputs: Mapping[str, Any], config: Mapping[str, Any],
             seed: int) -> dict[str, Any]:
    """UDM-GRPO: the final sample is the action, its likelihood from forward re-noising."""
    return _run("udm", inputs, config, seed)


@plain_method("naive-grpo", family=FAMILY, role="baseline", extra="cpu")
def naive_grpo(inputs: Mapping[str, Any], config: Mapping[str, Any],
               seed: int) -> dict[str, Any]:
    """Naive GRPO: every denoising step of the sampled trajectory is an action."""
    return _run("naive", inputs, config, seed)
