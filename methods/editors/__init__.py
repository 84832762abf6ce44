"""Knowledge editors: one interface (:class:`~methods.editors.base.Editor`), four editors.

``none`` (unedited), ``ike`` (all edits in context), ``retrieval`` (MedREK-style key-aware
retrieval, edit injected as a prompt) and ``medrek`` (the same retrieval, edit injected as a
soft prompt through forward hooks; white-box only). :func:`make_editor` builds one by name.
"""

from __future__ import annotations

from typing import Any

from methods.editors.base import ALL_EDITS, Edit, Editor

EDITOR_NAMES = ("none", "ike", "retrieval", "medrek")
WHITEBOX_ONLY = frozenset({"medrek"})


def make_editor(name: str, model: Any = None, tokenizer: Any = None) -> Editor:
    """A fresh editor by name; ``medrek`` needs the HF ``model`` and ``tokenizer``."""
    if name == "none":
        from methods.editors.simple import NoEditor

        return NoEditor()
    if name == "ike":
        from methods.editors.simple import IKEditor

        return IKEditor()
    if name == "retrieval":
        from methods.editors.retrieval import RetrievalEditor

        return RetrievalEditor()
    if name == "medrek":
        if model is None or tokenizer is None:
            raise ValueError("medrek is white-box: pass the HF model and tokenizer")
        from methods.editors.medrek import SoftPromptEditor

        return SoftPromptEditor(model, tokenizer)
    raise ValueError(f"unknown editor {name!r}: one of {', '.join(EDITOR_NAMES)}")


__all__ = ["ALL_EDITS", "EDITOR_NAMES", "WHITEBOX_ONLY", "Edit", "Editor", "make_editor"]
