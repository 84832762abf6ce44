"""The common per-drone pipeline (spec section 2), one array computation per call.

All drones of a call share a design, so DEF, agility and equipment are scalars/vectors
over components while environment, damage, detection and combat are arrays over drones.
Combat is vectorised over (drone, round): every random number of a combat is drawn at
once, and per-component damage is accumulated with one ``bincount``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from environments.causalgame.equipment import EquipmentEffect, resolve_equipment
from environments.causalgame.scenarios import Scenario, families
from environments.causalgame.scms import SCMS, Effects


@dataclass
class Outcome:
    """Per-drone results of one simulated batch."""

    survived: np.ndarray  # bool (n,)
    hit_count: np.ndarray  # int (n,)
    detected: np.ndarray  # bool (n,)
    failure: np.ndarray  # str (n,): "" or the first destroyed critical part
    hp: np.ndarray  # (n, C) final HP
    effects: Effects
    defs: np.ndarray  # (C,) DEF after equipment
    agility: float

    @property
    def n(self) -> int:
        """Number of drones."""
        return int(self.survived.shape[0])


def design_vector(scenario: Scenario, design: Mapping[str, float] | None) -> np.ndarray:
    """DEF per component: defaults overridden by ``design`` (keys ``x`` or ``x_def``).

    No validation here (the game layer validates); unknown keys are ignored.
    """
    comp = scenario.components
    defs = comp.default_def.copy()
    for key, value in (design or {}).items():
        name = key[:-4] if key.endswith("_def") else key
        if name in comp.names:
            defs[comp.index(name)] = float(value)
    return defs


def agility(scenario: Scenario, total_def: float) -> float:
    """Hidden agility from the summed DEF (spec 2.2)."""
    a = scenario.agility
    if total_def <= 0:
        return float(a["a_max"])
    raw = 1 - a["c"] * total_def * np.exp(-total_def / a["s"]) - 0.001 * total_def
    return float(np.clip(raw, a["a_min"], a["a_max"]))


def reduce_damage(damage: np.ndarray, defs: np.ndarray, factor: float, share: float) -> np.ndarray:
    """DEF reduction ``max(1, D - min(floor(f*d), floor(share*D)))`` where D > 0, else 0."""
    reduced = np.maximum(
        1.0, damage - np.minimum(np.floor(factor * defs), np.floor(share * damage))
    )
    return np.where(damage > 0, reduced, 0.0)


def _combat(
    hp: np.ndarray,
    defs: np.ndarray,
    weights: np.ndarray,
    rounds: np.ndarray,
    alpha: np.ndarray,
    mu: np.ndarray,
    agil: float,
    rng: np.random.Generator,
    cfg: Mapping[str, Any],
) -> tuple[np.ndarray, np.ndarray]:
    """Combat for m detected drones (spec 2.3): returns (damage per component, hit counts)."""
    m, c = hp.shape
    r_max = int(rounds.max())
    draws = rng.random((4, m, r_max))
    hit_p = np.clip(
        cfg["base_hit"] * alpha * np.exp(cfg["agility_slope"] * (1 - agil)),
        cfg["hit_min"],
        cfg["hit_max"],
    )
    hits = (draws[0] < hit_p[:, None]) & (np.arange(r_max)[None, :] < rounds[:, None])
    w = weights[None, :] * (hp > 0)
    cum = np.cumsum(w, axis=1)
    cum /= cum[:, -1:]
    target = (draws[1][:, :, None] >= cum[:, None, :]).sum(axis=2)
    np.minimum(target, c - 1, out=target)
    dmg = np.floor(
        cfg["damage_base"]
        * (cfg["damage_low"] + (cfg["damage_high"] - cfg["damage_low"]) * draws[2])
    )
    dmg = np.where(draws[3] < cfg["crit_chance"], np.floor(dmg * cfg["crit_multiplier"]), dmg)
    dmg = np.floor(dmg * mu[:, None]) * hits
    flat = (np.arange(m)[:, None] * c + target).ravel()
    total = np.bincount(flat, weights=dmg.ravel(), minlength=m * c).reshape(m, c)
    return total, hits.sum(axis=1)


def simulate(
    scenario: Scenario,
    design: Mapping[str, float] | None,
    n: int,
    rng: np.random.Generator,
    equipment: Mapping[str, Any] | None = None,
    stage: int = 1,
    force: dict[str, Any] | None = None,
) -> Outcome:
    """Fly ``n`` drones of one design through the scenario's SCM and combat."""
    comp = scenario.components
    cfg = families()["combat"]
    eq: EquipmentEffect = resolve_equipment(scenario, equipment)
    defs = design_vector(scenario, design)
    if eq.def_multiplier != 1.0:
        defs = np.floor(defs * eq.def_multiplier)
    agil = agility(scenario, float(defs.sum()))
    fx = SCMS[scenario.scm](scenario, defs, eq, n, rng, stage, force)
    f, share = cfg["def_reduction_factor"], cfg["max_reduction_share"]

    env = fx.env_damage
    reduced = reduce_damage(env, defs[None, :], f, share)
    for name in fx.unreduced:
        if name in comp.names:
            k = comp.index(name)
            reduced[:, k] = env[:, k]
    hp = np.maximum(0.0, comp.hp[None, :] - reduced)

    p_det = np.clip(fx.delta + eq.detection, 0.01, 0.95)
    rounds = np.maximum(1, np.floor(10 * fx.rho)).astype(int)
    ie, ic = comp.index("engine"), comp.index("cockpit")
    pre_lost = (hp[:, ie] <= 0) | (hp[:, ic] <= 0)
    detected = (rng.random(n) < p_det) & ~pre_lost
    hit_count = np.zeros(n, dtype=int)
    idx = np.flatnonzero(detected)
    if idx.size:
        dmg, hits = _combat(
            hp[idx], defs, comp.weights, rounds[idx], fx.alpha[idx], fx.mu[idx], agil, rng, cfg
        )
        hp[idx] = np.maximum(0.0, hp[idx] - reduce_damage(dmg, defs[None, :], f, share))
        hit_count[idx] = hits
    crit_idx = np.flatnonzero(comp.critical)
    dead = hp[:, crit_idx] <= 0
    survived = ~dead.any(axis=1)
    first = np.argmax(dead, axis=1)
    failure = np.where(survived, "", np.array(comp.names)[crit_idx][first])
    return Outcome(
        survived=survived,
        hit_count=hit_count,
        detected=detected,
        failure=failure,
        hp=hp,
        effects=fx,
        defs=defs,
        agility=agil,
    )


def survival_rate(
    scenario: Scenario,
    design: Mapping[str, float] | None,
    n: int = 1000,
    seed: int | np.random.Generator = 0,
    equipment: Mapping[str, Any] | None = None,
    stage: int = 2,
) -> float:
    """Fraction of ``n`` drones that return (stage 2 by default, the benchmark's metric)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return float(simulate(scenario, design, n, rng, equipment, stage).survived.mean())
