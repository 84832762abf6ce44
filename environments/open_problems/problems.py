"""The problem catalogue: objective direction, reference values, verifier, initial program.

``combined_score`` is the higher-is-better fitness an evolutionary search maximises: the
objective itself for a maximisation problem, its reciprocal for a minimisation problem
(so 1/bound for the autocorrelation bound); an invalid solution has fitness 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from environments.open_problems.autocorrelation import verify_autocorrelation
from environments.open_problems.circle_packing import TOLERANCE, verify_circle_packing
from environments.open_problems.verdict import Verdict

INITIAL_PROGRAMS = Path(__file__).parent / "initial_programs"
SOLUTION_FILE = "solution.json"
"""What a program must write in its working directory: the solution as JSON."""


@dataclass(frozen=True)
class Problem:
    """One open problem: how to verify a solution and what the references are."""

    name: str
    direction: Literal["maximize", "minimize"]
    best_known: float
    alphaevolve: float
    trivial: float
    """The objective of a trivial valid answer (score given to an invalid one)."""
    statement: str
    verifier: Callable[[Any], Verdict]

    def verify(self, data: Any) -> Verdict:
        """Verify parsed JSON (a verifier never raises on bad input)."""
        return self.verifier(data)

    def combined_score(self, verdict: Verdict) -> float:
        """Higher-is-better fitness of a verdict (0 when invalid)."""
        if not verdict.valid or verdict.score is None:
            return 0.0
        if self.direction == "maximize":
            return verdict.score
        return 1.0 / verdict.score if verdict.score > 0 else 0.0

    def initial_program(self) -> str:
        """Source of the shipped initial program (valid, far from the best known)."""
        return (INITIAL_PROGRAMS / f"{self.name}.py").read_text(encoding="utf-8")

    def better(self, a: float, b: float) -> bool:
        """Whether objective ``a`` is strictly better than ``b``."""
        return a > b if self.direction == "maximize" else a < b


PROBLEMS: dict[str, Problem] = {
    "circle_packing": Problem(
        name="circle_packing",
        direction="maximize",
        best_known=2.63598308,
        alphaevolve=2.63586276,
        trivial=0.0,
        statement=(
            "Place 26 non-overlapping circles inside the unit square [0,1]x[0,1] so that the "
            "sum of their radii is as large as possible. The solution is a JSON list of 26 "
            f"[x, y, r] triples (tolerance {TOLERANCE} on containment and overlap)."
        ),
        verifier=verify_circle_packing,
    ),
    "first_autocorrelation": Problem(
        name="first_autocorrelation",
        direction="minimize",
        best_known=1.503133,
        alphaevolve=1.503164,
        trivial=2.0,
        statement=(
            "Find a non-negative step function f on [-1/4, 1/4] (n equal steps) that makes "
            "max_t (f*f)(t) / (integral of f)^2 as small as possible: an upper bound on the "
            "first autocorrelation constant. The solution is a JSON list of the n step heights."
        ),
        verifier=verify_autocorrelation,
    ),
}


def get_problem(name: str) -> Problem:
    """A problem by name, with the known names in the error."""
    try:
        return PROBLEMS[name]
    except KeyError:
        known = ", ".join(sorted(PROBLEMS))
        raise ValueError(f"unknown problem {name!r}; known: {known}") from None


def verify(name: str, data: Any) -> Verdict:
    """Verify parsed JSON against problem ``name``."""
    return get_problem(name).verify(data)
