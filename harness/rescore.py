"""Re-score stored outputs with another scorer: ``harness rescore LOGS --scorer SPEC --out DIR``.

    harness rescore LOG_OR_DIR [...] --scorer SPEC [-S key=value ...] --out DIR
        [--action overwrite|append] [--model MODEL]

Why: a metric change (a stricter answer match, a published protocol's N/A rule, another
grader) should never need the model to run again. Every log under the arguments is read
whole, scored again by Inspect's own ``score`` API (the one behind ``inspect score``) on
the outputs it holds, and written as a **new** log under ``--out`` with the same file name
(the originals are never touched), so ``harness compare ORIGINAL_DIR DIR`` pairs them item
by item.

``--action overwrite`` (the default) keeps only the new scorer's values; ``append`` keeps
the old scores next to the new ones, and is what a scorer needs that derives its value from
the score already there (CausalGame's published protocol:
``--scorer benchmarks/causalgame/rescore.py@published_protocol --action append``, the same
rule as ``harness causalgame rescore``'s table, now as logs). Scorer specs are those of
``inspect score``: a registered name (``includes``, ``match``, ``harness/...``) or
``file.py@name``. A model-graded scorer grades with ``--model`` (default: the log's own
model, as ``inspect score`` does; where that model cannot be loaded here, Inspect's ``none``
model, so a scorer that asks a model fails loudly instead of grading with the wrong one).

The new log's eval metadata records ``rescored``: the source log, the scorer spec and its
arguments, and the action.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harness.errors import UserInputError
from harness.results import list_logs, read_inspect_log

__all__ = ["Rescored", "parse_args", "rescore"]

Action = Literal["overwrite", "append"]


@dataclass(frozen=True)
class Rescored:
    """One log written: where from, where to, and how many samples were scored."""

    source: str
    written: str
    samples: int


def parse_args(pairs: Sequence[str]) -> dict[str, Any]:
    """``key=value`` scorer arguments; values parsed as YAML scalars, as ``-S`` in Inspect."""
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserInputError(f"-S {pair!r}: expected key=value")
        out[key] = yaml.safe_load(value)
    return out


def _target(source: Path, roots: Sequence[Path], out: Path) -> Path:
    """The new log's path below ``out``: its path under the folder argument it was found
    in (under that folder's name when several arguments were given, so two runs' logs
    never land in one folder), or its file name."""
    for root in roots:
        if root.is_dir():
            try:
                relative = source.relative_to(root)
            except ValueError:
                continue
            return out / relative if len(roots) == 1 else out / root.name / relative
    return out / source.name


def _grader(model: str | None, logged: str) -> tuple[Any, str]:
    """The model scorers get: ``--model``, else the log's own, else (the log's model cannot
    be loaded here, e.g. a local model not installed) Inspect's ``none`` model, which
    fails loudly if a scorer asks it anything, so a rule-based scorer needs no model."""
    from inspect_ai.model import get_model

    if model is not None:
        return get_model(model), model
    try:
        return get_model(logged), logged
    except Exception as exc:  # any provider's failure to start: no model, not a crash
        return get_model("none/none"), f"none ({logged} not loadable: {exc})"[:300]


def rescore(paths: Sequence[str | Path], scorer: str, out: str | Path, *,
            scorer_args: Mapping[str, Any] | None = None, action: Action = "overwrite",
            model: str | None = None) -> list[Rescored]:
    """Score every log under ``paths`` again with ``scorer`` and write each to ``out``.

    Raises:
        UserInputError: No log found, a log without samples, or ``out`` inside the logs
            read (a second run would re-score its own output).
    """
    from inspect_ai import score
    from inspect_ai.log import write_eval_log

    from harness.inspect_compat import load_scorer

    roots = [Path(p) for p in paths]
    destination = Path(out).resolve()
    logs = [p for p in list_logs(roots) if destination not in p.resolve().parents]
    if not logs:
        raise UserInputError(f"no Inspect log under {' '.join(map(str, paths))}")
    args = dict(scorer_args or {})
    built = load_scorer(scorer, args)
    written = []
    for source in logs:
        log = read_inspect_log(source)
        if not log.samples:
            raise UserInputError(f"{source}: no samples to re-score (a header-only or "
                                 "empty log)")
        grader, note = _grader(model, log.eval.model)
        scored = score(log, built, action=action, model=grader, display="none")
        scored.eval.metadata = {
            **(scored.eval.metadata or {}),
            "rescored": {"from": str(source), "scorer": scorer, "args": args,
                         "action": action, "model": note},
        }
        target = _target(source, roots, destination)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_eval_log(scored, str(target))
        written.append(Rescored(str(source), str(target), len(scored.samples or [])))
    return written


def describe(done: Sequence[Rescored]) -> str:
    """One line per log written (the command's output)."""
    return "\n".join(f"{r.source} -> {r.written} ({r.samples} samples)" for r in done)


def as_json(done: Sequence[Rescored]) -> str:
    return json.dumps([r.__dict__ for r in done], indent=1)
