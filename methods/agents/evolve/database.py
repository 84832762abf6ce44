"""The program database: a population split into islands, with elitist parent sampling.

Why islands: each island evolves on its own, so one lucky lineage cannot take over the
whole population; every ``migration_interval`` steps each island's best program is copied
to the next island (a ring), which spreads progress slowly. Within an island a parent is
one of the ``elite_size`` fittest programs with probability ``exploitation`` and a uniform
pick otherwise (exploration). When an island exceeds its share of ``population_size``
its least fit programs are dropped (never its best). Only programs that ran and were
verified join the population; every candidate, kept or not, is in the journal.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Program:
    """One program and where it came from."""

    id: str
    code: str
    score: float
    """Fitness (``combined_score``, higher is better)."""
    parent_id: str | None
    island: int
    step: int
    metrics: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Program:
        """Inverse of :meth:`to_json`."""
        return cls(**data)


@dataclass
class Database:
    """Islands of programs; all state is plain data so a checkpoint is a JSON dump."""

    num_islands: int = 4
    population_size: int = 1000
    elite_size: int = 3
    exploitation: float = 0.7
    migration_interval: int = 5
    programs: dict[str, Program] = field(default_factory=dict)
    islands: list[list[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.num_islands < 1:
            raise ValueError("num_islands must be >= 1")
        if not self.islands:
            self.islands = [[] for _ in range(self.num_islands)]

    # ------------------------------------------------------------------ population

    def seed(self, code: str, score: float, metrics: dict[str, Any] | None = None) -> None:
        """Put the initial program on every island (ids ``init-<island>``)."""
        for island in range(self.num_islands):
            self.add(Program(f"init-{island}", code, score, None, island, 0, metrics or {}))

    def add(self, program: Program) -> None:
        """Add ``program`` to its island, evicting the island's worst beyond capacity."""
        if program.id in self.programs:
            return  # replaying a journal twice must not duplicate programs
        self.programs[program.id] = program
        members = self.islands[program.island]
        members.append(program.id)
        capacity = max(1, self.population_size // self.num_islands)
        while len(members) > capacity:
            worst = min(members, key=lambda pid: self.programs[pid].score)
            members.remove(worst)

    def best(self, island: int | None = None) -> Program:
        """The fittest program (of one island, or overall); earliest wins ties."""
        ids = self.islands[island] if island is not None else [p for i in self.islands for p in i]
        if not ids:
            raise ValueError("the database is empty")
        return max((self.programs[pid] for pid in ids), key=lambda p: p.score)

    def __len__(self) -> int:
        return sum(len(members) for members in self.islands)

    # ------------------------------------------------------------------ sampling

    def sample_parent(self, island: int, rng: random.Random) -> Program:
        """An elite of the island with probability ``exploitation``, else any member."""
        members = [self.programs[pid] for pid in self.islands[island]]
        if rng.random() < self.exploitation:
            members = sorted(members, key=lambda p: -p.score)[: self.elite_size]
        return rng.choice(members)

    def inspirations(self, island: int, exclude: str, k: int) -> list[Program]:
        """Up to ``k`` of the island's fittest programs other than ``exclude`` (prompt context)."""
        members = [self.programs[pid] for pid in self.islands[island] if pid != exclude]
        return sorted(members, key=lambda p: -p.score)[:k]

    def migrate(self) -> None:
        """Copy each island's best to the next island (ring), unless it is already there."""
        bests = [self.best(i) for i in range(self.num_islands)]
        for source, program in enumerate(bests):
            target = (source + 1) % self.num_islands
            copy_id = f"{program.id}@{target}"
            if copy_id in self.programs or target == source:
                continue
            self.add(Program(copy_id, program.code, program.score, program.id, target,
                             program.step, dict(program.metrics)))

    # ------------------------------------------------------------------ persistence

    def to_json(self) -> dict[str, Any]:
        """Everything, as JSON-ready data (the checkpoint)."""
        return {
            "config": {
                "num_islands": self.num_islands,
                "population_size": self.population_size,
                "elite_size": self.elite_size,
                "exploitation": self.exploitation,
                "migration_interval": self.migration_interval,
            },
            "programs": [p.to_json() for p in self.programs.values()],
            "islands": self.islands,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Database:
        """Inverse of :meth:`to_json`."""
        programs = {p["id"]: Program.from_json(p) for p in data["programs"]}
        return cls(**data["config"], programs=programs, islands=data["islands"])
