"""The result of ``analyze`` and its JSON form.

Why its own module: reports and the CLI depend on this shape, not on the engines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl


@dataclass
class AnalysisResult:
    """Everything ``analyze`` found; ``to_dict`` is the stable JSON form."""

    anova: pl.DataFrame
    variance_shares: pl.DataFrame
    marginal_means: pl.DataFrame
    pairwise: pl.DataFrame
    effects: pl.DataFrame
    robustness: dict[str, Any]
    attribution: dict[str, Any]
    power: dict[str, Any]
    model: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable: NaN and infinities become None."""
        return clean(
            {
                "anova": self.anova.to_dicts(),
                "variance_shares": self.variance_shares.to_dicts(),
                "marginal_means": self.marginal_means.to_dicts(),
                "pairwise": self.pairwise.to_dicts(),
                "effects": self.effects.to_dicts(),
                "robustness": self.robustness,
                "attribution": self.attribution,
                "power": self.power,
                "model": self.model,
            }
        )


def clean(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
