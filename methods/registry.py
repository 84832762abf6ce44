"""The methods the suite ships, by kind: one line each.

A method is an agent (an Inspect solver/agent factory), a model wrapper (a model API), an
editor (knowledge editing) or a training recipe. Entries map a public name to
``"module:object"`` so listing methods never imports them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MethodEntry:
    """One shipped method: its kind, where it lives, and its status."""

    name: str
    kind: str  # "agent" | "model" | "editor" | "recipe"
    target: str  # "module:object"
    status: str
    summary: str


METHODS: tuple[MethodEntry, ...] = (
    MethodEntry("react", "agent", "methods.agents.memory_react:task_react", "available",
                "Inspect's react() loop with submit over the task's own tools (baseline)"),
    MethodEntry("xkv", "model", "methods.kv.xkv:XKV", "available",
                "cross-layer SVD of the prefill KV cache (whitebox/ -M method=xkv)"),
    MethodEntry("arborkv", "model", "methods.kv.arbor:ArborKV", "available",
                "tree-of-thoughts decoding with per-node KV under an eviction budget"),
    MethodEntry("scd", "model", "methods.kv.scd:SCD", "available",
                "producer KV codes rebuilt by a fine-tuned consumer (reuse + patch layers)"),
    MethodEntry("none", "editor", "methods.editors.simple:NoEditor", "available",
                "No-op knowledge editor: the unedited model (MedVersa baseline)"),
    MethodEntry("ike", "editor", "methods.editors.simple:IKEditor", "available",
                "In-context editing: every stored edit written before every query"),
    MethodEntry("retrieval", "editor", "methods.editors.retrieval:RetrievalEditor", "available",
                "MedREK-style key-aware retrieval (MiniLM + trained projection + prototype gate)"),
    MethodEntry("medrek", "editor", "methods.editors.medrek:SoftPromptEditor", "available",
                "White-box MedREK: retrieved edit as a soft prompt via forward hooks (HF models)"),
    MethodEntry("esamp", "model", "methods.models.esamp:ESamp", "available",
                "Exploratory sampling: whitebox/<m> -M method=esamp -M beta=0.1"),
    MethodEntry("mvr-cache", "model", "methods.models.mvrcache:MVRCacheAPI", "available",
                "Multi-vector semantic cache: mvrcache/<model> -M delta=0.1"),
    MethodEntry("thetaevolve", "agent", "methods.agents.thetaevolve:thetaevolve", "available",
                "ThetaEvolve program evolution: islands, batched SEARCH/REPLACE diffs, "
                "sandboxed evaluation, lazy penalties, resumable journal"),
    MethodEntry("react-memory", "agent", "methods.agents.memory_react:memory_react", "available",
                "react() over the task's tools with a running-summary memory (LightWM baseline)"),
    MethodEntry("lightwm", "agent", "methods.agents.lightwm:lightwm", "available",
                "LightWM: schema-induced global/local working memory with JSON-patch updates"),
)
