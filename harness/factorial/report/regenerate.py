"""Regenerate every committed report under a folder from its logs, or check that it would.

Why: a committed report is only evidence if it can be rebuilt from the logs beside it. Every
``report.json`` records the command that wrote it (``provenance.report_command``), so one
command can walk a tree of reports, rerun each recorded command and either rewrite the
report in place or, with ``check``, rebuild it in a scratch folder and compare it with the
committed one. ``harness study regenerate methods/studies --check`` is that command.

Two kinds of recorded command are understood:

* ``harness study report LOGDIR [--out DIR] [--score-key K] [--headline-factor F]`` is
  rebuilt in-process with :func:`~harness.factorial.report.build.build_report`, into the
  folder that holds the ``report.json`` (a folder moved after it was written is rebuilt
  where it now is);
* ``python -m MODULE ... --out DIR ...`` (a method's own summary script that writes several
  reports below ``DIR``) is run once as a subprocess with ``--out`` pointed at the target,
  and every report it wrote is compared. Nothing here imports a method.

What is compared: the ``report.json`` dict without the fields that record *when* and *where*
it was made (``generated_at``, ``provenance.versions``: the platform string changes with the
host's kernel build). Strings, integers and structure must agree exactly (the recorded
command up to white space); floats to a relative 1e-6, or an absolute 1e-8 near zero: the
analysis is deterministic given the logs (seeded bootstraps), but least-squares fits differ
in the last bits between BLAS builds and CPUs, and a standard error of a constant cell is
1e-10 on one machine and 1e-18 on another; neither is a different report. Anything larger
means the logs, the code or the analysis changed. Statistics of degenerate fits (an F over
a residual that is zero up to rounding) can differ by more across machines; such a report
fails the check, which is what it should say.
A report whose logs are not committed (a log dir outside the tree, a ``/tmp`` folder) is
reported as such, never silently skipped.

A study folder (``<root>/<study>/study.yaml``) is also checked for its shape: every folder
below its ``logs/`` must be a run its ``runs:`` section declares (``main`` when it declares
none), so no log folder is committed without saying what it is; and each command of its
``summaries:`` section (extra outputs a method's own script writes from the logs) is rerun
like a report, into a scratch folder with ``--check``, and its output compared.
"""

from __future__ import annotations

import json
import math
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: fields of report.json that say when it was written, not what it says
VOLATILE_FIELDS = ("generated_at",)
#: fields of its provenance that describe the machine that wrote it
VOLATILE_PROVENANCE = ("versions",)
#: float agreement: last-bit differences of least-squares fits across BLAS builds and CPUs
REL_TOL, ABS_TOL = 1e-6, 1e-8


@dataclass(frozen=True)
class Plan:
    """How to rebuild one recorded command and which committed reports it produces."""

    command: str
    kind: str  # "report" (harness study report) or "module" (python -m ...)
    log_dir: Path | None
    options: dict[str, Any] = field(default_factory=dict)
    recorded_out: Path | None = None
    reports: tuple[Path, ...] = ()  # folders holding a committed report.json


@dataclass
class Outcome:
    """What regenerating (or checking) one committed report found."""

    report: Path
    status: str  # "same", "differs", "rewritten", "missing-logs", "unsupported", "error",
    #              "undeclared" (a log folder no run of the study declares)
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("same", "rewritten")


def find_reports(root: Path) -> list[Path]:
    """Every folder under ``root`` (``root`` included) that holds a ``report.json``."""
    return sorted(p.parent for p in Path(root).rglob("report.json"))


def _report_options(words: list[str]) -> tuple[Path | None, dict[str, Any], Path | None]:
    """(log dir, options, --out) of a ``harness study report`` argument list."""
    log_dir: Path | None = None
    out: Path | None = None
    options: dict[str, Any] = {}
    names = {"--score-key": "score_key", "--headline-factor": "headline_factor",
             "--pricing": "pricing"}
    flags = {"--skip-bad-logs": "skip_bad_logs", "--cost": "cost"}
    i = 0
    while i < len(words):
        word = words[i]
        if word in flags:
            options[flags[word]], i = True, i + 1
        elif word == "--out" and i + 1 < len(words):
            out, i = Path(words[i + 1]), i + 2
        elif word in names and i + 1 < len(words):
            options[names[word]], i = words[i + 1], i + 2
        elif word.startswith("--"):
            raise ValueError(f"unknown option {word!r} in a recorded report command")
        else:
            log_dir, i = Path(word), i + 1
    return log_dir, options, out


def plan_for(command: str) -> Plan:
    """Parse one recorded command (``provenance.report_command``)."""
    words = shlex.split(command)
    if words[:3] == ["harness", "study", "report"]:
        log_dir, options, out = _report_options(words[3:])
        return Plan(command, "report", log_dir, options, out)
    if len(words) >= 3 and words[0] in ("python", "python3") and words[1] == "-m":
        log_dir = next((Path(w) for w in words[3:] if not w.startswith("-")), None)
        out = Path(words[words.index("--out") + 1]) if "--out" in words[:-1] else None
        return Plan(command, "module", log_dir, {}, out)
    return Plan(command, "unsupported", None)


def plans(root: Path, base: Path) -> tuple[list[Plan], list[Outcome]]:
    """Group the committed reports under ``root`` by the command that wrote them.

    Relative paths in recorded commands are read from ``base`` (the repository root, where
    the commands were run). Reports with no recorded command come back as outcomes."""
    grouped: dict[str, list[Path]] = {}
    problems: list[Outcome] = []
    for folder in find_reports(root):
        try:
            data = json.loads((folder / "report.json").read_text())
        except (OSError, json.JSONDecodeError) as exc:
            problems.append(Outcome(folder, "error", f"unreadable report.json: {exc}"))
            continue
        command = (data.get("provenance") or {}).get("report_command")
        if not command:
            problems.append(Outcome(folder, "unsupported", "no provenance.report_command"))
            continue
        grouped.setdefault(command, []).append(folder)
    out = []
    for command, folders in grouped.items():
        plan = plan_for(command)
        log_dir = base / plan.log_dir if plan.log_dir and not plan.log_dir.is_absolute() \
            else plan.log_dir
        recorded = base / plan.recorded_out if plan.recorded_out is not None \
            and not plan.recorded_out.is_absolute() else plan.recorded_out
        options = dict(plan.options)
        if options.get("pricing") and not Path(options["pricing"]).is_absolute():
            options["pricing"] = str(base / options["pricing"])  # read from base, as logs
        out.append(Plan(plan.command, plan.kind, log_dir, options, recorded,
                        tuple(folders)))
    return out, problems


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without the fields that record when and where it was written."""
    out = {k: v for k, v in data.items() if k not in VOLATILE_FIELDS}
    if isinstance(out.get("provenance"), dict):
        prov = {k: v for k, v in out["provenance"].items() if k not in VOLATILE_PROVENANCE}
        if isinstance(prov.get("report_command"), str):
            prov["report_command"] = _current_command(" ".join(prov["report_command"].split()))
        out["provenance"] = prov
    return out


def _current_command(command: str) -> str:
    """``python -m MODULE ...`` with a moved module named by its new home
    (:mod:`harness.plugins.aliases`), so a report recorded before the move compares equal
    to its rebuild, which records the new name."""
    from harness.plugins.aliases import new_module

    words = command.split(" ")
    if len(words) > 2 and words[0] in ("python", "python3") and words[1] == "-m":
        words[2] = new_module(words[2]) or words[2]
    return " ".join(words)


def _same_number(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two JSON values first differ (a dotted path and both values, shortened), or
    None when they agree: exactly, floats to :data:`REL_TOL` / :data:`ABS_TOL`."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'regenerated' if key in b else 'committed'}"
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} entries committed, {len(b)} regenerated"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) \
            and not isinstance(b, bool) and (isinstance(a, float) or isinstance(b, float)):
        if _same_number(float(a), float(b)):
            return None
    elif a == b and type(a) is type(b):
        return None
    return f"{path}: committed {str(a)[:80]!r}, regenerated {str(b)[:80]!r}"


def compare(committed: Path, regenerated: Path,
            renamed: tuple[str, str] | None = None) -> Outcome:
    """Compare two ``report.json`` files (folders given) without their volatile fields.

    ``renamed`` = (scratch folder, recorded folder): a script that records its own command
    line names the scratch folder it was pointed at; read it as the recorded one."""
    if not (regenerated / "report.json").is_file():
        return Outcome(committed, "differs", "the command wrote no report.json here")
    a = comparable(json.loads((committed / "report.json").read_text()))
    b = comparable(json.loads((regenerated / "report.json").read_text()))
    command = b.get("provenance", {}).get("report_command")
    if renamed is not None and isinstance(command, str):
        b["provenance"]["report_command"] = command.replace(*renamed)
    found = first_difference(a, b)
    return Outcome(committed, "same") if found is None else Outcome(committed, "differs", found)


def _build(plan: Plan, target: Path) -> None:
    from harness.factorial.report.build import build_report

    assert plan.log_dir is not None
    build_report(plan.log_dir, target, command=plan.command, **plan.options)  # type: ignore[arg-type]


def _run_module(plan: Plan, target: Path, base: Path) -> None:
    from harness.plugins.aliases import resolve

    words = shlex.split(plan.command)
    words[words.index("--out") + 1] = str(target)
    words[2] = resolve(words[2])  # a module's old home (recorded before it moved) resolves
    done = subprocess.run([sys.executable, *words[1:]], cwd=base, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"exit {done.returncode}: {tail[0][:200]}")


def run_plan(plan: Plan, base: Path, check: bool) -> list[Outcome]:
    """Rebuild (``check=False``) or check every committed report of one plan."""
    if plan.kind == "unsupported":
        return [Outcome(f, "unsupported", f"cannot rerun {plan.command!r}") for f in plan.reports]
    if plan.log_dir is None or not plan.log_dir.exists():
        return [Outcome(f, "missing-logs", f"logs not here: {plan.log_dir}")
                for f in plan.reports]
    outcomes: list[Outcome] = []
    if plan.kind == "report":
        for folder in plan.reports:
            outcomes.append(_one(folder, check, lambda t: _build(plan, t)))
        return outcomes
    # a module writes several reports below its --out: run it once, compare each
    if plan.recorded_out is None:
        return [Outcome(f, "unsupported", "no --out in the recorded command")
                for f in plan.reports]
    recorded = plan.recorded_out
    plan_out = shlex.split(plan.command)[shlex.split(plan.command).index("--out") + 1]
    with tempfile.TemporaryDirectory(prefix="regenerate-") as tmp:
        # in place: the --out exactly as recorded (relative to ``base``, where it runs), so
        # the command the script records again is the committed one
        target = Path(tmp) / "out" if check else Path(plan_out)
        try:
            _run_module(plan, target, base)
        except RuntimeError as exc:
            return [Outcome(f, "error", str(exc)) for f in plan.reports]
        for folder in plan.reports:
            try:
                rel = folder.resolve().relative_to(recorded.resolve())
            except ValueError:
                outcomes.append(Outcome(folder, "unsupported",
                                        f"not below the command's --out {recorded}"))
                continue
            outcomes.append(compare(folder, target / rel, (str(target), str(plan_out)))
                            if check else Outcome(folder, "rewritten"))
    return outcomes


def _one(folder: Path, check: bool, build: Callable[[Path], None]) -> Outcome:
    """Build one report into a scratch folder and compare, or into ``folder`` itself."""
    try:
        if not check:
            build(folder)
            return Outcome(folder, "rewritten")
        with tempfile.TemporaryDirectory(prefix="regenerate-") as tmp:
            build(Path(tmp))
            return compare(folder, Path(tmp))
    except Exception as exc:  # noqa: BLE001 - one broken report must not hide the rest
        return Outcome(folder, "error", f"{type(exc).__name__}: {exc}"[:300])


def study_folders(root: Path) -> list[Path]:
    """Every study folder under ``root``: a folder holding ``study.yaml`` that is not the
    copy a run keeps in ``<study>/logs/<run>/``."""
    return sorted(p.parent for p in Path(root).rglob("study.yaml")
                  if p.parent.parent.name != "logs")


def layout_outcomes(folder: Path) -> list[Outcome]:
    """A study folder's log folders that its study file does not declare as runs."""
    from harness.factorial.protocol_study import load_study_folder

    try:
        study = load_study_folder(folder)
    except Exception as exc:  # noqa: BLE001 - reported, and the rest still checked
        return [Outcome(folder, "error", f"study.yaml: {exc}"[:300])]
    declared = set(study.runs) or {"main"}
    logs = folder / "logs"
    found = sorted(p for p in logs.iterdir()) if logs.is_dir() else []
    return [Outcome(p, "undeclared", f"not a run declared in {folder / 'study.yaml'} "
                                     f"(runs: {', '.join(sorted(declared))})")
            for p in found if not p.is_dir() or p.name not in declared]


def _same_output(committed: Path, regenerated: Path) -> Outcome:
    """Compare one summary output (a file, or a folder of files) with its rebuild."""
    if not regenerated.exists():
        return Outcome(committed, "differs", "the command wrote nothing here")
    if committed.is_dir():
        names = sorted(p.relative_to(committed) for p in committed.rglob("*") if p.is_file())
        for rel in names:
            outcome = _same_output(committed / rel, regenerated / rel)
            if not outcome.ok:
                return Outcome(committed, outcome.status, f"{rel}: {outcome.detail}")
        return Outcome(committed, "same")
    a, b = committed.read_text(), regenerated.read_text()
    if committed.suffix == ".json":
        found = first_difference(json.loads(a), json.loads(b))
    else:
        found = None if a == b else next(
            (f"line {i + 1}: committed {x[:80]!r}, regenerated {y[:80]!r}"
             for i, (x, y) in enumerate(zip(a.splitlines() + [""], b.splitlines() + [""],
                                            strict=False)) if x != y), "differs")
    return Outcome(committed, "same") if found is None else Outcome(committed, "differs", found)


def summary_outcomes(folder: Path, base: Path, check: bool) -> list[Outcome]:
    """Rerun each ``summaries:`` command of a study folder (into scratch with ``check``)."""
    from harness.factorial.protocol_study import ProtocolStudy, load_study_folder

    try:
        study = load_study_folder(folder)
    except Exception:  # noqa: BLE001 - layout_outcomes reports it
        return []
    if isinstance(study, ProtocolStudy):
        return []
    where = folder.resolve().relative_to(base.resolve()) if folder.resolve().is_relative_to(
        base.resolve()) else folder.resolve()
    outcomes = []
    for template in study.summaries:
        command = template.replace("{study}", str(where))
        words = shlex.split(command)
        target = base / words[words.index("--out") + 1]
        plan = Plan(command, "module", None)
        if not check:
            try:
                _run_module(plan, target, base)
                outcomes.append(Outcome(target, "rewritten"))
            except RuntimeError as exc:
                outcomes.append(Outcome(target, "error", str(exc)))
            continue
        with tempfile.TemporaryDirectory(prefix="regenerate-") as tmp:
            scratch = Path(tmp) / target.name
            try:
                _run_module(plan, scratch, base)
            except RuntimeError as exc:
                outcomes.append(Outcome(target, "error", str(exc)))
                continue
            outcomes.append(_same_output(target, scratch))
    return outcomes


def regenerate(root: Path, base: Path | None = None, check: bool = False,
               only: Iterable[str] = ()) -> list[Outcome]:
    """Regenerate (or ``check``) every committed report under ``root``, every study
    folder's declared summaries, and (always) each study folder's run layout; ``only``
    keeps the paths that contain one of the given strings."""
    base = Path.cwd() if base is None else base
    wanted = tuple(only)
    all_plans, outcomes = plans(Path(root), base)
    for folder in study_folders(Path(root)):
        if wanted and not any(w in str(folder) for w in wanted):
            continue
        outcomes.extend(layout_outcomes(folder))
        outcomes.extend(summary_outcomes(folder, base, check))
    for plan in all_plans:
        if wanted:
            kept = tuple(f for f in plan.reports if any(w in str(f) for w in wanted))
            if not kept:
                continue
            plan = Plan(plan.command, plan.kind, plan.log_dir, plan.options,
                        plan.recorded_out, kept)
        outcomes.extend(run_plan(plan, base, check))
    if wanted:
        outcomes = [o for o in outcomes if any(w in str(o.report) for w in wanted)]
    return sorted(outcomes, key=lambda o: str(o.report))


def summary_line(outcomes: list[Outcome]) -> str:
    """``N reports: a same, b differ, ...`` in a fixed order of statuses."""
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    order = ("same", "rewritten", "differs", "missing-logs", "unsupported", "error",
             "undeclared")
    parts = [f"{counts[s]} {s}" for s in order if s in counts]
    return f"{len(outcomes)} reports: " + ", ".join(parts)

