"""MedVersa medical knowledge-editing data: record schemas, loader/validator and metrics.

Pure domain code (no Inspect imports): :mod:`.schema` validates MedVersa, MedCF and MedFE
records and turns them into one evaluation view; :mod:`.load` reads a file or a named dataset
(``python -m environments.medversa.load PATH --json``); :mod:`.metrics` implements the
white-box token metrics and the black-box text-match deviation of the spec.
"""

from typing import Any

from environments.medversa.schema import (
    EditCase,
    LocalityQuery,
    RecordError,
    detect_format,
    to_case,
    validate_record,
)

__all__ = [
    "SAMPLE_PATH",
    "EditCase",
    "LocalityQuery",
    "RecordError",
    "detect_format",
    "load_dataset",
    "load_records",
    "summarize",
    "to_case",
    "validate_record",
]

_LAZY = {"SAMPLE_PATH", "load_dataset", "load_records", "summarize"}


def __getattr__(name: str) -> Any:
    """Loader names resolve lazily, so ``python -m environments.medversa.load`` runs cleanly."""
    if name in _LAZY:
        from environments.medversa import load

        return getattr(load, name)
    raise AttributeError(name)
