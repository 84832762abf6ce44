"""A study that is not a factorial design: named runs of one command each.

Why: some experiments are protocols with a driver of their own (MedVersa's lifelong and
full-protocol runs write curves and tables as JSON and Markdown, not Inspect logs per cell),
yet they are studies all the same and belong in ``methods/studies/<study>/`` with their
outputs in ``logs/<run>/``. Such a folder's ``study.yaml`` says ``kind: protocol`` and lists
its runs, each with the command that writes that run's folder; ``harness study regenerate``
checks the folder's layout like any study's (every ``logs/<run>/`` declared). The runs are
not rerun by ``regenerate``: they train and evaluate models (hours); their commands are the
record of how each folder was written.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.factorial.study import RUN_NAME, STUDY_FILE, Study, StudyError, parse_study
from harness.yaml_source import parse_mapping

__all__ = ["ProtocolRun", "ProtocolStudy", "load_study_folder"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProtocolRun(_Strict):
    """One run: what it is and the command that wrote ``logs/<run>/`` (its ``--out``)."""

    note: str = Field(min_length=1)
    command: str = Field(min_length=1)


class ProtocolStudy(_Strict):
    """``study.yaml`` of a protocol study (``kind: protocol``)."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    kind: str = Field(pattern=r"^protocol$")
    description: str = Field(min_length=1)
    runs: dict[str, ProtocolRun] = Field(min_length=1)
    source: str | None = Field(default=None, exclude=True)

    @field_validator("runs")
    @classmethod
    def _run_names(cls, runs: dict[str, ProtocolRun]) -> dict[str, ProtocolRun]:
        for name, run in runs.items():
            if not RUN_NAME.fullmatch(name):
                raise ValueError(f"run name {name!r} is not a folder name")
            if f"logs/{name}" not in run.command:
                raise ValueError(f"run {name!r}: its command must write logs/{name}/ "
                                 f"(got {run.command!r})")
        return runs


def load_study_folder(folder: Path) -> Study | ProtocolStudy:
    """The study of a folder: a factorial :class:`Study`, or a :class:`ProtocolStudy` when
    its ``study.yaml`` says ``kind: protocol``."""
    path = folder / STUDY_FILE
    try:
        text = path.read_text()
    except OSError as exc:
        raise StudyError(f"{path}: cannot read study file: {exc.strerror}") from None
    doc = parse_mapping(text, str(path), "<study>", "a study is a YAML mapping", StudyError)
    if doc.data.get("kind") != "protocol":
        return parse_study(text, source=str(path))
    try:
        return ProtocolStudy.model_validate({**doc.data, "source": str(path)})
    except ValidationError as exc:
        raise StudyError(doc.validation_messages(exc)) from None
