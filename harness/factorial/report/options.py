"""A report's options: defaults, the keyword set the entry points share, the resolved spec.

Why one place: ``report_data`` and ``build_report`` take the same options; declaring them
once keeps their names and defaults from drifting apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

SCHEMA_VERSION = "1.1"
"""Version of ``report.json``'s layout; bumped (major) when a field changes meaning."""

DEFAULT_RESPONSE = "score_value"
DEFAULT_ITEM = "sample_id"
DEFAULT_ORDER = 2


@dataclass(frozen=True)
class Spec:
    """What one report analyses (resolved from the arguments and the data)."""

    response: str
    score_key: str | None
    factors: list[str]
    item: str
    order: int
    family: str = "gaussian"
    item_mode: str | None = None
    anova_type: int = 2
    seed: str | None = None
    headline_factor: str | None = None
    lower_is_better: bool = False
    """The analysed score's direction (the task's ``eval.yaml``): which level is "best"."""



class ReportOptions(TypedDict, total=False):
    """Keyword options of the report entry points (defaults in brackets).

    response: column analysed [``score_value``]; score_key: which score key [the only one];
    factors: factor columns [those in the eval metadata]; item: item column [``sample_id``];
    order: highest interaction order [2]; title: report title [names the study];
    study: keep only this study's logs; command: command line recorded as the origin;
    family: ``gaussian`` or ``binomial``; item_mode: ``fixed``, ``cluster``, ``random`` or
    None; anova_type: 2 or 3; headline_factor: the factor the attribution is about
    [the study file's ``headline_factor``, else ``model`` when a factor, else the first];
    skip_bad_logs: skip a log that cannot be read, listed in ``data.counting`` [refuse];
    cost: add the cost section (tokens, seconds per sample; :mod:`.cost`) [no];
    pricing: an Inspect model-cost config pricing that section in dollars (implies cost).
    """

    response: str
    score_key: str | None
    factors: Sequence[str] | None
    item: str
    order: int
    title: str | None
    study: str | None
    command: str | None
    family: str
    item_mode: str | None
    anova_type: int
    headline_factor: str | None
    skip_bad_logs: bool
    cost: bool
    pricing: str | None


def check_options(options: Mapping[str, object]) -> None:
    """Reject an unknown option, as a plain keyword signature would."""
    unknown = sorted(set(options) - ReportOptions.__optional_keys__)
    if unknown:
        raise TypeError(f"unexpected report option(s): {', '.join(unknown)}")
