"""The RFC 6902 subset LightWM's updater uses: each op, pointers, and reasons on failure."""

from __future__ import annotations

import pytest

from methods.lightwm.jsonpatch import PatchError, apply_patch, parse_pointer


def test_add_replace_remove_test_on_nested_state() -> None:
    doc = {"a": {"b": [1, 2]}, "c": 1}
    out = apply_patch(doc, [
        {"op": "add", "path": "/a/b/-", "value": 3},
        {"op": "add", "path": "/a/b/0", "value": 0},
        {"op": "replace", "path": "/c", "value": {"x": 1}},
        {"op": "remove", "path": "/a/b/1"},
        {"op": "test", "path": "/c/x", "value": 1},
        {"op": "add", "path": "/new", "value": None},
    ])
    assert out == {"a": {"b": [0, 2, 3]}, "c": {"x": 1}, "new": None}
    assert doc == {"a": {"b": [1, 2]}, "c": 1}  # the input is never modified


def test_pointer_escapes() -> None:
    assert parse_pointer("/a~1b/c~0d") == ["a/b", "c~d"]
    assert apply_patch({}, [{"op": "add", "path": "/a~1b", "value": 1}]) == {"a/b": 1}


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        ({"op": "move", "path": "/a", "from": "/b"}, "unsupported op 'move'"),
        ({"op": "replace", "path": "/missing", "value": 1}, "no member 'missing'"),
        ({"op": "add", "path": "a", "value": 1}, "must start with '/'"),
        ({"op": "add", "path": "/list/7", "value": 1}, "out of range"),
        ({"op": "add", "path": "/list/x", "value": 1}, "not an array index"),
        ({"op": "add", "path": "/a"}, "needs a 'value'"),
        ({"op": "test", "path": "/a", "value": 2}, "test failed"),
        ({"op": "add", "path": "/a/deeper", "value": 1}, "has no members"),
        ("not a list", "must be a JSON list"),
        (["oops"], "must be an object"),
    ],
)
def test_bad_operations_are_rejected_with_a_reason(patch: object, reason: str) -> None:
    with pytest.raises(PatchError, match=reason):
        apply_patch({"a": 1, "list": [1]}, patch)


def test_a_failing_operation_rejects_the_whole_patch() -> None:
    doc = {"a": 1}
    with pytest.raises(PatchError, match="operation 1"):
        apply_patch(doc, [{"op": "replace", "path": "/a", "value": 2},
                          {"op": "remove", "path": "/zzz"}])
    assert doc == {"a": 1}
