"""Registers the project's offline model APIs with Inspect (imported by ``harness._registry``).

Inspect matches the API name unqualified, so these work from the CLI and ``get_model``::

    --model scripted/<policy>          deterministic rule policies (harness.models.scripted)
    --model embedded/smollm2-135m      SmolLM2-135M-Instruct Q4_1 via llama.cpp (CPU, offline)
    --model embedded/any -M model_path=FILE.gguf
    --model whitebox/smollm2-135m      the same weights through transformers (torch, hidden states)
    --model whitebox/smollm2-135m -M method=esamp -M beta=0.1   a white-box method (hooks)

Method packages register their own model APIs through their entry point (``methods``
registers ``mvrcache/<provider>/<model>``). This module is imported on every
``inspect eval``, so it stays light: each factory imports its provider module only when
Inspect asks for that API, and the provider modules import llama_cpp / torch /
transformers only when a model is constructed.
"""

from __future__ import annotations

from inspect_ai.model import ModelAPI, modelapi


@modelapi(name="scripted")
def scripted() -> type[ModelAPI]:
    """Deterministic scripted policies for tests, oracles and reference agents."""
    from harness.models.scripted import ScriptedModelAPI

    return ScriptedModelAPI


@modelapi(name="embedded")
def embedded() -> type[ModelAPI]:
    """A small GGUF model served in-process by llama.cpp."""
    from harness.models.embedded import EmbeddedModelAPI

    return EmbeddedModelAPI


@modelapi(name="whitebox")
def whitebox() -> type[ModelAPI]:
    """A transformers model with access to logits, hidden states and the KV cache."""
    from harness.models.whitebox import WhiteBoxModelAPI

    return WhiteBoxModelAPI

