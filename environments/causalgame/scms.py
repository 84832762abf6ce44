"""The structural causal models: environment sampling and its effects, vectorised over drones.

Each SCM maps (scenario, design DEF vector, equipment, n, rng, stage) to an ``Effects``
record of arrays with one row per drone. The common pipeline (``sim.py``) then applies the
damage, rolls detection and runs combat. Formulas follow the spec's sections 3-7; the
docstrings name the section so each line can be checked against it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from environments.causalgame.equipment import EquipmentEffect
from environments.causalgame.scenarios import Scenario


@dataclass
class Effects:
    """What an SCM decides for ``n`` drones (all arrays have ``n`` rows)."""

    visible: dict[str, np.ndarray]
    hidden: dict[str, np.ndarray]
    env_damage: np.ndarray  # (n, C) raw damage per component
    delta: np.ndarray  # detection base
    rho: np.ndarray  # combat-rounds modifier
    alpha: np.ndarray  # enemy-accuracy modifier
    mu: np.ndarray  # combat damage modifier
    unreduced: tuple[str, ...] = ("antenna",)  # parts whose env damage skips DEF reduction
    extra: dict[str, Any] = field(default_factory=dict)


Force = dict[str, Any] | None
SCM = Callable[
    [Scenario, np.ndarray, EquipmentEffect, int, np.random.Generator, int, Force], Effects
]


def _u(rng: np.random.Generator, lo: float, hi: float, n: int) -> np.ndarray:
    return rng.uniform(lo, hi, n)


def antenna_trap(
    sc: Scenario,
    defs: np.ndarray,
    eq: EquipmentEffect,
    n: int,
    rng: np.random.Generator,
    stage: int,
    force: Force,
) -> Effects:
    """Spec section 3: storms destroy antennas; a live antenna emits and draws long combats."""
    p = sc.scm_params
    comp = sc.components
    w = rng.random(n)
    storm = w > 1.0 - p["storm_probability"]
    pattern = np.where(storm, w, w / 2.0)
    wind = np.where(storm, _u(rng, 40, 80, n), _u(rng, 5, 30, n))
    humidity = np.where(storm, _u(rng, 70, 95, n), _u(rng, 30, 60, n))
    temperature = np.where(storm, _u(rng, 10, 20, n), _u(rng, 20, 35, n))
    high = wind > p["wind_threshold_high"]
    mid = (wind > p["wind_threshold_low"]) & ~high
    damage = np.zeros((n, len(comp.names)))
    predicted: dict[str, np.ndarray] = {}
    bands = {
        "antenna": ((55, 75), (35, 55), p["antenna_def_factor"]),
        "camera": ((25, 40), (10, 25), p["camera_def_factor"]),
        "gun": ((35, 50), (20, 35), p["gun_def_factor"]),
    }
    for part, (hi_band, mid_band, factor) in bands.items():
        k = comp.index(part)
        raw = np.where(
            high,
            np.floor(_u(rng, *hi_band, n)),
            np.where(mid, np.floor(_u(rng, *mid_band, n)), 0.0),
        )
        mitigated = np.where(
            raw > 0,
            np.maximum(1.0, raw - np.minimum(np.floor(factor * defs[k]), np.floor(0.8 * raw))),
            0.0,
        )
        damage[:, k] = mitigated
        predicted[part] = np.maximum(0.0, comp.hp[k] - mitigated)

    def low_def(d: float) -> float:
        return 1.0 + (1.0 - d / 15.0) if d < 15 else 1.0

    for part, (lo, hi), gate in (
        ("wing", (40, 70), wind > 50),
        ("engine", (40, 70), wind > 50),
        ("body", (30, 55), pattern > 0.7),
        ("cockpit", (30, 55), pattern > 0.7),
    ):
        k = comp.index(part)
        damage[:, k] = np.where(gate, np.floor(_u(rng, lo, hi, n) * low_def(float(defs[k]))), 0.0)

    h_ant, h_cam, h_gun = predicted["antenna"], predicted["camera"], predicted["gun"]
    emitting = h_ant > 0
    signal = np.minimum(1.0, h_ant / comp.hp[comp.index("antenna")])
    base = p["base_detection_clear"] * (1 - pattern) + p["base_detection_storm"] * pattern
    cam_hp = comp.hp[comp.index("camera")]
    kappa = np.minimum(1.0, h_cam / cam_hp)
    cam_alive = h_cam > 0
    penalty = p["camera_destroyed_detection_penalty"]
    stealth = np.where(
        cam_alive,
        p["stealth_mode_reduction"] * (1 - p["camera_evasion_bonus"] * kappa),
        p["stealth_mode_reduction"] * penalty,
    )
    alpha = np.where(cam_alive, 1 - p["camera_evasion_bonus"] * kappa, penalty)
    delta = np.where(emitting, base + p["antenna_emission_boost"] * signal, base * stealth)
    intensity = p["combat_intensity_clear"] * (1 - pattern) + p["combat_intensity_storm"] * pattern
    rho = intensity * np.where(emitting, 1.8, 0.3)
    gun_hp = comp.hp[comp.index("gun")]
    mu = np.where(
        h_gun > 0,
        1 - p["gun_damage_reduction"] * np.minimum(1.0, h_gun / gun_hp),
        p["gun_destroyed_damage_penalty"],
    )
    return Effects(
        visible={"wind_speed": wind, "humidity": humidity, "temperature": temperature},
        hidden={"weather_pattern": pattern, "storm": storm, "antenna_emitting": emitting},
        env_damage=damage,
        delta=delta,
        rho=rho,
        alpha=alpha,
        mu=mu,
    )


_ALTITUDES = ("low", "medium", "high")


def deployment_zone(
    sc: Scenario,
    defs: np.ndarray,
    eq: EquipmentEffect,
    n: int,
    rng: np.random.Generator,
    stage: int,
    force: Force,
) -> Effects:
    """Spec sections 4-5: a hidden zone drives altitude (visible) and EMI (causal)."""
    p = sc.scm_params
    comp = sc.components
    zones = p["zones"]
    names = list(zones)
    probs = np.array([zones[z]["p2" if stage == 2 else "p1"] for z in names], dtype=float)
    if force and "zone" in force:
        zone_idx = np.full(n, names.index(force["zone"]))
        jitter = float(force.get("emi_jitter", 0.1))
        emi = np.clip(float(force["emi"]) + _u(rng, -jitter, jitter, n), 0, 1)
    else:
        zone_idx = rng.choice(len(names), size=n, p=probs / probs.sum())
        emi_base = np.array([zones[z]["emi"] for z in names])[zone_idx]
        emi = np.clip(emi_base + _u(rng, -0.1, 0.1, n), 0, 1)
    zone_alt = np.array([_ALTITUDES.index(zones[z]["altitude"]) for z in names])[zone_idx]
    alt = np.full(n, _ALTITUDES.index(eq.flight_profile)) if eq.flight_profile else zone_alt
    wind_res = np.array([0.2, 0.5, 0.8])[alt] + _u(rng, -0.1, 0.1, n)
    signal = np.array([0.90, 0.85, 0.75])[alt] + _u(rng, -0.05, 0.05, n)
    temp_lo, temp_hi = np.array([15.0, 10.0, -5.0])[alt], np.array([30.0, 20.0, 10.0])[alt]
    temperature = temp_lo + (temp_hi - temp_lo) * rng.random(n)

    shield = float(defs[comp.index("shield")]) if p.get("read_shield", True) else 0.0
    r_s = min(p["shield_effectiveness"] * shield, p["max_shield_reduction"])
    r = min(0.95, r_s + eq.emi_resistance)
    e = emi * (1 - r)
    theta = p["emi_threshold"]
    m_alt = np.array([p["altitude_signal_modifier"][a] for a in _ALTITUDES])[alt]
    c = np.clip((e >= theta) * (e - theta) * p["emi_base_failure_rate"] + m_alt, 0, 0.95)

    damage = np.zeros((n, len(comp.names)))
    ie, iw, ib, ic = (comp.index(x) for x in ("engine", "wing", "body", "cockpit"))
    is_high, is_mid = alt == 2, alt == 1
    damage[:, ie] += np.where(is_high, np.floor(_u(rng, 5, 15, n)), 0)
    damage[:, iw] += np.where(
        is_high, np.floor(_u(rng, 8, 20, n)), np.where(is_mid, np.floor(_u(rng, 3, 10, n)), 0)
    )
    emi_dmg = np.where(e > theta, np.floor((e - theta) * 80), 0.0)
    damage[:, comp.index("antenna")] += emi_dmg
    damage[:, comp.index("camera")] += np.where(e > 0.4, np.floor(0.6 * emi_dmg), 0.0)
    crash = rng.random(n) < c
    q = _u(rng, 0.6, 1.0, n) * c * crash
    for k, scale in ((ie, 60), (iw, 50), (ib, 40), (ic, 35)):
        damage[:, k] += np.floor(scale * q)
    delta = 0.20 + 0.5 * c
    rho = np.where(c > 0.5, 1.8, 1.0)
    mu = np.where(e > 0.5, 1 + 0.5 * (e - 0.5), 1.0)
    zone_names = np.array(names)[zone_idx]
    return Effects(
        visible={
            "altitude_band": np.array(_ALTITUDES)[alt],
            "wind_resistance": wind_res,
            "signal_strength": signal,
            "temperature": temperature,
        },
        hidden={"zone": zone_names, "emi": emi, "effective_emi": e, "comm_failure": c},
        env_damage=damage,
        delta=delta,
        rho=rho,
        alpha=np.ones(n),
        mu=mu,
    )


def base(
    sc: Scenario,
    defs: np.ndarray,
    eq: EquipmentEffect,
    n: int,
    rng: np.random.Generator,
    stage: int,
    force: Force,
) -> Effects:
    """Spec section 6: the fallback SCM (no environmental damage; fixed detection)."""
    p = sc.scm_params
    return Effects(
        visible={
            "wind": _u(rng, 10, 40, n),
            "humidity": _u(rng, 30, 70, n),
            "temperature": _u(rng, 15, 30, n),
        },
        hidden={},
        env_damage=np.zeros((n, len(sc.components.names))),
        delta=np.full(n, float(p.get("detection", 0.3))),
        rho=np.full(n, float(p.get("rounds_modifier", 1.0))),
        alpha=np.ones(n),
        mu=np.ones(n),
    )


def weather_noise(
    sc: Scenario,
    defs: np.ndarray,
    eq: EquipmentEffect,
    n: int,
    rng: np.random.Generator,
    stage: int,
    force: Force,
) -> Effects:
    """Spec section 7: survival is a logistic of antenna/engine DEF that flips with storms."""
    p = sc.scm_params
    comp = sc.components
    ps = p["storm_probability_stage2" if stage == 2 else "storm_probability_stage1"]
    w = rng.random(n)
    storm = w > 1.0 - ps
    wind = np.where(storm, _u(rng, 40, 80, n), _u(rng, 5, 30, n))
    humidity = np.where(storm, _u(rng, 70, 95, n), _u(rng, 30, 60, n))
    temperature = np.where(storm, _u(rng, 10, 20, n), _u(rng, 20, 35, n))
    a = float(defs[comp.index("antenna")])
    g = float(defs[comp.index("engine")])
    slope = p["antenna_slope"] * a / p["antenna_scale"]
    x = np.where(storm, slope, -slope) + p["logit_offset"]
    engine = p["engine_bonus"] * min(1.0, max(0.0, (g - p["engine_floor"]) / p["engine_span"]))
    survive_p = np.clip(1 / (1 + np.exp(-x)) + engine, 0, 1)
    lost = rng.random(n) >= survive_p
    damage = np.zeros((n, len(comp.names)))
    damage[:, comp.index("engine")] = np.where(lost, 1000.0, 0.0)
    return Effects(
        visible={"wind_speed": wind, "humidity": humidity, "temperature": temperature},
        hidden={"storm": storm, "survival_probability": survive_p},
        env_damage=damage,
        delta=np.full(n, p["detection"]),
        rho=np.zeros(n),
        alpha=np.ones(n),
        mu=np.ones(n),
    )


SCMS: dict[str, SCM] = {
    "antenna_trap": antenna_trap,
    "deployment_zone": deployment_zone,
    "deployment_zone_shift": deployment_zone,
    "base": base,
    "weather_noise": weather_noise,
}
