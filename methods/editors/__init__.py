"""Knowledge editors, each registered with ``@editor`` (interface: :mod:`harness.plugins.editor`).

``none`` (unedited) and ``ike`` (all edits in context) in :mod:`.simple`; ``retrieval``
(MedREK-style key-aware retrieval, edit injected as a prompt) in :mod:`.retrieval`;
``medrek`` (the same retrieval, edit injected as a soft prompt through forward hooks;
white-box only) is MedVersa's own and lives in its paper's folder, :mod:`methods.medversa`.
The parametric editors ``ft-l``, ``rome``, ``memit``, ``grace`` and ``wise`` (:mod:`.parametric`)
change the model's weights (or hook a codebook or a routed side memory on one layer);
they import torch, so they are declared here by import path and load on first use. Build
one by name with :func:`harness.plugins.editor.make_editor`.
"""

from __future__ import annotations

from harness.registry import declare

_PARAMETRIC = {
    "ft-l": ("ftl:FTLEditor",
             "FT-L: norm-constrained fine-tuning of one MLP down-projection (HF models)"),
    "rome": ("rome:ROMEEditor",
             "ROME: rank-one edit of one MLP down-projection with a key covariance (HF)"),
    "memit": ("memit:MEMITEditor",
              "MEMIT: one least-squares update of several MLP layers per batch of edits (HF)"),
    "grace": ("grace:GRACEEditor",
              "GRACE: codebook adaptor with a deferral radius at one MLP layer (HF models)"),
    "wise": ("wise:WISEEditor",
             "WISE: side memory of one MLP down-projection, routed by activation (HF)"),
}

for _name, (_target, _summary) in _PARAMETRIC.items():
    declare("editor", _name, f"methods.editors.parametric.{_target}", summary=_summary,
            extra="cpu", whitebox=True)
