"""Study files: a factorial experiment over evaluation components, as validated YAML.

A study says what to measure (``response``: tasks and score keys), which components vary
(``factors``, each bound to the part of the evaluation it changes), how cells are chosen
(``design``), and how the run is replicated. It is data, expanded into cells the way HELM
expands run specs, so the grid is never a nest of loops::

    name: arith-demo
    response:
      tasks: [{name: harness/arithmetic, args: {n: 20}}]
      scores: [exact_integer]
    factors:
      - {name: model, binds_to: model,
         levels: [scripted/arith-oracle, scripted/arith-left-to-right]}
      - {name: prompt, binds_to: task_args, key: prompt_style, levels: [plain, instructive]}
    design: {type: full}

Why line numbers: a study is edited by hand, and pydantic's error locations
(``factors.1.levels``) are hard to find in a long file. :func:`load_study` maps every
location back to the YAML node it came from, so every error reads
``study.yaml:12: factors[1].levels: Field required``.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from harness.errors import UserInputError
from harness.factorial import design as _design
from harness.factorial.resource_spec import ResourceSpec
from harness.yaml_source import parse_mapping

__all__ = [
    "Analysis",
    "Binding",
    "Causal",
    "Cell",
    "DesignSpec",
    "Factor",
    "Level",
    "Replicates",
    "Response",
    "RUN_NAME",
    "STUDY_COPY",
    "STUDY_FILE",
    "Study",
    "StudyError",
    "TaskSpec",
    "load_study",
    "parse_study",
]

Binding = Literal[
    "model", "model_args", "generate_config", "task_args", "solver", "sandbox",
    "intervention", "stack",
]
"""What a factor changes. ``key`` picks one entry of the dict-valued bindings."""

_KEYED: frozenset[str] = frozenset({"model_args", "generate_config", "task_args"})

STUDY_FILE = "study.yaml"
"""The study file of a study folder (``methods/studies/<study>/study.yaml``)."""

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""A run's name is a folder name below ``<study>/logs/``."""

STUDY_COPY = "study.yaml"
"""The name of the study file's copy that ``run_study`` keeps in the study's log dir (so a
report finds the study's analysis options and causal graph next to its logs)."""


class StudyError(UserInputError):
    """A study file is malformed; the message names the file, line and field path."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Level(_Strict):
    """One level of a factor: a short label (used in tags, tables) and the bound value."""

    label: str
    value: Any = None


class TaskSpec(_Strict):
    """A task to run: a registered name (``harness/arithmetic``) or a path, with fixed args."""

    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class Response(_Strict):
    """What is measured: the tasks and the score keys (scorer names / ``scorer/key``)."""

    tasks: list[TaskSpec] = Field(min_length=1)
    scores: list[str] = Field(default_factory=list)

    @field_validator("tasks", mode="before")
    @classmethod
    def _task_shorthand(cls, value: Any) -> Any:
        # ``tasks: [harness/arithmetic]`` is shorthand for ``[{name: harness/arithmetic}]``
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value


def _label(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class Factor(_Strict):
    """A factor: its name, what it binds to, and its levels (values or {label, value})."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    binds_to: Binding
    key: str | None = None
    levels: list[Level] = Field(min_length=1)

    @field_validator("levels", mode="before")
    @classmethod
    def _normalise_levels(cls, value: Any) -> Any:
        # a bare value becomes {label: str(value), value: value}; {label, value} is kept
        if not isinstance(value, list):
            return value
        out: list[Any] = []
        for item in value:
            if isinstance(item, dict) and "label" in item:
                out.append(item)
            else:
                out.append({"label": _label(item), "value": item})
        return out

    @field_validator("levels")
    @classmethod
    def _distinct_labels(cls, value: list[Level]) -> list[Level]:
        labels = [level.label for level in value]
        duplicated = sorted({x for x in labels if labels.count(x) > 1})
        if duplicated:
            raise ValueError(f"duplicate level labels {duplicated}")
        return value

    def label_of(self, value: Any) -> str:
        """The label of the level whose value is ``value`` (for reading logs back)."""
        for level in self.levels:
            if level.value == value:
                return level.label
        raise KeyError(value)


class DesignSpec(_Strict):
    """Which cells run: all (``full``), a 2^(k-p) ``fractional`` or a ``random`` subset."""

    type: Literal["full", "fractional", "random"] = "full"
    generators: list[str] | None = None
    resolution: int | None = Field(default=None, ge=3)
    budget: int | None = Field(default=None, ge=1)
    seed: int = 0


class Replicates(_Strict):
    """Replication: Inspect epochs per sample and/or seeds (each seed is a set of cells)."""

    epochs: int = Field(default=1, ge=1)
    seeds: list[int] | None = None
    seed_binds_to: Literal["generate_config", "task_args"] = "generate_config"
    seed_key: str = "seed"


class Causal(_Strict):
    """Which factors may affect which (``a -> b``); ``score`` names the response."""

    edges: list[tuple[str, str]] = Field(default_factory=list)

    @field_validator("edges", mode="before")
    @classmethod
    def _arrows(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [
                tuple(part.strip() for part in v.split("->", 1))
                if isinstance(v, str) and "->" in v else v
                for v in value
            ]
        return value


class Analysis(_Strict):
    """Options handed to the analysis: interaction order, model family, item handling."""

    order: int = Field(default=2, ge=1)
    family: Literal["auto", "gaussian", "binomial"] = "auto"
    item_mode: Literal["fixed", "cluster", "random", "none"] = "cluster"


class Claim(_Strict):
    """The paper's claim a study tests, as data, so the report computes its verdict.

    The contrast is ``treatment - baseline`` on ``factor`` (per item, averaged over the
    other factors); the paper says the treatment is better (``better``: higher or lower,
    default the score's own direction) by ``size`` where it gives one, in the response's
    units. ``bounds`` are the response's floor and ceiling (default [0, 1] for scores that
    stay inside it): an arm whose interval sits within ``margin`` of one cannot move the
    other way, and a null result there is untestable, not a failure to reproduce.
    """

    statement: str = Field(min_length=1)
    factor: str
    treatment: str
    baseline: str
    kind: Literal["better", "no_worse"] = "better"
    """``better``: the treatment is better (by ``size`` where given). ``no_worse``: the
    treatment loses at most ``tolerance`` against the baseline (a cheaper method that
    keeps quality: "only 3.1% perplexity", "comparable loss at 80% less compute")."""
    tolerance: float | None = Field(default=None, gt=0)
    """For ``no_worse``: the largest loss the paper calls acceptable, in the response's
    units and in the direction of ``better``."""
    control: str | None = None
    """For ``no_worse``: a level of ``factor`` that must score detectably worse than the
    baseline, by more than ``tolerance`` (the cheap run without the method: a shallow model
    never expanded, a cache never patched). A probe on which the control matches the
    baseline cannot show a loss at all, so the treatment matching it says nothing about the
    method: the claim is untestable there."""
    replicate: str | None = None
    """The factor whose levels are independent replications of the whole experiment (a
    training seed): the contrast's interval is then over its levels (each level's paired
    mean over items), so run-to-run noise counts; over items alone, two training runs
    look like hundreds of observations."""
    better: Literal["higher", "lower"] | None = None
    size: float | None = Field(default=None, gt=0)
    bounds: tuple[float, float] | None = None
    margin: float = Field(default=0.05, ge=0, lt=0.5)
    score_key: str | None = None
    """The score the claim is about (default: the study's first score); a report on
    another score key of the study carries no verdict."""
    paper: str | None = None

    @model_validator(mode="after")
    def _kind_fields(self) -> Claim:
        if self.kind == "no_worse" and self.tolerance is None:
            raise ValueError("a no_worse claim needs the tolerance the paper accepts")
        if self.kind == "better" and self.tolerance is not None:
            raise ValueError("tolerance is for a no_worse claim; a better claim states size")
        if self.kind == "no_worse" and self.size is not None:
            raise ValueError("size is for a better claim; a no_worse claim states tolerance")
        if self.kind == "better" and self.control is not None:
            raise ValueError("control is for a no_worse claim (a level that must show a loss)")
        return self


class Study(_Strict):
    """A validated study. ``source`` is the file it came from (for error messages, logs)."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    response: Response
    factors: list[Factor] = Field(min_length=1)
    design_spec: DesignSpec = Field(default_factory=DesignSpec, alias="design")
    replicates: Replicates = Field(default_factory=Replicates)
    blocking: Literal["item", "none"] = "item"
    limit: int | None = Field(default=None, ge=1)
    causal: Causal | None = None
    analysis: Analysis = Field(default_factory=Analysis)
    headline_factor: str | None = None
    """The factor the report's attribution sentence and the analysis' robustness, pair and
    power sections are about (default: ``model`` when it is a factor, else the first).
    A method study names its method factor here, so a one-level model factor does not make
    the headline read "model's main effect 0.0%"."""
    intervention_seed: int = 0
    claim: Claim | None = None
    resources: ResourceSpec | None = None
    """Resources every cell reserves on the Ray executor (``num_cpus``, ``num_gpus``,
    ``memory``), replacing the fields derived from the cell's model and sandbox
    (:mod:`harness.factorial.resources`)."""
    resource_levels: dict[str, ResourceSpec] = Field(default_factory=dict)
    """Per-level overrides, keyed ``factor=label``, applied after ``resources``."""
    """The paper's claim (:class:`Claim`); the report computes the verdict from it."""
    runs: dict[str, str] = Field(default_factory=dict)
    """The named runs of the study: run name -> what it is. A study kept as
    ``<folder>/study.yaml`` writes run ``R`` to ``<folder>/logs/R/`` (``harness study run
    --run R``); ``main`` is the study as declared. Declared, so that every log folder a
    study holds says what it is and ``harness study regenerate --check`` can flag one that
    nobody declared."""
    summaries: list[str] = Field(default_factory=list)
    """Extra outputs rebuilt from the logs by a command each (``python -m MODULE ... --out
    PATH``; ``{study}`` stands for the study folder), run and checked by ``harness study
    regenerate`` beside the reports."""
    source: str | None = Field(default=None, exclude=True)

    @field_validator("runs")
    @classmethod
    def _run_names(cls, runs: dict[str, str]) -> dict[str, str]:
        for name in runs:
            if not RUN_NAME.fullmatch(name):
                raise ValueError(f"run name {name!r} is not a folder name "
                                 "(letters, digits, '_', '.', '-')")
        return runs

    @field_validator("summaries")
    @classmethod
    def _summary_commands(cls, commands: list[str]) -> list[str]:
        for command in commands:
            words = command.split()
            if words[:2] not in (["python", "-m"], ["python3", "-m"]) or "--out" not in words:
                raise ValueError(f"summary {command!r} is not 'python -m MODULE ... --out PATH'")
        return commands

    @property
    def folder(self) -> Path | None:
        """The study's folder when it is kept as ``<folder>/study.yaml``, else None (the
        copy a run keeps in ``<folder>/logs/<run>/`` names the same folder)."""
        if not self.source or Path(self.source).name != STUDY_FILE:
            return None
        here = Path(self.source).parent
        return here.parent.parent if here.parent.name == "logs" else here

    def run_dir(self, run: str = "main") -> Path:
        """Where run ``run`` writes its logs: ``<folder>/logs/<run>/`` for a study folder
        (``run`` must be declared in ``runs``, or be ``main`` when none are), else
        ``logs/studies/<name>/`` for a loose study file (examples, scratch studies)."""
        declared = set(self.runs) or {"main"}
        if run not in declared:
            raise StudyError(f"{self.source or self.name}: run {run!r} is not declared; "
                             f"runs: {', '.join(sorted(declared))}")
        if self.folder is None:
            return Path("logs") / "studies" / self.name if run == "main" \
                else Path("logs") / "studies" / self.name / run
        return self.folder / "logs" / run

    def factor(self, name: str) -> Factor:
        """The factor called ``name``."""
        for factor in self.factors:
            if factor.name == name:
                return factor
        raise KeyError(name)

    def design(self) -> _design.Design:
        """The factorial design over level labels (full, fractional or a random subset)."""
        spec = {f.name: [level.label for level in f.levels] for f in self.factors}
        if self.design_spec.type == "fractional":
            built = _design.fractional_factorial(
                spec, generators=self.design_spec.generators,
                resolution=self.design_spec.resolution,
            )
        else:
            built = _design.full_factorial(spec)
        if self.design_spec.type == "random":
            assert self.design_spec.budget is not None
            built = _design.random_subset(built, self.design_spec.budget, self.design_spec.seed)
        return built

    def cells(self) -> list[Cell]:
        """Expand the design into cells (x tasks x replicate seeds), in a stable order."""
        rows = [{k: str(v) for k, v in cell.levels.items()} for cell in self.design().cells]
        tasks = self.response.tasks
        seeds: Sequence[int | None] = self.replicates.seeds or [None]
        cells: list[Cell] = []
        for task, seed, row in itertools.product(tasks, seeds, rows):
            cells.append(_bind(self, task, seed, row))
        return cells


@dataclass(frozen=True)
class Cell:
    """One cell: the factor levels (labels) and everything they bind to.

    ``id`` is :func:`harness.factorial.design.cell_id` of the cell's factor labels, task,
    task args and replicate seed, so it is stable across reruns and independent of the
    cell's position in the design.
    """

    id: str
    study: str
    levels: dict[str, str]
    task: str
    task_args: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)
    generate_config: dict[str, Any] = field(default_factory=dict)
    solver: Any = None
    sandbox: Any = None
    intervention: str = "none"
    intervention_seed: int = 0
    stack: str = "inspect"
    replicate_seed: int | None = None

    @property
    def tags(self) -> list[str]:
        """``factor=level`` tags recorded on the eval log."""
        tags = [f"{name}={label}" for name, label in self.levels.items()]
        if self.replicate_seed is not None:
            tags.append(f"replicate_seed={self.replicate_seed}")
        return tags

    @property
    def metadata(self) -> dict[str, Any]:
        """The eval log's ``metadata``: study name, cell id and factor levels."""
        meta: dict[str, Any] = {"study": self.study, "cell_id": self.id,
                                "factors": dict(self.levels)}
        if self.replicate_seed is not None:
            meta["replicate_seed"] = self.replicate_seed
        return meta


def _bind(study: Study, task: TaskSpec, seed: int | None, row: dict[str, str]) -> Cell:
    """Turn one design row (factor -> level label) into a cell with its bindings."""
    values: dict[str, Any] = {
        "task_args": dict(task.args), "model": None, "model_args": {}, "generate_config": {},
        "solver": None, "sandbox": None, "intervention": "none",
        "intervention_seed": study.intervention_seed, "stack": "inspect",
    }
    for factor in study.factors:
        label = row[factor.name]
        value = next(level.value for level in factor.levels if level.label == label)
        target = factor.binds_to
        if target in _KEYED:
            if factor.key is not None:
                values[target][factor.key] = value
            else:
                values[target].update(value)
        elif target == "intervention":
            if isinstance(value, dict):
                values["intervention"] = str(value.get("name", "none"))
                values["intervention_seed"] = int(value.get("seed", study.intervention_seed))
            else:
                values["intervention"] = "none" if value is None else str(value)
        else:
            values[target] = value
    if seed is not None:
        values[study.replicates.seed_binds_to][study.replicates.seed_key] = seed
    return Cell(
        id=_design.cell_id(row, task=task.name, task_args=task.args, seed=seed),
        study=study.name, levels=dict(row), task=task.name,
        replicate_seed=seed, **values,
    )


# --------------------------------------------------------------------------- loading


def _semantic_errors(study: Study) -> list[tuple[tuple[Any, ...], str]]:
    """Checks that span fields (pydantic checks one field at a time)."""
    errors: list[tuple[tuple[Any, ...], str]] = []
    names = [f.name for f in study.factors]
    for i, factor in enumerate(study.factors):
        if names.index(factor.name) != i:
            errors.append((("factors", i, "name"), f"duplicate factor name {factor.name!r}"))
        if factor.binds_to in _KEYED and factor.key is None:
            bad = [j for j, lv in enumerate(factor.levels) if not isinstance(lv.value, dict)]
            if bad:
                errors.append(((("factors", i, "levels", bad[0])),
                               f"binds_to {factor.binds_to} without `key` needs mapping "
                               "values (or give `key`)"))
        if factor.binds_to == "stack":
            # which stacks exist is the registry's (harness.plugins.stack); the runner
            # checks the names before it plans or runs anything
            for j, level in enumerate(factor.levels):
                if not isinstance(level.value, str) or not level.value:
                    errors.append((("factors", i, "levels", j),
                                   f"a stack level names an evaluation stack (e.g. inspect, "
                                   f"lm-eval), got {level.value!r}"))
        if factor.binds_to == "model":
            for j, level in enumerate(factor.levels):
                if not isinstance(level.value, str) or "/" not in level.value:
                    errors.append((("factors", i, "levels", j),
                                   f"a model level is 'provider/name', got {level.value!r}"))
        values = [json.dumps(level.value, sort_keys=True, default=str)
                  for level in factor.levels]
        for j, value in enumerate(values):
            if values.index(value) != j:
                first = factor.levels[values.index(value)].label
                errors.append((("factors", i, "levels", j),
                               f"factor {factor.name!r}: levels {first!r} and "
                               f"{factor.levels[j].label!r} bind the same value {value}; "
                               "the cells would differ only in their labels"))
                break
    if study.headline_factor is not None and study.headline_factor not in names:
        errors.append((("headline_factor",),
                       f"headline_factor {study.headline_factor!r} is not a factor "
                       f"(factors: {', '.join(names)})"))
    claim = study.claim
    if claim is not None:
        if claim.factor not in names:
            errors.append((("claim", "factor"), f"{claim.factor!r} is not a factor "
                                                f"(factors: {', '.join(names)})"))
        else:
            labels = [level.label for level in study.factor(claim.factor).levels]
            ends = ("treatment", "baseline") + (("control",) if claim.control else ())
            for end in ends:
                if getattr(claim, end) not in labels:
                    errors.append((("claim", end), f"{getattr(claim, end)!r} is not a level "
                                                   f"of {claim.factor} ({', '.join(labels)})"))
            if claim.treatment == claim.baseline:
                errors.append((("claim", "baseline"), "treatment and baseline are one level"))
            if claim.control in (claim.treatment, claim.baseline):
                errors.append((("claim", "control"), "the control must be a third level"))
        if (claim.score_key is not None and study.response.scores
                and claim.score_key not in study.response.scores):
            errors.append((("claim", "score_key"), f"{claim.score_key!r} is not among the "
                                                   f"study's scores"))
        if claim.bounds is not None and not claim.bounds[0] < claim.bounds[1]:
            errors.append((("claim", "bounds"), f"expected [floor, ceiling] with floor < "
                                                f"ceiling, got {list(claim.bounds)}"))
    for selector in study.resource_levels:
        factor_name, _, label = selector.partition("=")
        if factor_name not in names or label not in [
                lv.label for lv in study.factor(factor_name).levels]:
            errors.append((("resource_levels", selector),
                           f"{selector!r} is not factor=label of this study"))
    has_model = any(f.binds_to == "model" for f in study.factors)
    if not has_model:
        errors.append((("factors",), "no factor binds_to model (every cell needs a model)"))
    design = study.design_spec
    if design.type == "fractional":
        for i, factor in enumerate(study.factors):
            if len(factor.levels) != 2:
                errors.append((("factors", i, "levels"),
                               "a fractional design needs exactly 2 levels per factor"))
        if (design.generators is None) == (design.resolution is None):
            errors.append((("design",), "fractional design needs `generators` or `resolution`"))
    if design.type == "random" and design.budget is None:
        errors.append((("design", "budget"), "random design needs `budget`"))
    if study.causal is not None:
        known = set(names) | {"score", *study.response.scores}
        for j, (a, b) in enumerate(study.causal.edges):
            for end in (a, b):
                if end not in known:
                    errors.append((("causal", "edges", j),
                                   f"unknown node {end!r} (factors, 'score' or a score key)"))
    return errors


def parse_study(text: str, source: str = "<study>") -> Study:
    """Validate a study from YAML text; errors are :class:`StudyError` with line numbers."""
    doc = parse_mapping(text, source, "<study>", "a study is a YAML mapping", StudyError)
    if doc.data.get("kind") == "protocol":
        raise StudyError(f"{source}: a protocol study (kind: protocol) has no cells to run: "
                         "each of its runs is the command written under runs:")
    try:
        study = Study.model_validate({**doc.data, "source": source})
    except ValidationError as exc:
        raise StudyError(doc.validation_messages(exc)) from None
    problems = _semantic_errors(study)
    if problems:
        raise StudyError("\n".join(doc.message(loc, msg) for loc, msg in problems))
    try:
        study.cells()  # designs can fail (e.g. bad generators): report them as study errors
    except ValueError as exc:
        raise StudyError(doc.message(("design",), str(exc))) from None
    return study


def study_location(study: Study, loc: tuple[Any, ...], text: str) -> str:
    """``file:line: field: text`` for a problem found after loading (a level that names an
    unknown intervention or solver), with the line read again from the study's file."""
    source = study.source or "<study>"
    try:
        doc = parse_mapping(Path(source).read_text(), source, "<study>",
                            "a study is a YAML mapping", StudyError)
    except (OSError, StudyError):
        return f"{source}: {text}"
    return doc.message(loc, text)


def load_study(path: str | Path) -> Study:
    """Load and validate a study file (see :class:`Study`); raises :class:`StudyError`."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise StudyError(f"{path}: cannot read study file: {exc.strerror}") from None
    return parse_study(text, source=str(path))
