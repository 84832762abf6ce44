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

from harness.registry import declare, import_modules, model_wrapper

MODULES: tuple[str, ...] = (
    "methods.agents.bridged",  # agent: langgraph-react (Inspect's agent bridge)
    "methods.agents.memory_react",  # agents: react, react-memory
    "methods.bbo_merge.bbo_merge",  # recipes: bbo-merge, merge-ckpt
    "methods.brain_compression.compress",  # plain methods: compressed, full (torch lazily)
    "methods.cdat.energy",  # plain methods: cdat, transformer
    "methods.cocoedit.editor",  # plain methods: cocoedit, grpo-edit
    "methods.cpt_rewind.cpt_rewind",  # recipes: cpt, head-rewind
    "methods.editors.retrieval",  # editor: retrieval
    "methods.editors.simple",  # editors: none, ike
    "methods.esamp.esamp",  # whitebox method: esamp
    "methods.hfm.plain",  # plain methods: hfm, euclid-fm, proto
    "methods.hmh.filters",  # plain methods: hmh, chebnet, gcn
    "methods.kupbi.forecast",  # plain methods: kup-bi, dlinear
    "methods.lightwm.agent",  # agent: lightwm
    "methods.lightwm.policies",  # scripted/lightwm-*
    "methods.medversa.medrek",  # editor: medrek
    "methods.metamoe.routing",  # plain: metamoe, relevance-/random-proxies, uniform-ensemble
    "methods.polysae.sae",  # plain methods: polysae, topk-sae (torch imported lazily)
    "methods.procedural_pretraining.procedural",  # recipe: procedural-pretraining
    "methods.progressive_depth.progressive_depth",  # recipe: progressive-depth
    "methods.qkv_sharing.qkv_sharing",  # recipe: qkv-sharing
    "methods.rl_pmd.rl_pmd",  # recipes: arith-sft, rl
    "methods.rubik_hmm.heuristic",  # plain methods: hmm-soft, scramble-depth
    "methods.scout.recipe",  # recipes: scout-sft, scout-sft-ladder
    "methods.sika_gp.gps",  # plain methods: sika, gp-inducing, gp-exact
    "methods.t2i_concepts.concepts",  # plain methods: attn-concepts, bottleneck-concepts
    "methods.tabpe.aim",  # plain method: aim
    "methods.tabpe.synth",  # plain methods: tab-pe, marginals
    "methods.tfface.predict",  # plain methods: tf-face, gru, constant-velocity
    "methods.thetaevolve.thetaevolve",  # agent: thetaevolve
    "methods.tpg.estimators",  # plain methods: tpg, dim
    "methods.treca.rules",  # plain methods: treca, treca-plugin
    "methods.ucast.forecast",  # plain methods: u-cast, mae-only, persistence
    "methods.udm.plain",  # plain methods: udm-grpo, naive-grpo
    "methods.vfm.plain",  # plain methods: vfm, vfm-frozen, guided
    "methods.vipo.offline",  # plain methods: vipo, mopo (torch imported lazily)
)
"""The registering modules, each imported on its own (a broken one hides only itself
and ``harness list`` shows it); a new module that registers anything is one line here."""

import_modules(MODULES)

declare("whitebox_method", "xkv", "methods.xkv.xkv:XKV", extra="cpu",
        summary="cross-layer SVD of the prefill KV cache (whitebox/ -M method=xkv)")
declare("whitebox_method", "arborkv", "methods.arborkv.arbor:ArborKV", extra="cpu",
        summary="tree-of-thoughts decoding with per-node KV under an eviction budget")
declare("whitebox_method", "scd", "methods.scd.scd:SCD", extra="cpu",
        summary="producer KV codes rebuilt by a fine-tuned consumer (reuse + patch layers)")


@modelapi(name="mvrcache")
def mvrcache() -> type[ModelAPI]:
    """MVR-cache: a multi-vector semantic cache in front of any model (mvrcache/<model>)."""
    from methods.mvrcache.mvrcache import MVRCacheAPI

    return MVRCacheAPI


model_wrapper("mvr-cache", mvrcache, extra="cpu", api="mvrcache/<provider>/<model>",
              summary="Multi-vector semantic cache: mvrcache/<model> -M delta=0.1")
