"""Every method this package ships, registered with the suite (the ``evalsuite`` and
``inspect_ai`` entry points of ``methods``).

Each import below runs the module's own decorators (``@agent_method``, ``@editor``,
``@whitebox_method``, ``@scripted_policy``). Modules that import torch at module level are
declared by import path instead, so ``harness list`` and every ``inspect eval`` stay light
and work without the ``cpu`` extra; their classes load on first use. Adding a method is one
module with one decorator, plus one line here.
"""

from __future__ import annotations

from inspect_ai.model import ModelAPI, modelapi

import methods.agents.lightwm.agent  # noqa: F401  (agent: lightwm)
import methods.agents.lightwm_policies  # noqa: F401  (scripted/lightwm-*)
import methods.agents.memory_react  # noqa: F401  (agents: react, react-memory)
import methods.agents.thetaevolve  # noqa: F401  (agent: thetaevolve)
import methods.cdat.energy  # noqa: F401  (plain methods: cdat, transformer)
import methods.editors.medrek  # noqa: F401  (editor: medrek)
import methods.editors.retrieval  # noqa: F401  (editor: retrieval)
import methods.editors.simple  # noqa: F401  (editors: none, ike)
import methods.hmh.filters  # noqa: F401  (plain methods: hmh, chebnet, gcn)
import methods.kupbi.forecast  # noqa: F401  (plain methods: kup-bi, dlinear)
import methods.models.esamp  # noqa: F401  (whitebox method: esamp)
import methods.recipes.bbo_merge  # noqa: F401  (recipes: bbo-merge, merge-ckpt)
import methods.recipes.cpt_rewind  # noqa: F401  (recipes: cpt, head-rewind)
import methods.recipes.procedural  # noqa: F401  (recipe: procedural-pretraining)
import methods.recipes.progressive_depth  # noqa: F401  (recipe: progressive-depth)
import methods.recipes.qkv_sharing  # noqa: F401  (recipe: qkv-sharing)
import methods.recipes.rl_pmd  # noqa: F401  (recipes: arith-sft, rl)
import methods.scout.recipe  # noqa: F401  (recipes: scout-sft, scout-sft-ladder)
import methods.sika_gp.gps  # noqa: F401  (plain methods: sika, gp-inducing, gp-exact)
import methods.tabpe.synth  # noqa: F401  (plain methods: tab-pe, marginals)
import methods.tfface.predict  # noqa: F401  (plain methods: tf-face, gru, constant-velocity)
import methods.tpg.estimators  # noqa: F401  (plain methods: tpg, dim)
import methods.treca.rules  # noqa: F401  (plain methods: treca, treca-plugin)
import methods.ucast.forecast  # noqa: F401  (plain methods: u-cast, mae-only, persistence)
import methods.udm.plain  # noqa: F401  (plain methods: udm-grpo, naive-grpo)
from harness.registry import declare, register

declare("whitebox_method", "xkv", "methods.kv.xkv:XKV", extra="cpu",
        summary="cross-layer SVD of the prefill KV cache (whitebox/ -M method=xkv)")
declare("whitebox_method", "arborkv", "methods.kv.arbor:ArborKV", extra="cpu",
        summary="tree-of-thoughts decoding with per-node KV under an eviction budget")
declare("whitebox_method", "scd", "methods.kv.scd:SCD", extra="cpu",
        summary="producer KV codes rebuilt by a fine-tuned consumer (reuse + patch layers)")


@modelapi(name="mvrcache")
def mvrcache() -> type[ModelAPI]:
    """MVR-cache: a multi-vector semantic cache in front of any model (mvrcache/<model>)."""
    from methods.models.mvrcache import MVRCacheAPI

    return MVRCacheAPI


register("model", "mvr-cache", mvrcache, extra="cpu", api="mvrcache/<provider>/<model>",
         summary="Multi-vector semantic cache: mvrcache/<model> -M delta=0.1")
