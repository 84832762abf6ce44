"""``eval.yaml``: each benchmark's schema, as a typed model the suite reads.

Every benchmark folder holds one ``eval.yaml`` that states the facts other code must not
guess: the paper, the task version (equal to ``Task(version=...)``), each task's default
sample count, the score key a leaderboard ranks on (``headline``), per score key whether
lower is better and a one-line summary, the reference agents that anchor a normalised
score (``floor_agents`` / ``ceiling_agents``), and how an errored sample counts
(``errored``). Leaderboards, their exports and the factorial analysis read these facts
through this module; a test builds every task and checks its file against it.

How an errored sample counts (``errored``), used by :func:`harness.results.apply_errored_policy`:

* ``zero``: an errored (or unscored) sample scores 0, like a wrong answer, and stays in
  every mean. Right for a score where 0 is the failure value (accuracy, feasibility).
* ``drop``: it is left out of every mean (and of ranking) and only counted.

A lower-is-better metric never takes ``zero``: 0 would be the best possible value of, e.g.,
an upper bound being minimised, so an errored sample would "beat" every real result. A
file that asks for it is rejected; such a metric takes ``drop`` (set it per metric, or for
the task). Where a task or metric states no policy of its own, the file's ``errored``
applies; a task without any ``eval.yaml`` counts errored samples as ``zero`` (what the
leaderboards always did).

Looking a task up (:func:`spec_for_task`) goes through :mod:`harness.registry` only: a
benchmark registers its folder (``meta["folder"]``) with ``@benchmark``, and this module
reads that folder's ``eval.yaml`` (cached by path and modification time). Harness never
imports a benchmark to find one.

A malformed file is an :class:`EvalSpecError` naming the file, the line and the field::

    benchmarks/x/eval.yaml:12: tasks[0].metrics.acc.lower_is_better: Input should be a
    valid boolean
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from harness.yaml_source import format_loc, parse_mapping

__all__ = [
    "DEFAULT_ERRORED_POLICY",
    "ERRORED_POLICIES",
    "EVAL_FILE",
    "BenchmarkTask",
    "ErroredPolicy",
    "EvalSpec",
    "EvalSpecError",
    "Example",
    "MetricSpec",
    "TaskSpec",
    "errored_policy",
    "headline_for",
    "load_spec",
    "lower_is_better",
    "metric_summary",
    "parse_spec",
    "spec_for_task",
    "task_name",
]

EVAL_FILE = "eval.yaml"
ErroredPolicy = Literal["zero", "drop"]
Extra = Literal["web", "cpu", "gpu", "lmeval", "distributed"]
ERRORED_POLICIES: tuple[ErroredPolicy, ...] = ("zero", "drop")
DEFAULT_ERRORED_POLICY: ErroredPolicy = "zero"
"""The policy of a task that has no ``eval.yaml`` (the leaderboards' long-standing rule)."""

_ARXIV = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")
_URL = re.compile(r"^https?://\S+$")
_SKIP_VALIDATION = "evalspec_skip_semantic"
log = logging.getLogger(__name__)


class EvalSpecError(ValueError):
    """A malformed ``eval.yaml``: every problem on its own line as ``FILE:LINE: FIELD: why``."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MetricSpec(_Strict):
    """One score key as the results frame names it (``scorer`` or ``scorer/key``)."""

    lower_is_better: bool = False
    summary: str = Field(min_length=1)
    errored: ErroredPolicy | None = None
    """This metric's own errored-sample policy (default: the task's)."""


class TaskSpec(_Strict):
    """One Inspect task of the benchmark (``harness/<name>``)."""

    name: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    """Other names the task has in logs (a former task name, e.g. ``causalgame_all``)."""
    version: str | None = None
    """This task's version when it differs from the file's ``version``."""
    samples: int = Field(ge=1)
    """Samples in the default dataset (the task built with its default arguments)."""
    epochs: int = Field(default=1, ge=1)
    """Default epochs per sample."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Task options of note (``-T``), each with the values a user may pick."""
    headline: str = Field(min_length=1)
    """The score key to rank on, one of ``metrics``."""
    errored: ErroredPolicy | None = None
    """This task's errored-sample policy (default: the file's)."""
    extra: Extra | None = None
    """The optional extra this task needs when the file's ``extra`` does not say it."""
    metrics: dict[str, MetricSpec] = Field(min_length=1)


class Example(_Strict):
    """One command that shows the benchmark working, with what it gave when measured
    (the root README's benchmark table is generated from these)."""

    command: str = Field(min_length=1)
    measured: str = Field(min_length=1)
    """Wall time and score as measured, with the machine's load (free text, a fact)."""


class EvalSpec(_Strict):
    """The whole ``eval.yaml`` of one benchmark folder."""

    title: str = Field(min_length=1)
    description: str = Field(min_length=1)
    paper: str | None
    """arXiv id (``2602.08367``) or URL of the paper; null for the suite's own self-tests."""
    version: str = Field(min_length=1)
    """Equal to every task's ``Task(version=...)`` unless a task states its own."""
    group: str = Field(min_length=1)
    errored: ErroredPolicy
    """How an errored sample counts: ``zero`` (scores 0) or ``drop`` (left out, counted)."""
    floor_agents: list[str] = Field(default_factory=list)
    """Models or solvers whose score is the normalised 0 (random, no-op)."""
    ceiling_agents: list[str] = Field(default_factory=list)
    """Models or solvers whose score is the normalised 1 (an oracle)."""
    reference_agents: list[str] = Field(default_factory=list)
    """Other reference agents (yardsticks that are neither floor nor ceiling)."""
    extra: Extra | None = None
    """The optional dependency extra the benchmark needs (``pip install 'harness[web]'``)."""
    sandbox: str | None = None
    dependencies: list[str] = Field(default_factory=list)
    example: Example | None = None
    """A command that shows the benchmark working (the README's table lists it)."""
    tasks: list[TaskSpec] = Field(min_length=1)

    @field_validator("paper")
    @classmethod
    def _paper(cls, value: str | None) -> str | None:
        if value is not None and not (_ARXIV.match(value) or _URL.match(value)):
            raise ValueError(f"not an arXiv id (2602.08367) or an http(s) URL: {value!r}")
        return value

    @model_validator(mode="after")
    def _semantics(self, info: ValidationInfo) -> EvalSpec:
        if isinstance(info.context, dict) and info.context.get(_SKIP_VALIDATION):
            return self  # the loader checks these itself, to give each problem its line
        problems = semantic_problems(self)
        if problems:
            raise ValueError("; ".join(f"{format_loc(loc, '<eval.yaml>')}: {msg}"
                                     for loc, msg in problems))
        return self

    @property
    def paper_url(self) -> str | None:
        """The paper as a link (an arXiv id becomes its abs page)."""
        if self.paper is None:
            return None
        return f"https://arxiv.org/abs/{self.paper}" if _ARXIV.match(self.paper) else self.paper

    def task(self, name: str) -> TaskSpec | None:
        """The task called ``name`` (or with ``name`` among its aliases)."""
        for task in self.tasks:
            if name == task.name or name in task.aliases:
                return task
        return None

    def task_version(self, task: TaskSpec) -> str:
        return task.version or self.version

    def policy(self, task: TaskSpec, metric: str | None = None) -> ErroredPolicy:
        """The errored-sample policy of ``task`` (for ``metric`` when given)."""
        own = task.metrics.get(metric) if metric is not None else None
        return (own.errored if own is not None else None) or task.errored or self.errored


def semantic_problems(spec: EvalSpec) -> list[tuple[tuple[Any, ...], str]]:
    """Checks that span fields: (location, message) for each problem."""
    problems: list[tuple[tuple[Any, ...], str]] = []
    seen: dict[str, int] = {}
    for i, task in enumerate(spec.tasks):
        for name in (task.name, *task.aliases):
            if name in seen:
                problems.append((("tasks", i, "name"),
                                 f"task name {name!r} is already used by tasks[{seen[name]}]"))
            seen.setdefault(name, i)
        if task.headline not in task.metrics:
            problems.append((("tasks", i, "headline"),
                             f"{task.headline!r} is not among the task's metrics "
                             f"({', '.join(task.metrics)})"))
        for key, metric in task.metrics.items():
            if metric.lower_is_better and spec.policy(task, key) == "zero":
                problems.append((("tasks", i, "metrics", key, "lower_is_better"),
                                 f"{key} is minimised, so errored samples scored 0 would beat "
                                 "every real result: give it (or the task) errored: drop"))
    return problems


# ----------------------------------------------------------------------------- loading


def parse_spec(text: str, source: str = EVAL_FILE) -> EvalSpec:
    """Validate ``eval.yaml`` text; problems raise :class:`EvalSpecError` with lines."""
    doc = parse_mapping(text, source, "<eval.yaml>", "the file must be a YAML mapping",
                        EvalSpecError)
    try:
        spec = EvalSpec.model_validate(doc.data, context={_SKIP_VALIDATION: True})
    except ValidationError as exc:
        raise EvalSpecError(doc.validation_messages(exc)) from None
    problems = semantic_problems(spec)
    if problems:
        raise EvalSpecError("\n".join(doc.message(loc, msg) for loc, msg in problems))
    return spec


_CACHE: dict[Path, tuple[int, EvalSpec]] = {}


def load_spec(folder_or_file: str | Path) -> EvalSpec:
    """The ``eval.yaml`` of a benchmark folder (or that file), validated and cached.

    Raises:
        FileNotFoundError: No ``eval.yaml`` there.
        EvalSpecError: The file is malformed (the message names file, line and field).
    """
    path = Path(folder_or_file)
    if path.is_dir():
        path = path / EVAL_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no {EVAL_FILE} at {path}")
    path = path.resolve()
    mtime = path.stat().st_mtime_ns
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    spec = parse_spec(path.read_text(encoding="utf-8"), source=str(path))
    _CACHE[path] = (mtime, spec)
    return spec


# ----------------------------------------------------------------------------- lookup


@dataclass(frozen=True)
class BenchmarkTask:
    """One task's facts, resolved: its file's spec, the task's own entry and where it is."""

    benchmark: str
    """The registered benchmark whose folder holds the file."""
    spec: EvalSpec
    task: TaskSpec
    path: Path

    @property
    def name(self) -> str:
        return self.task.name

    @property
    def version(self) -> str:
        return self.spec.task_version(self.task)

    @property
    def headline(self) -> str:
        return self.task.headline

    def metric(self, key: str) -> MetricSpec | None:
        return self.task.metrics.get(key)

    def policy(self, metric: str | None = None) -> ErroredPolicy:
        return self.spec.policy(self.task, metric)

    @property
    def extra(self) -> str | None:
        return self.task.extra or self.spec.extra

    def lower_is_better(self, metric: str | None = None) -> bool:
        entry = self.task.metrics.get(metric or self.task.headline)
        return bool(entry and entry.lower_is_better)


def task_name(name: str) -> str:
    """A task as logs, the CLI or a study may spell it -> its bare name.

    ``harness/x``, ``benchmarks/x``, ``benchmarks/d/x.py`` and ``x`` give ``x``;
    ``path/file.py@y`` gives ``y``. Another package's name (``other/x``) is kept whole, so
    it never stands for a benchmark the suite ships.
    """
    text = name.strip()
    if "@" in text:
        return text.rsplit("@", 1)[1]
    for prefix in ("harness/", "benchmarks/"):
        if text.startswith(prefix):
            text = text[len(prefix):].rstrip("/")
            text = text[:-3] if text.endswith(".py") else text
            return text.rsplit("/", 1)[-1]
    return text


def _folder_spec(folder: Any) -> tuple[Path, EvalSpec] | None:
    if folder is None:
        return None
    path = Path(folder) / EVAL_FILE
    return (path, load_spec(path)) if path.is_file() else None


def spec_for_task(task: str) -> BenchmarkTask | None:
    """The ``eval.yaml`` facts of a task, found through the registry; None if it has none.

    The registered benchmark of that name is tried first; then every registered benchmark
    folder's file is searched for a task of that name or alias (a folder with several tasks,
    or a task's former name in older logs). A malformed file of the benchmark asked for
    raises :class:`EvalSpecError`; a malformed file met while searching is skipped (logged).
    """
    from harness import registry

    key = task_name(task)
    entry = registry.find("benchmark", key)
    if entry is not None:
        found = _folder_spec(entry.meta.get("folder"))
        if found is not None and (own := found[1].task(key)) is not None:
            return BenchmarkTask(entry.name, found[1], own, found[0])
    for other in registry.entries("benchmark"):
        if other is entry:
            continue
        try:
            found = _folder_spec(other.meta.get("folder"))
        except (EvalSpecError, OSError) as exc:
            log.warning("skipping %s's eval.yaml: %s", other.name, exc)
            continue
        if found is not None and (own := found[1].task(key)) is not None:
            return BenchmarkTask(other.name, found[1], own, found[0])
    return None


def headline_for(task: str) -> str | None:
    """The score key ``task``'s leaderboard ranks on (None without an ``eval.yaml``)."""
    found = spec_for_task(task)
    return found.headline if found is not None else None


def lower_is_better(task: str, metric: str | None = None) -> bool:
    """Whether lower is better for ``metric`` (default: the headline) of ``task``.

    False for a task or metric that ``eval.yaml`` does not describe.
    """
    found = spec_for_task(task)
    return found.lower_is_better(metric) if found is not None else False


def errored_policy(task: str, metric: str | None = None) -> ErroredPolicy:
    """How an errored sample of ``task`` counts (for ``metric`` when given)."""
    found = spec_for_task(task)
    return found.policy(metric) if found is not None else DEFAULT_ERRORED_POLICY


def metric_summary(task: str, metric: str | None = None) -> str | None:
    """The one-line summary ``eval.yaml`` gives ``metric`` (default: the headline)."""
    found = spec_for_task(task)
    if found is None:
        return None
    entry = found.metric(metric or found.headline)
    return entry.summary if entry is not None else None
