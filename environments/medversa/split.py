"""Train/evaluation splits for the editors that learn (retrieval, MedREK).

Why: MedREK meta-trains its retriever and prompt encoder on a *train* split and is scored
on records it never saw. Where the released train split is at hand (``train.json`` beside
the evaluated file, as in the original ``medversa/{train,valid,test}.json``) it is used
whole; otherwise the records at hand are split here, seeded and stratified by subject, and
every text a train record contributes (edit prompt, paraphrase, locality prompts) is kept
out of the evaluation records. :func:`check_disjoint` asserts that; the task calls it on
every split it builds, so an overlap is an error, never a silent leak.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from environments.medversa.schema import EditCase

DEFAULT_TRAIN_FRACTION = 0.2
"""Share of the records held out for training when no released train split exists."""


@dataclass(frozen=True)
class Split:
    """Records to train on and records to evaluate, with where the train part came from."""

    train: tuple[EditCase, ...]
    eval: tuple[EditCase, ...]
    source: str  # "released:<path>" or "seeded:<seed>:<n_train>"


def texts(case: EditCase) -> set[str]:
    """Every query text of a record (normalised by case and surrounding space)."""
    out = {case.prompt, case.rephrase_prompt, *(q.prompt for q in case.locality)}
    return {t.strip().lower() for t in out}


def check_disjoint(train: Sequence[EditCase], evaluated: Sequence[EditCase]) -> None:
    """Raise ``ValueError`` when a train record shares an id or any query text with an
    evaluated one (the train split must never leak into the evaluation)."""
    ids = {c.id for c in train} & {c.id for c in evaluated}
    if ids:
        raise ValueError(f"train and eval share record ids: {sorted(ids)[:5]}")
    seen: set[str] = set()
    for c in train:
        seen |= texts(c)
    for c in evaluated:
        shared = texts(c) & seen
        if shared:
            raise ValueError(f"eval record {c.id} shares a query with the train split: "
                             f"{sorted(shared)[0]!r}")


def without_shared_queries(train: Sequence[EditCase],
                           evaluated: Sequence[EditCase]) -> tuple[EditCase, ...]:
    """The train records that share no id and no query text with an evaluated record.

    Why: the released MedVersa splits are not disjoint by query (37 of the 1,000 test
    records share a prompt, rephrase or, mostly, a locality query with a train record), so
    training on ``train.json`` as released would leak those queries into the evaluation.
    Dropping the train side keeps every evaluated record (the published test set stays
    whole); the caller records how many went."""
    seen: set[str] = set()
    ids = {c.id for c in evaluated}
    for c in evaluated:
        seen |= texts(c)
    return tuple(c for c in train if c.id not in ids and not (texts(c) & seen))


def seeded_split(cases: Sequence[EditCase], n_train: int | None = None, seed: int = 0,
                 fraction: float = DEFAULT_TRAIN_FRACTION) -> Split:
    """Stratified by subject: each subject gives its share of ``n_train`` (largest
    remainders), records drawn with ``default_rng(seed)``. Train records that share a query
    text with an evaluation record move to the evaluation side, so the split is disjoint."""
    if not cases:
        raise ValueError("no records to split")
    n = len(cases)
    want = int(round(fraction * n)) if n_train is None else int(n_train)
    if not 0 < want < n:
        raise ValueError(f"n_train must be in 1..{n - 1}, got {want}")
    rng = np.random.default_rng(seed)
    by_subject: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        by_subject.setdefault(c.subject, []).append(i)
    subjects = sorted(by_subject)
    quota = {s: want * len(by_subject[s]) / n for s in subjects}
    take = {s: math.floor(quota[s]) for s in subjects}
    rest = want - sum(take.values())
    for s in sorted(subjects, key=lambda s: (-(quota[s] - take[s]), s))[:rest]:
        take[s] += 1
    chosen: set[int] = set()
    for s in subjects:
        members = by_subject[s]
        order = rng.permutation(len(members))
        chosen.update(members[k] for k in order[: take[s]])
    eval_texts: set[str] = set()
    for i in range(n):
        if i not in chosen:
            eval_texts |= texts(cases[i])
    # a train record sharing a text with an eval record leaks it: move it to eval
    changed = True
    while changed:
        changed = False
        for i in sorted(chosen):
            if texts(cases[i]) & eval_texts:
                chosen.discard(i)
                eval_texts |= texts(cases[i])
                changed = True
    train = tuple(cases[i] for i in sorted(chosen))
    evaluated = tuple(cases[i] for i in range(n) if i not in chosen)
    check_disjoint(train, evaluated)
    return Split(train, evaluated, f"seeded:{seed}:{len(train)}")


def released_train_file(data_path: Path) -> Path | None:
    """``train.json`` beside an evaluated split file (``test.json``/``valid.json``), if any."""
    if data_path.stem in ("test", "valid"):
        candidate = data_path.with_name("train" + data_path.suffix)
        if candidate.is_file():
            return candidate
    return None
