"""YAML files whose errors name the file, the line and the field.

Why a module: study files and ``eval.yaml`` are both validated by pydantic models, and a
malformed one must say ``study.yaml:12: factors[1].levels: ...`` rather than a traceback.
pydantic knows the field path, not the line; the composed YAML node tree knows the lines.
This module joins the two for any YAML-backed model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

Loc = tuple[Any, ...]


def node_lines(node: yaml.Node, path: Loc = ()) -> dict[Loc, int]:
    """Every key and list index in the document -> its 1-based line (a key: its own line)."""
    lines = {path: node.start_mark.line + 1}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            child = (*path, key_node.value)
            lines.update(node_lines(value_node, child))
            lines[child] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines.update(node_lines(item, (*path, index)))
    return lines


def format_loc(loc: Sequence[Any], empty: str) -> str:
    """``("tasks", 0, "headline")`` -> ``tasks[0].headline`` (``empty`` for the root)."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else ("." if text else "") + str(part)
    return text or empty


def clean_loc(loc: Sequence[Any]) -> Loc:
    """A pydantic error location without its union/validator tags (``function-after[...]``)."""
    return tuple(p for p in loc if isinstance(p, int) or "[" not in str(p))


@dataclass(frozen=True)
class YamlMapping:
    """A parsed YAML mapping with the line of every field, for error messages."""

    data: dict[str, Any]
    lines: dict[Loc, int]
    source: str
    root: str
    """How the root is named in messages (``<study>``, ``<eval.yaml>``)."""

    def line(self, loc: Sequence[Any]) -> int:
        """The line of ``loc``, or of its nearest ancestor in the file (a missing field)."""
        path = tuple(loc)
        while path and path not in self.lines:
            path = path[:-1]
        return self.lines.get(path, 1)

    def message(self, loc: Sequence[Any], text: str) -> str:
        """``source:line: field: text``."""
        return f"{self.source}:{self.line(loc)}: {format_loc(loc, self.root)}: {text}"

    def validation_messages(self, exc: ValidationError) -> str:
        """One ``source:line: field: message`` line per pydantic error."""
        return "\n".join(self.message(clean_loc(e["loc"]), e["msg"]) for e in exc.errors())


def parse_mapping(text: str, source: str, root: str, what: str,
                  error: type[Exception]) -> YamlMapping:
    """Parse ``text`` as one YAML mapping; bad YAML or another shape raises ``error`` with
    the line (``what`` says what the file must be, e.g. ``a study is a YAML mapping``)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise error(f"{source}:{line}: not valid YAML: {exc}") from None
    if node is None or not isinstance(data, dict):
        raise error(f"{source}:1: {root}: {what}")
    return YamlMapping(data, node_lines(node), source, root)
