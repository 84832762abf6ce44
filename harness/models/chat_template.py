"""A model's own Jinja chat template, rendered the way transformers renders it.

Why not llama-cpp-python's formatter: its sandboxed environment uses Jinja's built-in
``tojson`` (HTML-escapes ``<``/``>``/``&`` and sorts keys), so a tool schema or an earlier
call reaches the model in a form its template's authors never trained on. Here ``tojson``
is ``json.dumps(ensure_ascii=False)`` in insertion order, as in transformers, and the
template gets ``tools``, ``add_generation_prompt``, ``bos_token``/``eos_token``,
``raise_exception`` and ``strftime_now``.

A template *supports tools* when it reads the ``tools`` variable (Qwen2.5's does: it lists
the functions in the system turn, replays calls as ``<tool_call>`` JSON and results as
``<tool_response>`` inside a user turn). SmolLM2's ChatML template does not; for it the
provider describes the tools itself (see :mod:`harness.models.toolprompt`).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

CHATML_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""Fallback for a model that ships no ``tokenizer.chat_template``."""


def _tojson(value: Any, indent: int | None = None, separators: Any = None,
            sort_keys: bool = False, ensure_ascii: bool = False) -> str:
    return json.dumps(value, indent=indent, separators=separators, sort_keys=sort_keys,
                      ensure_ascii=ensure_ascii)


def _raise(message: str) -> None:
    raise ValueError(f"chat template: {message}")


class ChatTemplate:
    """One compiled template with its special tokens."""

    def __init__(self, source: str | None, bos_token: str = "", eos_token: str = "") -> None:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        self.source = source or CHATML_TEMPLATE
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                            extensions=["jinja2.ext.loopcontrols"])
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        self._template = env.from_string(self.source)
        self.bos_token = bos_token
        self.eos_token = eos_token
        self.supports_tools = "tools" in self.source

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
               add_generation_prompt: bool = True) -> str:
        """The prompt text for ``messages`` (OpenAI-style dicts), tools included if given."""
        return self._template.render(
            messages=messages,
            tools=tools or None,
            add_generation_prompt=add_generation_prompt,
            bos_token=self.bos_token,
            eos_token=self.eos_token,
        )

    def stops(self) -> list[str]:
        """Strings that end an assistant turn in this template."""
        stops = [s for s in (self.eos_token, "<|im_end|>") if s and s in self.source]
        stops = stops or ([self.eos_token] if self.eos_token else [])
        return list(dict.fromkeys(stops))
