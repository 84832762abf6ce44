"""The result every verifier returns: valid or not, the objective, and why."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Verdict:
    """One verification: ``score`` is the objective when ``valid`` (else ``None``)."""

    valid: bool
    score: float | None
    reason: str

    @classmethod
    def reject(cls, reason: str) -> Verdict:
        """An invalid solution, with the reason a person can act on."""
        return cls(valid=False, score=None, reason=reason)

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON object: ``{"valid": bool, "score": x, "reason": str}``."""
        return asdict(self)


def as_real(value: Any, where: str) -> float:
    """A finite real from JSON, or ``ValueError`` naming ``where`` (bools are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where} is not a number: {value!r}")
    real = float(value)
    if not math.isfinite(real):
        raise ValueError(f"{where} is not finite: {value!r}")
    return real
