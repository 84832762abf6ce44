"""One CausalGame session: budgets, history, deploys, queries and the final submission.

Every misuse (bad design values, exhausted budgets, submitting twice) raises ``GameError``
with a message meant for the agent; the benchmark's tools turn it into a tool error, so a
sample never crashes on a malformed call. Randomness comes from three generators derived
from (seed, scenario): history, exploration and Stage 2. Stage 2 therefore scores the same
design identically whatever the agent did before submitting (common random numbers).

Because every draw comes from those generators in the order the actions consume them, a
game is a pure function of its constructor arguments and its action log (``actions``):
``Game(**spec).replay(actions)`` rebuilds it exactly, generator states included. That is
how a checkpointed episode resumes in a new process (the log is JSON; the numpy state is
not).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from environments.causalgame import archivist
from environments.causalgame.scenarios import Scenario, load_scenario
from environments.causalgame.sim import Outcome, design_vector, simulate

TOTAL_DRONES = 200
MAX_DEPLOYS = 10
MAX_BATCH = 50
QUERY_BUDGET = 10
STAGE2_FLEET = 1000
RESULT_ENV_KEYS = ("wind_speed", "humidity", "temperature", "uv_index")


class GameError(ValueError):
    """A rejected action; the message is shown to the agent."""


@dataclass
class Deployment:
    """One successful deploy call (kept for auto-submit and trajectory analysis)."""

    design: dict[str, float]
    equipment: dict[str, Any]
    count: int
    survived: int


@dataclass
class Game:
    """A seeded session of one scenario."""

    scenario_id: str
    seed: int = 0
    compat: str = "intended"
    enforce_ranges: bool | None = None
    enforce_budget: bool = False
    scenario: Scenario = field(init=False)
    history: list[dict[str, Any]] = field(init=False, default_factory=list)
    deployments: list[Deployment] = field(init=False, default_factory=list)
    drones_used: int = field(init=False, default=0)
    queries_used: int = field(init=False, default=0)
    discovered: set[str] = field(init=False, default_factory=set)
    final: dict[str, Any] | None = field(init=False, default=None)
    final_design: dict[str, Any] | None = field(init=False, default=None)
    actions: list[dict[str, Any]] = field(init=False, default_factory=list)
    """Every state-changing action that succeeded, in order, as JSON (see ``replay``)."""

    def __post_init__(self) -> None:
        self.scenario = load_scenario(self.scenario_id, self.compat)
        if self.enforce_ranges is None:
            self.enforce_ranges = self.compat == "intended"
        base = [int(self.seed) & 0xFFFFFFFF, self.scenario.index]
        self._rng_history = np.random.default_rng([*base, 0])
        self._rng = np.random.default_rng([*base, 1])
        self._rng_stage2 = np.random.default_rng([*base, 2])
        self._make_history()

    # ------------------------------------------------------------------ validation

    def validate_design(self, design: Any) -> dict[str, float]:
        """Normalised ``{component_def: value}`` or ``GameError`` with the reason."""
        if not isinstance(design, Mapping) or not design:
            raise GameError('Design cannot be empty: give e.g. {"engine_def": 20}.')
        comp = self.scenario.components
        lo, hi = self.scenario.def_range
        out: dict[str, float] = {}
        for key, value in design.items():
            name = str(key)[:-4] if str(key).endswith("_def") else str(key)
            if name not in comp.names:
                valid = ", ".join(f"{n}_def" for n in comp.names)
                raise GameError(f"Unknown component {key!r}. Valid keys: {valid}.")
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                try:
                    value = float(str(value))
                except ValueError:
                    raise GameError(f"{key}: DEF must be a number, got {value!r}.") from None
            if not math.isfinite(value) or value < 0:
                raise GameError(f"{key}: DEF must be a finite number >= 0, got {value!r}.")
            if self.enforce_ranges and value > hi:
                raise GameError(f"{key}: DEF must be within [{lo:g}, {hi:g}], got {value:g}.")
            out[f"{name}_def"] = float(value)
        if self.enforce_budget:
            total = float(design_vector(self.scenario, out).sum())
            if total > self.scenario.def_budget:
                raise GameError(
                    f"Total DEF {total:g} exceeds the budget {self.scenario.def_budget:g}."
                )
        return out

    def validate_equipment(self, equipment: Any) -> dict[str, Any]:
        """Equipment as a dict; in intended mode unknown slots/options are errors."""
        if equipment is None:
            return {}
        if not isinstance(equipment, Mapping):
            raise GameError('equipment must be an object such as {"slot": "option"}.')
        if self.compat == "original":
            return dict(equipment)
        spec = self.scenario.equipment
        slots, toggles = spec.get("slots", {}), spec.get("toggles", {})
        zone = self.scenario.scm.startswith("deployment_zone")
        for key, value in equipment.items():
            if key == "flight_profile" and zone and value in ("low", "medium", "high"):
                continue
            if key in slots:
                if value not in slots[key]["options"]:
                    raise GameError(
                        f"{key}: unknown option {value!r}; options: "
                        f"{', '.join(slots[key]['options'])}."
                    )
            elif key in toggles:
                if not isinstance(value, bool):
                    raise GameError(f"{key} is a toggle: use true or false.")
            else:
                known = ", ".join([*slots, *toggles]) or "none"
                raise GameError(f"Unknown equipment slot {key!r}; available: {known}.")
        return dict(equipment)

    # ------------------------------------------------------------------ history

    def _make_history(self) -> None:
        n_init = max((int(c["count"]) for c in self.scenario.history), default=0)
        for i in range(n_init):
            cohort = next(c for c in self.scenario.history if _selected(c.get("select"), i))
            out = simulate(
                self.scenario,
                cohort["design"],
                1,
                self._rng_history,
                cohort.get("equipment"),
                1,
                cohort.get("force"),
            )
            record = _record(f"INIT-{i + 1:03d}", cohort["design"], out, 0)
            record["was_detected"] = bool(out.detected[0])
            if cohort.get("equipment"):
                record["equipment"] = dict(cohort["equipment"])
            self.history.append(record)

    def visible_history(self) -> list[dict[str, Any]]:
        """History as the agent sees it (failed flights hidden under selection bias)."""
        if self.scenario.hide_failed:
            return [r for r in self.history if r["status"] == "RETURNED"]
        return list(self.history)

    # ------------------------------------------------------------------ actions

    @property
    def game_over(self) -> bool:
        """True once the final design was submitted."""
        return self.final is not None

    @property
    def drones_remaining(self) -> int:
        """Stage-1 drones left."""
        return TOTAL_DRONES - self.drones_used

    def deploy(self, design: Any, count: Any = 1, equipment: Any = None) -> dict[str, Any]:
        """Fly ``count`` Stage-1 drones; returns the batch report (spec 9.2)."""
        if self.game_over:
            raise GameError("Game already over: the final design was submitted.")
        if isinstance(count, bool) or not isinstance(count, (int, float)) or count != int(count):
            raise GameError(f"count must be an integer between 1 and {MAX_BATCH}, got {count!r}.")
        count = int(count)
        if not 1 <= count <= MAX_BATCH:
            raise GameError(f"count must be between 1 and {MAX_BATCH}, got {count}.")
        if len(self.deployments) >= MAX_DEPLOYS:
            raise GameError(f"Deployment budget exhausted. Used {MAX_DEPLOYS}/{MAX_DEPLOYS} calls.")
        if self.drones_used + count > TOTAL_DRONES:
            raise GameError(f"Insufficient budget. Remaining: {self.drones_remaining}")
        clean = self.validate_design(design)
        equip = self.validate_equipment(equipment)
        out = simulate(self.scenario, clean, count, self._rng, equip, 1)
        start = len(self.history)
        for i in range(count):
            record = _record(f"SESSION-{start + i + 1:03d}", clean, out, i)
            if equip:
                record["equipment"] = dict(equip)
            self.history.append(record)
        self.drones_used += count
        survived = int(out.survived.sum())
        self.deployments.append(Deployment(clean, equip, count, survived))
        results = self._batch_results(out)
        self.actions.append({"op": "deploy", "design": dict(clean), "count": count,
                             "equipment": dict(equip), "survived": survived})
        last_env = {k: _py(v[-1]) for k, v in out.effects.visible.items()}
        return {
            "status": "BATCH_COMPLETE",
            "deployed": count,
            "survived": survived,
            "destroyed": count - survived,
            "average_hit_count": round(float(out.hit_count.sum()) / count, 3),
            "drones_remaining": self.drones_remaining,
            "deployments_remaining": MAX_DEPLOYS - len(self.deployments),
            "environment": last_env,
            "results": results,
        }

    def _batch_results(self, out: Outcome) -> list[dict[str, Any]]:
        keys = list(out.effects.visible)
        if self.compat == "original":
            keys = [k for k in keys if k in RESULT_ENV_KEYS]
        noise = self.scenario.observation_noise
        storm = out.effects.hidden.get("storm")
        rows = []
        for i in range(out.n):
            status = "RETURNED" if out.survived[i] else "DESTROYED"
            env = {k: _py(out.effects.visible[k][i]) for k in keys}
            hits = int(out.hit_count[i])
            row: dict[str, Any] = {}
            if noise and storm is not None:
                nu = float(self.scenario.scm_params["noise_storm" if storm[i] else "noise_clear"])
                env = {k: _noisy(v, nu, self._rng) for k, v in env.items()}
                hits = int(max(0, round(hits + self._rng.normal(0, hits * nu)))) if hits else 0
                if self._rng.random() < self.scenario.scm_params["status_flip_factor"] * nu:
                    status = "DESTROYED" if status == "RETURNED" else "RETURNED"
                row["def_remaining"] = {
                    n: _noisy(float(d), nu, self._rng)
                    for n, d in zip(self.scenario.components.names, out.defs, strict=True)
                }
            if self.scenario.hide_failed and status != "RETURNED":
                continue
            row.update(
                status=status,
                survived=status == "RETURNED",
                hit_count=hits,
                was_detected=bool(out.detected[i]),
                environment=env,
            )
            rows.append(row)
        return rows

    def submit(self, design: Any, equipment: Any = None, auto: bool = False) -> dict[str, Any]:
        """Evaluate the final design on the Stage-2 fleet (once)."""
        if self.game_over:
            raise GameError("Game already over: the final design was already submitted.")
        clean = self.validate_design(design)
        equip = self.validate_equipment(equipment)
        out = simulate(self.scenario, clean, STAGE2_FLEET, self._rng_stage2, equip, 2)
        rate = float(out.survived.mean())
        total_def = float(design_vector(self.scenario, clean).sum())
        score = 0.7 * rate + 0.3 * (1 - min(1.0, total_def / 300))
        victory = rate >= self.scenario.threshold
        self.final_design = {"design": clean, "equipment": equip, "auto_submitted": auto}
        self.final = {
            "status": "EVALUATION_COMPLETE",
            "fleet_size": STAGE2_FLEET,
            "survived": int(out.survived.sum()),
            "survival_rate": f"{rate * 100:.1f}%",
            "final_score": f"{score * 100:.1f}%",
            "victory": bool(victory),
            "victory_threshold": f"{self.scenario.threshold * 100:.1f}%",
            "message": "VICTORY! Mission accomplished!" if victory else "DEFEAT. Mission failed.",
            "survival": rate,
            "auto_submitted": auto,
        }
        self.actions.append({"op": "submit", "design": dict(clean), "equipment": dict(equip),
                             "auto": auto, "survived": self.final["survived"]})
        return {k: v for k, v in self.final.items() if k != "survival"}

    def best_observed(self) -> Deployment | None:
        """The deployed design with the best observed survival (ties: more drones)."""
        if not self.deployments:
            return None
        return max(self.deployments, key=lambda d: (d.survived / d.count, d.count))

    def status(self) -> dict[str, Any]:
        """Budgets and counters (spec 9.4); the scenario name stays hidden."""
        out: dict[str, Any] = {
            "experiment": "Canyon Mission",
            "drones_remaining": self.drones_remaining,
            "drones_used": self.drones_used,
            "total_drones": TOTAL_DRONES,
            "history_count": len(self.history),
            "victory_threshold": f"{self.scenario.threshold * 100:.1f}%",
            "stage2_fleet_size": STAGE2_FLEET,
            "game_over": self.game_over,
            "deployments_used": len(self.deployments),
            "deployments_remaining": MAX_DEPLOYS - len(self.deployments),
            "stage1_deployment_budget": MAX_DEPLOYS,
            "env_queries_used": self.queries_used,
            "env_queries_remaining": QUERY_BUDGET - self.queries_used,
            "env_query_budget": QUERY_BUDGET,
        }
        if self.final:
            out["final_evaluation"] = {k: v for k, v in self.final.items() if k != "survival"}
        return out

    def action_space(self) -> dict[str, Any]:
        """Advertised ranges and options (no hidden effects)."""
        sc = self.scenario
        lo, hi = sc.def_range
        comp = sc.components
        out: dict[str, Any] = {
            "design": {
                f"{n}_def": {"min": lo, "max": hi, "step": 1, "default": float(d)}
                for n, d in zip(comp.names, comp.default_def, strict=True)
            },
            "total_def_budget": sc.def_budget,
            "deploy_count": {"min": 1, "max": MAX_BATCH},
        }
        if sc.has_equipment:
            out["equipment"] = {
                "slots": {
                    s: {
                        "default": v["default"],
                        "options": {o: spec["description"] for o, spec in v["options"].items()},
                    }
                    for s, v in sc.equipment.get("slots", {}).items()
                },
                "toggles": {
                    t: {"default": v["default"], "description": v["description"]}
                    for t, v in sc.equipment.get("toggles", {}).items()
                },
                "note": "Actual effects may differ from the descriptions.",
            }
        return out

    def query(self, query: Any) -> dict[str, Any]:
        """The deterministic archivist (spec 10): refusals and budgets as released."""
        catalog = self.scenario.catalog
        if catalog is None:
            raise GameError(
                "Environment query not available in this experiment. Use "
                "deploy_drone to test hypotheses directly instead."
            )
        if self.queries_used >= QUERY_BUDGET:
            raise GameError(f"Query budget exhausted. Used {self.queries_used}/{QUERY_BUDGET}")
        text = str(query or "")
        self.queries_used += 1
        reason = archivist.refusal_reason(text)
        if reason or not text.strip():
            names: list[str] = []
            message, ok = f"Query rejected: {reason or 'empty query'}", False
        else:
            message, names = archivist.answer(text, catalog, self.discovered)
            ok = True
            self.discovered.update(names)
        self.actions.append({"op": "query", "query": text})
        return {
            "success": ok,
            "message": message,
            "discovered_variables": sorted(set(names)),
            "env_queries_used": self.queries_used,
            "env_queries_remaining": QUERY_BUDGET - self.queries_used,
        }

    def record_answer(self, names: list[str]) -> None:
        """Count one query answered outside the game (a model archivist) that unlocked
        ``names``; logged so that ``replay`` restores the budget and the unlocked set."""
        self.queries_used += 1
        self.discovered.update(names)
        self.actions.append({"op": "answer", "names": list(names)})

    def spec(self) -> dict[str, Any]:
        """The constructor arguments (JSON): with ``actions``, all a rebuild needs."""
        return {"scenario_id": self.scenario_id, "seed": int(self.seed), "compat": self.compat,
                "enforce_ranges": self.enforce_ranges, "enforce_budget": self.enforce_budget}

    def replay(self, actions: list[dict[str, Any]]) -> Game:
        """Re-apply a logged action sequence to this fresh game; returns ``self``.

        The generators advance exactly as they did the first time, so the game ends in the
        state it was in when the log was taken, and goes on as it would have. Each deploy and
        the submission re-check their logged survivor counts: a mismatch (another scenario
        file or simulator than the one that wrote the log) raises ``ValueError`` instead of
        silently continuing a different game.
        """
        if self.actions:
            raise ValueError("replay needs a fresh game (this one already has actions)")
        for i, action in enumerate(actions):
            op = action.get("op")
            if op == "deploy":
                self.deploy(action["design"], action["count"], action.get("equipment") or None)
                got = self.deployments[-1].survived
            elif op == "submit":
                self.submit(action["design"], action.get("equipment") or None,
                            auto=bool(action.get("auto", False)))
                got = int((self.final or {})["survived"])
            elif op == "query":
                self.query(action["query"])
                continue
            elif op == "answer":
                self.record_answer([str(n) for n in action["names"]])
                continue
            else:
                raise ValueError(f"action {i}: unknown op {op!r}")
            if got != int(action["survived"]):
                raise ValueError(
                    f"action {i} ({op}) replayed to {got} survivors, the log says "
                    f"{action['survived']}: not the game that wrote this log"
                )
        return self

    def oracle_design(self) -> tuple[dict[str, float], dict[str, Any]]:
        """The scenario's known best design (reference ceiling)."""
        return dict(self.scenario.optimum["design"]), dict(self.scenario.optimum["equipment"])


def _selected(select: Mapping[str, int] | None, i: int) -> bool:
    if not select:
        return True
    r = i % int(select["mod"])
    return r == select["eq"] if "eq" in select else r != select["ne"]


def _py(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    return round(value, 3) if isinstance(value, float) else value


def _noisy(value: Any, nu: float, rng: np.random.Generator) -> Any:
    if not isinstance(value, float) or value == 0:
        return value
    return round(max(0.0, value + float(rng.normal(0, abs(value) * nu))), 3)


def _record(rid: str, design: Mapping[str, float], out: Outcome, i: int) -> dict[str, Any]:
    return {
        "id": rid,
        "design": dict(design),
        "status": "RETURNED" if out.survived[i] else "DESTROYED",
        "hit_count": int(out.hit_count[i]),
        "environment": {k: _py(v[i]) for k, v in out.effects.visible.items()},
    }
