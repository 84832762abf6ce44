"""Old homes of moved method modules: one table, read by every lookup that takes a path.

Why: a paper has one folder name in every layer (issue 45), so per-paper modules left the
kind folders (``methods/kv/xkv.py`` is now ``methods/xkv/xkv.py``). Committed Inspect logs,
study files, recorded report commands and users' shell history still name the old homes,
as a file path (``methods/agents/lightwm/agent.py@lightwm``), an import path
(``methods.kv.xkv:XKV``) or a ``python -m`` module. Every harness lookup that resolves such a
spec (a study cell's task and solver, a declared plug-in, a scripted policy's module, a
recorded report command) passes it through :func:`resolve` first: an old name becomes the
new one with a one-line deprecation note. No re-export module stays behind in a kind
folder: the kind folders hold shared machinery only.

The table maps modules and packages (dotted); a package entry covers everything below it.
Adding a move is one line here.
"""

from __future__ import annotations

import re
import warnings

__all__ = ["MOVED", "MovedPathWarning", "new_module", "resolve"]

MOVED: dict[str, str] = {
    # xKV (cross-layer SVD, its selective reconstruction and the CKA probe it rests on)
    "methods.kv.xkv": "methods.xkv.xkv",
    "methods.kv.sr": "methods.xkv.sr",
    "methods.kv.cka": "methods.xkv.cka",
    # ArborKV
    "methods.kv.arbor": "methods.arborkv.arbor",
    # SCD (Semantic Cache Distillation)
    "methods.kv.scd": "methods.scd.scd",
    "methods.kv.scd_compare": "methods.scd.scd_compare",
    "methods.kv.scd_predictor": "methods.scd.scd_predictor",
    "methods.kv.consumer": "methods.scd.consumer",
    # ThetaEvolve (and its test-time RL)
    "methods.agents.thetaevolve": "methods.thetaevolve.thetaevolve",
    "methods.agents.evolve": "methods.thetaevolve.evolve",
    "methods.rl.ttrl": "methods.thetaevolve.ttrl",
    "methods.rl.ttrl_transfer": "methods.thetaevolve.ttrl_transfer",
    # LightWM
    "methods.agents.lightwm": "methods.lightwm",
    "methods.agents.lightwm_policies": "methods.lightwm.policies",
    "methods.agents.lightwm_schemas": "methods.lightwm.schemas",
    # ESamp, MVR-cache
    "methods.models.esamp": "methods.esamp.esamp",
    "methods.models.mvrcache": "methods.mvrcache.mvrcache",
    "methods.models.mvr_segmenter": "methods.mvrcache.mvr_segmenter",
    "methods.models.mvrcache_summary": "methods.mvrcache.mvrcache_summary",
    # MedVersa's MedREK (the benchmark paper's own editor)
    "methods.editors.medrek": "methods.medversa.medrek",
    "methods.editors.medrek_budget": "methods.medversa.medrek_budget",
    "methods.editors.medrek_train": "methods.medversa.medrek_train",
    # recipe papers
    "methods.recipes.bbo": "methods.bbo_merge.bbo",
    "methods.recipes.bbo_merge": "methods.bbo_merge.bbo_merge",
    "methods.recipes.cpt_rewind": "methods.cpt_rewind.cpt_rewind",
    "methods.recipes.procedural": "methods.procedural_pretraining.procedural",
    "methods.recipes.procedural_data": "methods.procedural_pretraining.procedural_data",
    "methods.recipes.progressive_depth": "methods.progressive_depth.progressive_depth",
    "methods.recipes.qkv_sharing": "methods.qkv_sharing.qkv_sharing",
    "methods.recipes.rl_pmd": "methods.rl_pmd.rl_pmd",
    "methods.rl.bandit": "methods.rl_pmd.bandit",
}
"""Old module or package (dotted) -> its new home (issue 45: per-paper code out of the kind
folders ``agents/``, ``editors/``, ``kv/``, ``models/``, ``recipes/``, ``rl/``)."""


class MovedPathWarning(FutureWarning):
    """A spec named a module's old home; it still resolves, the note says where it lives."""


def new_module(dotted: str) -> str | None:
    """The new home of ``dotted`` (a module, or anything below a moved package), or None
    when it did not move. The longest matching old name wins."""
    for old in sorted(MOVED, key=len, reverse=True):
        if dotted == old or dotted.startswith(old + "."):
            return MOVED[old] + dotted[len(old):]
    return None


_FILE = re.compile(r"^(?P<path>(?:\./)?methods/[\w/]*?)(?P<ext>\.py)?(?P<rest>(?:@.*)?/?)$")
_DOTTED = re.compile(r"^(?P<mod>methods(?:\.\w+)+)(?P<rest>:.*)?$")


def _moved(spec: str) -> str | None:
    """``spec`` with its old module replaced, or None when it names nothing moved."""
    found = _DOTTED.match(spec)
    if found:
        new = new_module(found["mod"])
        return None if new is None else new + (found["rest"] or "")
    found = _FILE.match(spec)
    if found:
        path = found["path"]
        prefix = "./" if path.startswith("./") else ""
        dotted = path.removeprefix("./").strip("/").replace("/", ".")
        new = new_module(dotted)
        if new is None:
            return None
        return prefix + new.replace(".", "/") + (found["ext"] or "") + found["rest"]
    return None


def resolve(spec: str) -> str:
    """``spec`` with an old module home replaced by the new one, with a one-line
    :class:`MovedPathWarning`; any other spec comes back unchanged.

    Takes what users and logs name: a file path (``methods/kv/xkv.py``), a file with an
    object (``methods/agents/lightwm/agent.py@lightwm``), a folder, a module
    (``methods.models.mvrcache_summary``) or an import path (``methods.kv.xkv:XKV``).
    """
    new = _moved(spec)
    if new is None:
        return spec
    warnings.warn(f"{spec} moved to {new} (issue 45: one folder per paper); "
                  "the old name still resolves", MovedPathWarning, stacklevel=2)
    return new
