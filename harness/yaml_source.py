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


MAX_EXPANDED_NODES = 100_000
"""The most nodes a configuration file may expand to once its aliases are resolved. A study
file or an ``eval.yaml`` has a few hundred; nested aliases ("billion laughs") reach billions
from a few lines, and walking them took tens of seconds and gigabytes before this cap."""


def expanded_size(node: yaml.Node, limit: int = MAX_EXPANDED_NODES) -> int:
    """How many nodes ``node`` stands for with every alias expanded, counted without
    expanding (an alias is the same node object, so each node's size is computed once).
    Stops counting past ``limit``, so the answer costs time linear in the file."""
    sizes: dict[int, int] = {}

    def size(current: yaml.Node) -> int:
        known = sizes.get(id(current))
        if known is not None:
            return known
        total = 1
        if isinstance(current, yaml.MappingNode):
            children = [n for pair in current.value for n in pair]
        elif isinstance(current, yaml.SequenceNode):
            children = list(current.value)
        else:
            children = []
        for child in children:
            total += size(child)
            if total > limit:
                break
        sizes[id(current)] = total
        return total

    return size(node)


def duplicate_keys(node: yaml.Node, path: Loc = (),
                   seen: set[int] | None = None) -> list[tuple[Loc, int, int]]:
    """Every key that a mapping states twice: (path of the key, first line, second line).

    Why: PyYAML keeps the last value without a word, so ``limit: 4`` followed by
    ``limit: 1000`` would run the second, and the file that was reviewed is not the run.
    """
    seen = set() if seen is None else seen
    if id(node) in seen:  # an alias: its node was checked where its anchor is
        return []
    seen.add(id(node))
    found: list[tuple[Loc, int, int]] = []
    if isinstance(node, yaml.MappingNode):
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            line = key_node.start_mark.line + 1
            if key is not None and key != "<<":
                if key in first:
                    found.append(((*path, key), first[key], line))
                else:
                    first[key] = line
            found.extend(duplicate_keys(value_node, (*path, key), seen))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found.extend(duplicate_keys(item, (*path, index), seen))
    return found


def parse_mapping(text: str, source: str, root: str, what: str,
                  error: type[Exception]) -> YamlMapping:
    """Parse ``text`` as one YAML mapping; bad YAML or another shape raises ``error`` with
    the line (``what`` says what the file must be, e.g. ``a study is a YAML mapping``).

    Also refused, before anything is built from the file: a key stated twice in one mapping
    (both lines named) and aliases that expand past :data:`MAX_EXPANDED_NODES` nodes.
    """
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise error(f"{source}:{line}: not valid YAML: {exc}") from None
    if node is None or not isinstance(node, yaml.MappingNode):
        raise error(f"{source}:1: {root}: {what}")
    if expanded_size(node) > MAX_EXPANDED_NODES:
        raise error(f"{source}:1: {root}: its aliases expand to more than "
                    f"{MAX_EXPANDED_NODES:,} nodes; write the values out instead of nesting "
                    "aliases")
    twice = duplicate_keys(node)
    if twice:
        raise error("\n".join(
            f"{source}:{second}: {format_loc(loc, root)}: stated twice (lines {first} and "
            f"{second}); YAML would keep the second silently: keep one"
            for loc, first, second in twice))
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:  # e.g. an unhashable key, found only when constructing
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise error(f"{source}:{line}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise error(f"{source}:1: {root}: {what}")
    return YamlMapping(data, node_lines(node), source, root)
