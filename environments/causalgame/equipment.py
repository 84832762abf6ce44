"""Equipment (discrete options and boolean toggles) resolved into hidden numeric effects.

Kept apart from the SCMs because equipment is where the released code differs most from
its documentation: effects are looked up by option id and summed, toggles count with their
default (the released agent could not switch them), and one catalog's effects never load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from environments.causalgame.scenarios import Scenario


@dataclass(frozen=True)
class EquipmentEffect:
    """Summed hidden effects of one equipment choice (identical for every drone of a call)."""

    def_multiplier: float = 1.0
    detection: float = 0.0
    emi_resistance: float = 0.0
    flight_profile: str | None = None


NO_EQUIPMENT = EquipmentEffect()


def _toggle_on(name: str, spec: Mapping[str, Any], given: Mapping[str, Any], compat: str) -> bool:
    if compat == "original" or not isinstance(given.get(name), bool):
        return bool(spec.get("default", False))
    return bool(given[name])


def resolve_equipment(scenario: Scenario, equipment: Mapping[str, Any] | None) -> EquipmentEffect:
    """Hidden effects of ``equipment`` in ``scenario`` (unknown slots/options contribute nothing).

    Effects are computed only for a non-empty dict (so sending any equipment switches on
    default-on toggles such as the antenna family's emergency beacon). ``flight_profile``
    is read by the zone SCMs directly, in every zone scenario.
    """
    if not equipment:
        return NO_EQUIPMENT
    profile = equipment.get("flight_profile")
    flight_profile = profile if profile in ("low", "medium", "high") else None
    if not scenario.scm_params.get("equipment_effects", True):
        return EquipmentEffect(flight_profile=flight_profile)
    effects: list[Mapping[str, Any]] = []
    for slot, spec in scenario.equipment.get("slots", {}).items():
        option = equipment.get(slot)
        if isinstance(option, str) and option in spec["options"]:
            effects.append(spec["options"][option]["effect"])
    for name, spec in scenario.equipment.get("toggles", {}).items():
        if _toggle_on(name, spec, equipment, scenario.compat):
            effects.append(spec["effect"])
    multiplier = 1.0
    for effect in effects:
        multiplier *= float(effect.get("def_multiplier", 1.0))
    return EquipmentEffect(
        def_multiplier=multiplier,
        detection=sum(float(e.get("detection", 0.0)) for e in effects),
        emi_resistance=min(1.0, sum(float(e.get("emi_resistance", 0.0)) for e in effects)),
        flight_profile=flight_profile,
    )
