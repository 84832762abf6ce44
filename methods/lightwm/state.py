"""LightWM's hierarchical working memory as a plain state machine (no Inspect, no model).

The agent (:mod:`.agent`) drives it; tests drive it step by step:

1. :meth:`WorkingMemory.fill` sets the global task state from the goal (deterministic
   init rules) and from the model's proposed JSON (each field checked against the schema;
   bad fields are rejected with a reason, good ones kept);
2. :meth:`begin` opens the current subtask: its local state is a copy of the global
   fields it ``expects`` (and of those it ``produces``, so it can extend them);
3. :meth:`observe` applies the schema's deterministic patches after a tool call, and
   :meth:`update` applies the model's JSON patch; a patch touching an undeclared field,
   breaking a field's type or failing RFC 6902 is rejected whole, with the reason kept
   in :attr:`rejections` for the next prompt;
4. :meth:`finish` hands the produced fields back to the global state and opens the next
   subtask; after the last one :attr:`done` is true.

Why separate from the agent: the method's claims (what the small model sees, what
survives a subtask boundary) live here and are testable without a model.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from methods.lightwm.jsonpatch import PatchError, apply_patch, parse_pointer
from methods.lightwm.schema import Schema, Subtask, UpdateRule

WILDCARD = "*"


def _filled(value: Any) -> bool:
    return value is not None and value != [] and value != {} and value != ""


def substitute(template: Any, arguments: dict[str, Any], observation: Any) -> Any:
    """A rule's value with ``$observation``, ``$observation.key`` and ``$arguments`` filled."""
    if isinstance(template, str) and template.startswith("$"):
        head, _, key = template[1:].partition(".")
        source = {"observation": observation, "arguments": arguments}.get(head, template)
        if key and isinstance(source, dict):
            return source.get(key)
        return source
    if isinstance(template, dict):
        return {k: substitute(v, arguments, observation) for k, v in template.items()}
    if isinstance(template, list):
        return [substitute(v, arguments, observation) for v in template]
    return template


def parse_observation(text: str) -> Any:
    """A tool result as JSON when it parses (a JSON prefix is enough), else the text."""
    decoder = json.JSONDecoder()
    stripped = text.strip()
    try:
        value, _ = decoder.raw_decode(stripped)
        return value
    except json.JSONDecodeError:
        return stripped


@dataclass
class WorkingMemory:
    """Global task state, the current subtask's local state, and the event record."""

    schema: Schema
    global_state: dict[str, Any] = field(default_factory=dict)
    local: dict[str, Any] = field(default_factory=dict)
    index: int = 0
    steps: int = 0
    rejections: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name, spec in self.schema.fields.items():
            # lists start empty so records can be appended with ``/field/-``
            self.global_state.setdefault(name, [] if spec.type == "array" else None)

    # ------------------------------------------------------------------ global state

    def fill(self, goal: str, proposed: Any = None) -> list[str]:
        """Init rules on ``goal``, then the model's proposed object; returns rejections."""
        for rule in self.schema.init_rules:
            value = rule.extract(goal)
            if value is not None and self.schema.field(rule.field).check(rule.field, value) is None:
                self.global_state[rule.field] = value
        if "goal" in self.schema.fields and self.global_state.get("goal") is None:
            self.global_state["goal"] = goal
        reasons: list[str] = []
        if proposed is not None and not isinstance(proposed, dict):
            reasons.append(f"the task state must be a JSON object, got {type(proposed).__name__}")
            proposed = {}
        for name, value in (proposed or {}).items():
            if name not in self.schema.fields:
                reasons.append(f"unknown field {name!r}; fields: {', '.join(self.schema.fields)}")
            elif value is not None and self.global_state.get(name) is None:
                reason = self.schema.field(name).check(name, value)
                if reason:
                    reasons.append(reason)
                else:
                    self.global_state[name] = value
        self.rejections.extend(reasons)
        accepted = sorted(k for k, v in self.global_state.items() if v is not None)
        self._event("fill", accepted=accepted, rejected=reasons)
        return reasons

    # ------------------------------------------------------------------ subtasks

    @property
    def done(self) -> bool:
        """True once the last subtask has handed over."""
        return self.index >= len(self.schema.subtasks)

    @property
    def subtask(self) -> Subtask:
        """The current subtask (an error once :attr:`done`)."""
        if self.done:
            raise IndexError("every subtask has finished")
        return self.schema.subtasks[self.index]

    def begin(self) -> dict[str, Any]:
        """Open the current subtask: copy expected (and produced) fields into a local state."""
        sub = self.subtask
        names = list(dict.fromkeys([*sub.expects, *sub.produces]))
        self.local = {n: copy.deepcopy(self.global_state.get(n)) for n in names}
        self.steps = 0
        self._event("begin", subtask=sub.name, local=sorted(self.local))
        return self.local

    def allowed(self, offered: list[str]) -> list[str]:
        """The offered tool names this subtask may call (``*`` allows every tool)."""
        actions = self.subtask.actions
        if WILDCARD in actions:
            return list(offered)
        return [name for name in offered if name in actions]

    def record_step(self) -> None:
        """Count one action of the current subtask (for its step budget)."""
        self.steps += 1

    def complete(self) -> bool:
        """Whether the current subtask should hand over now."""
        sub = self.subtask
        if self.steps >= sub.max_steps:
            return True
        return sub.finish == "produced" and bool(sub.produces) and all(
            _filled(self.local.get(f)) for f in sub.produces
        )

    def finish(self) -> dict[str, Any]:
        """Hand the produced fields to the global state and advance; returns what moved."""
        sub = self.subtask
        handed = {f: copy.deepcopy(self.local.get(f)) for f in sub.produces}
        self.global_state.update(handed)
        self.index += 1
        self._event("finish", subtask=sub.name, handed=sorted(handed))
        if not self.done:
            self.begin()
        return handed

    # ------------------------------------------------------------------ updates

    def _check_patch(self, patch: Any) -> None:
        ops = [patch] if isinstance(patch, dict) else patch
        if not isinstance(ops, list):
            raise PatchError(f"a patch must be a JSON list of operations, got {type(ops).__name__}")
        for op in ops:
            if not isinstance(op, dict):
                raise PatchError(f"each operation must be an object, got {op!r}")
            tokens = parse_pointer(op.get("path"))
            if not tokens:
                raise PatchError("patch one field at a time (path '/field'), not the whole state")
            if tokens[0] not in self.local:
                raise PatchError(
                    f"field {tokens[0]!r} is not in this subtask's state; "
                    f"writable: {', '.join(self.local) or 'none'}"
                )

    def update(self, patch: Any, source: str = "model") -> str | None:
        """Apply a JSON patch to the local state; None on success, else the reason.

        The patch is all-or-nothing and every touched field must keep its schema type.
        """
        try:
            self._check_patch(patch)
            new = apply_patch(self.local, patch)
            for name in new:
                reason = self.schema.field(name).check(name, new[name])
                if reason and new[name] != self.local.get(name):
                    raise PatchError(reason)
        except PatchError as exc:
            reason = f"patch rejected: {exc}"
            self.rejections.append(reason)
            self._event("reject", source=source, reason=reason)
            return reason
        self.local = new
        self._event("patch", source=source, patch=patch)
        return None

    def rules_for(self, tool: str) -> list[UpdateRule]:
        """The subtask's deterministic update rules that fire on ``tool``."""
        return [r for r in self.subtask.updates if r.tool in (tool, WILDCARD)]

    def observe(self, tool: str, arguments: dict[str, Any], observation: Any) -> list[str]:
        """Apply the deterministic patches for a call of ``tool``; returns rejections."""
        reasons: list[str] = []
        for rule in self.rules_for(tool):
            value = substitute(rule.value, arguments, observation)
            reason = self.update({"op": rule.op, "path": rule.path, "value": value}, "rule")
            if reason:
                reasons.append(reason)
        return reasons

    def pop_rejections(self) -> list[str]:
        """The reasons gathered since the last call (each is shown to the model once)."""
        out, self.rejections = self.rejections, []
        return out

    def _event(self, kind: str, **data: Any) -> None:
        self.events.append({"event": kind, "subtask_index": self.index, **data})
