"""Scenario definitions, read from data files (one JSON file per scenario).

Why data files: the 14 scenarios differ only in parameters (history designs, thresholds,
visibility of failures, SCM constants), so adding or auditing one means reading one file,
not a code branch. ``compat="original"`` merges each file's ``original`` block over it,
reproducing the released code's defects that the published leaderboard reflects.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

DATA_DIR = Path(__file__).parent / "data"
Compat = Literal["intended", "original"]
COMPAT_MODES: tuple[str, ...] = ("intended", "original")


@functools.cache
def families() -> dict[str, Any]:
    """Shared tables: component sheets, agility, combat constants, equipment, catalogs."""
    data: dict[str, Any] = json.loads((DATA_DIR / "families.json").read_text(encoding="utf-8"))
    return data


@functools.cache
def _raw_scenarios() -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted((DATA_DIR / "scenarios").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        out[record["id"]] = record
    return dict(sorted(out.items(), key=lambda kv: int(kv[1]["index"])))


def scenario_ids() -> list[str]:
    """All scenario ids in the spec's order (1..14)."""
    return list(_raw_scenarios())


def scenario_record(scenario_id: str) -> dict[str, Any]:
    """The scenario's data file as read (before any ``compat`` overrides), as a fresh copy.

    What a benchmark needs to describe a scenario (``id``, ``index``, ``title``, ``family``,
    ``threshold``, ``hide_failed``, ``hidden_confounder``) without building it;
    :func:`load_scenario` builds it. Unknown ids raise ``ValueError`` listing the valid ones.
    """
    raw = _raw_scenarios().get(scenario_id)
    if raw is None:
        raise ValueError(f"unknown scenario {scenario_id!r}; known: {', '.join(scenario_ids())}")
    return copy.deepcopy(raw)


@dataclass(frozen=True)
class Components:
    """A family's drone sheet as arrays in combat-iteration order."""

    names: tuple[str, ...]
    hp: np.ndarray
    default_def: np.ndarray
    critical: np.ndarray
    weights: np.ndarray

    def index(self, name: str) -> int:
        """Position of a component (``ValueError`` if the family has no such part)."""
        return self.names.index(name)


@functools.cache
def components(kind: str) -> Components:
    """The component sheet of ``kind`` (antenna, deployment_zone, env_shift)."""
    rows = families()["components"][kind]
    weights = families()["target_weights"]
    return Components(
        names=tuple(r[0] for r in rows),
        hp=np.array([r[1] for r in rows], dtype=float),
        default_def=np.array([r[2] for r in rows], dtype=float),
        critical=np.array([r[3] for r in rows], dtype=bool),
        weights=np.array([weights.get(r[0], 1.0) for r in rows], dtype=float),
    )


@dataclass(frozen=True)
class Scenario:
    """One scenario after the compat overrides are applied."""

    id: str
    index: int
    title: str
    family: str
    scm: str
    scm_params: dict[str, Any]
    components: Components
    equipment: dict[str, Any]
    catalog: dict[str, Any] | None
    threshold: float
    hide_failed: bool
    hidden_confounder: bool
    history: list[dict[str, Any]]
    def_range: tuple[float, float]
    def_budget: float
    observation_noise: bool
    optimum: dict[str, Any]
    published_optimum: dict[str, Any]
    prompt_notes: list[str]
    compat: str
    agility: dict[str, float] = field(default_factory=dict)

    @property
    def has_equipment(self) -> bool:
        """Whether the scenario advertises any discrete options."""
        return bool(self.equipment.get("slots") or self.equipment.get("toggles"))


def load_scenario(scenario_id: str, compat: str = "intended") -> Scenario:
    """Load one scenario; ``compat='original'`` applies the released code's behaviour."""
    if compat not in COMPAT_MODES:
        raise ValueError(f"compat must be one of {COMPAT_MODES}, got {compat!r}")
    raw = _raw_scenarios().get(scenario_id)
    if raw is None:
        raise ValueError(f"unknown scenario {scenario_id!r}; known: {', '.join(scenario_ids())}")
    record = dict(raw)
    if compat == "original":
        record.update(raw.get("original", {}))
    fam = families()
    catalog_name = record.get("catalog")
    return Scenario(
        id=record["id"],
        index=int(record["index"]),
        title=record["title"],
        family=record["family"],
        scm=record["scm"],
        scm_params=dict(record["scm_params"]),
        components=components(record["components"]),
        equipment=fam["equipment"][record["equipment"]],
        catalog=fam["catalogs"][catalog_name] if catalog_name else None,
        threshold=float(record["threshold"]),
        hide_failed=bool(record["hide_failed"]),
        hidden_confounder=bool(record["hidden_confounder"]),
        history=list(record["history"]),
        def_range=(float(record["def_range"][0]), float(record["def_range"][1])),
        def_budget=float(record["def_budget"]),
        observation_noise=bool(record["observation_noise"]),
        optimum=dict(record["optimum"]),
        published_optimum=dict(record["published_optimum"]),
        prompt_notes=list(record["prompt_notes"]),
        compat=compat,
        agility=dict(fam["agility"][record["scm"]]),
    )
