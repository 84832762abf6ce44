"""The program database: a population split into islands, with elitist parent sampling.

Why islands: each island evolves on its own, so one lucky lineage cannot take over the
whole population; every ``migration_interval`` steps each island's best program is copied
to the next island (a ring), which spreads progress slowly. Within an island a parent is
one of the ``elite_size`` fittest programs with probability ``exploitation`` and a uniform
pick otherwise (exploration). When an island exceeds its share of ``population_size``
its least fit programs are dropped (never its best). Only programs that ran and were
verified join the population; every candidate, kept or not, is in the journal.

MAP-Elites grid (``feature_bins > 0``, as ThetaEvolve inherits from OpenEvolve): each island
is also a grid of ``feature_bins x feature_bins`` cells over two features of a program,
*complexity* (its length relative to the seed program, binned over ``[0, 2)``, longer goes
to the last bin) and *diversity* (``1 -`` difflib's line-similarity ratio to the seed
program, binned over ``[0, 1]``). A cell holds one program, the fittest seen for it:
a new program takes an empty cell, replaces an incumbent it strictly beats (the incumbent
leaves the island; ties keep the incumbent, the earlier one), and is otherwise not kept.
So the island keeps the best program of every behaviour niche instead of many near-copies
of one lineage, and parent sampling (elite or uniform) draws from the niches' bests.
"""

from __future__ import annotations

import difflib
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
    feature_bins: int = 0
    """Bins per feature of the MAP-Elites grid (0: no grid, islands are plain populations)."""
    reference_code: str = ""
    """The seed program the grid's features are measured against (set by :meth:`seed`)."""
    programs: dict[str, Program] = field(default_factory=dict)
    islands: list[list[str]] = field(default_factory=list)
    cells: list[dict[str, str]] = field(default_factory=list)
    """Per island: grid cell (``"complexity,diversity"``) -> the program id holding it."""

    def __post_init__(self) -> None:
        if self.num_islands < 1:
            raise ValueError("num_islands must be >= 1")
        if self.feature_bins < 0:
            raise ValueError("feature_bins must be >= 0")
        if not self.islands:
            self.islands = [[] for _ in range(self.num_islands)]
        if not self.cells:
            self.cells = [{} for _ in range(self.num_islands)]

    # ------------------------------------------------------------------ population

    def seed(self, code: str, score: float, metrics: dict[str, Any] | None = None) -> None:
        """Put the initial program on every island (ids ``init-<island>``); it is also the
        grid's reference program."""
        self.reference_code = code
        for island in range(self.num_islands):
            self.add(Program(f"init-{island}", code, score, None, island, 0, dict(metrics or {})))

    # ------------------------------------------------------------------ the grid

    def features(self, code: str) -> tuple[float, float]:
        """``(complexity, diversity)`` of ``code`` against the reference program."""
        ref = self.reference_code or code
        complexity = len(code) / max(1, len(ref))
        ratio = difflib.SequenceMatcher(None, ref.splitlines(), code.splitlines(),
                                        autojunk=False).ratio()
        return complexity, 1.0 - ratio

    def cell_of(self, code: str) -> str:
        """The grid cell ``"i,j"`` of ``code`` (``feature_bins`` must be > 0)."""
        if self.feature_bins < 1:
            raise ValueError("the database has no grid (feature_bins = 0)")
        bins = self.feature_bins
        complexity, diversity = self.features(code)
        i = min(bins - 1, int(complexity / 2.0 * bins))
        j = min(bins - 1, int(diversity * bins))
        return f"{i},{j}"

    def add(self, program: Program) -> bool:
        """Add ``program`` to its island (the grid's rule first, when there is a grid), then
        evict the island's worst beyond capacity; True if it joined the island."""
        if program.id in self.programs:
            return program.id in self.islands[program.island]  # a journal replayed twice
        self.programs[program.id] = program
        members = self.islands[program.island]
        if self.feature_bins > 0:
            cell = self.cell_of(program.code)
            program.metrics["cell"] = cell
            grid = self.cells[program.island]
            incumbent = grid.get(cell)
            if incumbent is not None and not program.score > self.programs[incumbent].score:
                return False  # the cell keeps its fitter (or earlier, on a tie) program
            if incumbent is not None and incumbent in members:
                members.remove(incumbent)
            grid[cell] = program.id
        members.append(program.id)
        capacity = max(1, self.population_size // self.num_islands)
        while len(members) > capacity:
            worst = min(members, key=lambda pid: self.programs[pid].score)
            members.remove(worst)
            self._leave_grid(program.island, worst)
        return program.id in members

    def _leave_grid(self, island: int, pid: str) -> None:
        grid = self.cells[island]
        for cell, holder in list(grid.items()):
            if holder == pid:
                del grid[cell]

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
                "feature_bins": self.feature_bins,
                "reference_code": self.reference_code,
            },
            "programs": [p.to_json() for p in self.programs.values()],
            "islands": self.islands,
            "cells": self.cells,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Database:
        """Inverse of :meth:`to_json`."""
        programs = {p["id"]: Program.from_json(p) for p in data["programs"]}
        return cls(**data["config"], programs=programs, islands=data["islands"],
                   cells=data.get("cells") or [])
