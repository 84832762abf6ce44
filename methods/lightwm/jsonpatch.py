"""A small RFC 6902 (JSON Patch) subset: ``add``, ``replace``, ``remove`` and ``test``.

Why our own: LightWM's state updater is a small model whose patches are often wrong, and
the agent must tell it *why* a patch was refused (the reason goes back into its next
prompt). So every failure raises :class:`PatchError` with a sentence a model can act on,
and a patch is applied to a copy: a list of operations is all-or-nothing, as the RFC says.
Paths are RFC 6901 JSON pointers (``/a/b/0``, ``~0`` for ``~``, ``~1`` for ``/``, ``-``
appends to an array). ``move`` and ``copy`` are not supported (rejected with a reason).
"""

from __future__ import annotations

import copy
import json
from typing import Any

OPS = ("add", "replace", "remove", "test")


class PatchError(ValueError):
    """A patch operation that cannot be applied; ``str(err)`` is the reason for the model."""


def parse_pointer(path: Any) -> list[str]:
    """The reference tokens of a JSON pointer (``""`` is the whole document)."""
    if not isinstance(path, str):
        raise PatchError(f"path must be a string like '/field', got {path!r}")
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"path {path!r} must start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _index(container: list[Any], token: str, path: str, *, for_add: bool) -> int:
    if for_add and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f"path {path!r}: {token!r} is not an array index")
    index = int(token)
    limit = len(container) if for_add else len(container) - 1
    if index > limit:
        raise PatchError(f"path {path!r}: index {index} is out of range (length {len(container)})")
    return index


def _parent(doc: Any, tokens: list[str], path: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"path {path!r}: no member {token!r}")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, path, for_add=False)]
        else:
            raise PatchError(f"path {path!r}: cannot descend into a {type(node).__name__}")
    return node


def _get(doc: Any, path: str) -> Any:
    tokens = parse_pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path {path!r}: no member {last!r}")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, path, for_add=False)]
    raise PatchError(f"path {path!r}: a {type(parent).__name__} has no members")


def apply_operation(doc: Any, op: Any) -> Any:
    """Apply one operation in place where possible; returns the (possibly new) document."""
    if not isinstance(op, dict):
        raise PatchError(f"each operation must be an object, got {op!r}")
    kind = op.get("op")
    if kind not in OPS:
        raise PatchError(f"unsupported op {kind!r}; use one of {', '.join(OPS)}")
    path = op.get("path")
    tokens = parse_pointer(path)
    if kind in ("add", "replace", "test") and "value" not in op:
        raise PatchError(f"{kind} at {path!r} needs a 'value'")
    value = copy.deepcopy(op.get("value"))
    if kind == "test":
        if _get(doc, str(path)) != value:
            raise PatchError(f"test failed: {path!r} is not {json.dumps(value)[:80]}")
        return doc
    if not tokens:  # the whole document
        if kind == "remove":
            raise PatchError("cannot remove the whole state")
        return value
    parent = _parent(doc, tokens, str(path))
    last = tokens[-1]
    if isinstance(parent, dict):
        if kind in ("replace", "remove") and last not in parent:
            raise PatchError(f"{kind} at {path!r}: no member {last!r} (use add)")
        if kind == "remove":
            del parent[last]
        else:
            parent[last] = value
    elif isinstance(parent, list):
        index = _index(parent, last, str(path), for_add=kind == "add")
        if kind == "add":
            parent.insert(index, value)
        elif kind == "replace":
            parent[index] = value
        else:
            del parent[index]
    else:
        raise PatchError(f"path {path!r}: a {type(parent).__name__} has no members")
    return doc


def apply_patch(doc: Any, patch: Any) -> Any:
    """A new document with every operation of ``patch`` applied, or :class:`PatchError`.

    All-or-nothing: the input is never modified, so a rejected patch leaves the state as
    it was. The error names the failing operation's position.
    """
    if isinstance(patch, dict):
        patch = [patch]
    if not isinstance(patch, list):
        raise PatchError(f"a patch must be a JSON list of operations, got {type(patch).__name__}")
    out = copy.deepcopy(doc)
    for i, op in enumerate(patch):
        try:
            out = apply_operation(out, op)
        except PatchError as exc:
            raise PatchError(f"operation {i}: {exc}") from None
    return out
