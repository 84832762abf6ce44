"""What a study file may set about a cell's resources (``resources:``, ``resource_levels:``).

Its own module so that :mod:`harness.factorial.study` (which validates study files) and
:mod:`harness.factorial.resources` (which derives each cell's reservation and needs the
study's types) do not import each other.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness.sandbox.limits import parse_size

__all__ = ["ResourceSpec"]


class ResourceSpec(BaseModel):
    """Resource fields a study sets (each optional: an unset one keeps the derived value)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    num_cpus: float | None = Field(default=None, ge=0)
    num_gpus: float | None = Field(default=None, ge=0)
    memory: int | None = Field(default=None, ge=0)
    """Bytes, or a size such as ``4GiB`` (binary units, as the sandbox limits)."""

    @field_validator("memory", mode="before")
    @classmethod
    def _size(cls, value: Any) -> Any:
        return None if value is None else parse_size(value)
