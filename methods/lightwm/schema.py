"""LightWM schemas: what a task family's working memory holds and how an episode is staged.

A schema is induced once per task family from successful traces (:mod:`.induce`) and
stored as JSON (``methods/lightwm/schemas/<family>.json``). It holds

* ``fields``: the global task-state schema (name -> type and description);
* ``init_rules``: deterministic fills of the global state from the goal text (regexes);
* ``subtasks``: the base subtask sequence; each declares the fields it ``expects`` (copied
  from the global state into its local state) and ``produces`` (copied back when it ends),
  the ``actions`` (tool names) it may take, and ``updates``: deterministic JSON-patch
  templates applied after a tool observation (``$observation``, ``$arguments``, and
  ``$observation.key`` are substituted).

Why a file, not code: the schema is the method's learned artefact; keeping it as data
makes it diffable, hand-editable and swappable per family without touching the agent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
"""Where shipped schemas live (one ``<family>.json`` per task family)."""

FieldType = Literal["any", "object", "array", "string", "number", "integer", "boolean"]

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldSpec(_Model):
    """One state field: its JSON type and what it means (shown to the model)."""

    type: FieldType = "any"
    description: str = ""

    def check(self, name: str, value: Any) -> str | None:
        """None when ``value`` fits (null always fits: 'unknown yet'), else the reason."""
        if value is None or self.type == "any":
            return None
        allowed = _PY_TYPES[self.type]
        if isinstance(value, bool) and bool not in allowed:
            return f"field {name!r} must be {self.type}, got boolean"
        if not isinstance(value, allowed):
            return f"field {name!r} must be {self.type}, got {type(value).__name__}"
        return None


class InitRule(_Model):
    """Fill ``field`` from the goal text with a regex (group 1; JSON-decoded if ``json``)."""

    field: str
    pattern: str
    json_value: bool = False

    def extract(self, text: str) -> Any:
        """The value found in ``text``, or None."""
        found = re.search(self.pattern, text, flags=re.MULTILINE)
        if not found:
            return None
        raw = found.group(1) if found.groups() else found.group(0)
        if self.json_value:
            try:
                return json.loads(raw)
            except json.JSONDecodeError:
                return None
        return raw.strip()


class UpdateRule(_Model):
    """A deterministic patch after a call of ``tool``: ``{op, path, value-template}``."""

    tool: str
    op: Literal["add", "replace"] = "replace"
    path: str
    value: Any = "$observation"


class Subtask(_Model):
    """One stage of the base sequence: allowed actions, expected and produced fields."""

    name: str
    description: str = ""
    actions: list[str] = Field(default_factory=list)
    expects: list[str] = Field(default_factory=list)
    produces: list[str] = Field(default_factory=list)
    updates: list[UpdateRule] = Field(default_factory=list)
    finish: Literal["produced", "model"] = "produced"
    max_steps: int = Field(default=4, ge=1)


class Schema(_Model):
    """A task family's working-memory schema (see the module docstring)."""

    family: str
    description: str = ""
    fields: dict[str, FieldSpec] = Field(default_factory=dict)
    init_rules: list[InitRule] = Field(default_factory=list)
    subtasks: list[Subtask] = Field(min_length=1)
    traces: int = 0  # how many successful traces it was induced from
    induction: dict[str, Any] | None = None
    """How the schema was made (``method`` rules/llm, the inducing model, its raw reply, the
    repairs made to it and, when the reply was unusable, the ``fallback`` reason)."""

    def field(self, name: str) -> FieldSpec:
        """The spec of ``name`` (an undeclared field is ``any``)."""
        return self.fields.get(name, FieldSpec())

    def save(self, path: Path) -> Path:
        """Write the schema as indented JSON (stable key order, for diffs)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return path


def generic_schema(family: str = "generic") -> Schema:
    """The fallback when no schema is known: one subtask, any tool, last observation kept.

    It makes LightWM usable on any task (the agent degrades to a state-tracking ReAct);
    induction is what adds the staging.
    """
    return Schema(
        family=family,
        description="No induced schema: a single subtask over every tool.",
        fields={
            "goal": FieldSpec(type="string", description="the task as given"),
            "last_observation": FieldSpec(description="the latest tool result"),
            "notes": FieldSpec(type="array", description="facts worth keeping"),
        },
        subtasks=[
            Subtask(
                name="solve",
                description="Work towards the goal with the tools; submit when done.",
                actions=["*"],
                expects=["goal", "notes"],
                produces=["notes", "last_observation"],
                updates=[UpdateRule(tool="*", path="/last_observation")],
                finish="model",
                max_steps=30,
            )
        ],
    )


def load_schema(schema: str | Path | Schema | None) -> Schema:
    """A schema from an object, a file path, or a family name in :data:`SCHEMA_DIR`.

    None gives :func:`generic_schema`. An unknown family name raises with the known ones.
    """
    if schema is None:
        return generic_schema()
    if isinstance(schema, Schema):
        return schema
    path = Path(schema)
    if not path.suffix and not path.exists():
        path = SCHEMA_DIR / f"{schema}.json"
    if not path.exists():
        known = sorted(p.stem for p in SCHEMA_DIR.glob("*.json"))
        raise FileNotFoundError(f"no LightWM schema {str(schema)!r}; shipped families: {known}")
    return Schema.model_validate_json(path.read_text(encoding="utf-8"))
