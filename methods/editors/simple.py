"""The two reference editors: ``none`` (unedited model) and ``ike`` (every edit in context).

``ike`` is in-context knowledge editing (Zheng et al., 2023) in its plainest form: the new
facts are written before every query, the query included. In single mode that is the upper
bound a prompt-based editor can reach; in batch mode every locality query also sees all B
facts, which is exactly what hurts locality and what retrieval is meant to avoid.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.plugins.editor import ALL_EDITS, Editor, editor


@editor("none", summary="No-op knowledge editor: the unedited model (MedVersa baseline)")
class NoEditor(Editor):
    """Ignores its knowledge base: every query goes to the unedited model."""

    name = "none"

    def retrieve(self, queries: Sequence[str]) -> list[int | None]:
        """Nothing is ever used."""
        return [None for _ in queries]


@editor("ike", summary="In-context editing: every stored edit written before every query")
class IKEditor(Editor):
    """All stored edits, one per line, before every query."""

    name = "ike"

    def retrieve(self, queries: Sequence[str]) -> list[int | None]:
        """Every query uses every edit (``None`` while the knowledge base is empty)."""
        return [ALL_EDITS if self.edits else None for _ in queries]
