"""Reading and writing the generated world and scenario set (the shipped seed lives in
``data/``). JSON with sorted keys and fixed separators, so the same seed gives the same
bytes; scenarios are JSON Lines, one scenario per line, so files diff line by line."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from environments.worldtravel.model import World
from environments.worldtravel.scenario import Scenario

DATA_DIR = Path(__file__).parent / "data"
WORLD_FILE = "world.json"
SCENARIO_FILE = "scenarios.jsonl"


def dumps(record: Any) -> str:
    """Canonical JSON text of a record (sorted keys, no spaces)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def write(out: Path, world: World, scenarios: list[Scenario]) -> tuple[Path, Path]:
    """Write ``world.json`` and ``scenarios.jsonl`` under ``out``; returns both paths."""
    out.mkdir(parents=True, exist_ok=True)
    world_path, scenario_path = out / WORLD_FILE, out / SCENARIO_FILE
    world_path.write_text(dumps(world.to_record()) + "\n", encoding="utf-8")
    scenario_path.write_text(
        "".join(dumps(s.to_record()) + "\n" for s in scenarios), encoding="utf-8"
    )
    return world_path, scenario_path


def read_world(directory: Path | None = None) -> World:
    """The world stored in ``directory`` (default: the shipped one)."""
    if directory is None:
        return shipped_world()
    return World.from_record(json.loads((directory / WORLD_FILE).read_text(encoding="utf-8")))


def read_scenarios(directory: Path | None = None) -> list[Scenario]:
    """The scenarios stored in ``directory`` (default: the shipped ones)."""
    if directory is None:
        return list(shipped_scenarios())
    lines = (directory / SCENARIO_FILE).read_text(encoding="utf-8").splitlines()
    return [Scenario.from_record(json.loads(line)) for line in lines if line.strip()]


@functools.cache
def shipped_world() -> World:
    """The shipped world (seed 0), loaded once per process."""
    return read_world(DATA_DIR)


@functools.cache
def shipped_scenarios() -> tuple[Scenario, ...]:
    """The shipped 150 scenarios, loaded once per process."""
    return tuple(read_scenarios(DATA_DIR))


@functools.cache
def scenario_index() -> dict[str, Scenario]:
    """Shipped scenarios by id."""
    return {s.id: s for s in shipped_scenarios()}
