"""The single / batch / sequential protocols (spec §3) over one editor and one model.

A *unit* is the set of cases edited together: one case (single), B consecutive cases (batch,
final short batch kept) or N consecutive cases applied one edit at a time (sequential,
remainder dropped). Per unit: reset the editor, record pre-edit locality argmax, apply the
edits, score every case against a knowledge base holding all of the unit's edits, reset.

White-box scores follow spec §2 (teacher-forced token accuracy); black-box scores follow the
§7 text-match deviation and must be labelled "MedVersa-BB (text-match deviation)".

*Lifelong* editing (:func:`run_lifelong`) is the sequential protocol read as a curve: N
edits applied one ``apply`` call at a time and never reset, every case edited so far scored
after every k edits, with bootstrap CIs over records (:func:`point_summary`) and the paired
change of the earliest edits between the first and the last point (:func:`retention`). For
knowledge-base editors (retrieval, MedREK) it only grows the knowledge base and for IKE the
context; for weight editors (FT-L, ROME, MEMIT, GRACE) it is where edits interfere. Run it
for several editors with ``harness medversa lifelong`` (:mod:`benchmarks.medversa.lifelong`,
which also continues a run cut short).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from statistics import mean
from typing import Any, Literal

import numpy as np

from benchmarks.medversa.whitebox import Probe, WhiteBoxRunner
from environments.medversa.metrics import (
    avg_score,
    exact_match,
    first_line,
    fluency_entropy,
    lenient_match,
    locality_agreement,
    token_accuracy,
)
from environments.medversa.schema import EditCase
from harness.plugins.editor import ALL_EDITS, Edit, Editor
from harness.stats import bootstrap_ci

Protocol = Literal["single", "batch", "sequential"]
BB_LABEL = "MedVersa-BB (text-match deviation)"
FLUENCY_TOP_K = 5


def make_units(cases: Sequence[EditCase], protocol: Protocol, batch_size: int,
               seed: int, n: int | None = None) -> list[list[EditCase]]:
    """Shuffle with ``default_rng(seed)``, keep the first ``n``, cut into units."""
    order = np.random.default_rng(seed).permutation(len(cases))
    chosen = [cases[i] for i in order[: n if n is not None else len(cases)]]
    if protocol == "single":
        return [[c] for c in chosen]
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    units = [chosen[i:i + batch_size] for i in range(0, len(chosen), batch_size)]
    if protocol == "sequential":
        units = [u for u in units if len(u) == batch_size]
        if not units:
            raise ValueError(f"sequential protocol needs >= {batch_size} cases, got {len(chosen)}")
    elif protocol != "batch":
        raise ValueError(f"unknown protocol {protocol!r}: single, batch or sequential")
    return units


def apply_unit(editor: Editor, cases: Sequence[EditCase], protocol: Protocol) -> None:
    """Batch/single: one ``apply`` call; sequential: one call per edit, in order."""
    edits = [Edit(c.prompt, c.target_new) for c in cases]
    if protocol == "sequential":
        for e in edits:
            editor.apply([e])
    else:
        editor.apply(edits)


def _used(hit: int | None, n_edits: int) -> set[int]:
    if hit is None:
        return set()
    return set(range(n_edits)) if hit == ALL_EDITS else {hit}


def retrieval_stats(editor: Editor, cases: Sequence[EditCase]) -> list[dict[str, float]]:
    """Per case: did its edit/paraphrase queries use its own edit, and only it; did its
    locality queries use any edit (a false retrieval)."""
    n = len(cases)
    edit_hits = editor.retrieve([c.prompt for c in cases] + [c.rephrase_prompt for c in cases])
    loc_queries = [(i, q.prompt) for i, c in enumerate(cases) for q in c.locality]
    loc_hits = editor.retrieve([q for _, q in loc_queries])
    out = []
    for i in range(n):
        used = [_used(edit_hits[i], n), _used(edit_hits[n + i], n)]
        recall = mean(float(i in u) for u in used)
        precision = mean((1.0 / len(u)) if i in u else 0.0 for u in used)
        false = [bool(_used(h, n)) for (j, _), h in zip(loc_queries, loc_hits, strict=True)
                 if j == i]
        out.append({"retrieval_recall": recall, "retrieval_precision": precision,
                    "false_retrieval": mean(float(f) for f in false)})
    return out


@dataclass
class UnitResult:
    """Per-case scores of one unit (fractions in [0, 1]; fluency in bits, not × 100)."""

    case_ids: list[str]
    scores: list[dict[str, float]]
    fluency: float | None
    details: list[dict[str, Any]]

    def unit_means(self) -> dict[str, float]:
        """Mean of every score over the unit's cases (spec §2.5: unit-level averages)."""
        keys = self.scores[0].keys()
        out = {k: mean(s[k] for s in self.scores) for k in keys}
        if self.fluency is not None:
            out["fluency"] = self.fluency
        return out


LocalityProbe = tuple[int, str, Probe]
"""(index of its case, locality kind, probe)."""


def locality_probes(runner: WhiteBoxRunner, cases: Sequence[EditCase]) -> list[LocalityProbe]:
    """Every locality probe of ``cases``, tagged with its case index and kind."""
    return [(i, q.kind, runner.probe(q.prompt, q.ground_truth))
            for i, c in enumerate(cases) for q in c.locality]


def score_cases(runner: WhiteBoxRunner, editor: Editor, cases: Sequence[EditCase],
                loc_probes: Sequence[LocalityProbe], pre: Sequence[Sequence[int]]
                ) -> tuple[list[dict[str, float]], list[dict[str, Any]]]:
    """Spec §2 per-case scores of ``cases`` under the editor's current state.

    ``loc_probes`` are the cases' locality probes (:func:`locality_probes`) and ``pre``
    their pre-edit argmax, in the same order.
    """
    eff_probes = [runner.probe(c.prompt, c.target_new) for c in cases]
    gen_probes = [runner.probe(c.rephrase_prompt, c.target_new) for c in cases]
    post = runner.argmax(eff_probes + gen_probes + [p for _, _, p in loc_probes], editor)
    n = len(cases)
    scores: list[dict[str, float]] = []
    details: list[dict[str, Any]] = []
    retrieval = retrieval_stats(editor, cases)
    for i, case in enumerate(cases):
        eff, gen = eff_probes[i].forced, gen_probes[i].forced
        per_kind: dict[str, list[float]] = {}
        for k, (j, kind, probe) in enumerate(loc_probes):
            if j == i:
                agree = locality_agreement(pre[k], post[2 * n + k], probe.forced.mask)
                per_kind.setdefault(kind, []).append(agree)
        row = {
            "efficacy": token_accuracy(post[i], eff.labels, eff.mask),
            "generality": token_accuracy(post[n + i], gen.labels, gen.mask),
            "locality": mean(v for vs in per_kind.values() for v in vs),
            **{f"{k}_locality" if not k.startswith("locality") else k: mean(v)
               for k, v in per_kind.items() if len(per_kind) > 1},
            **retrieval[i],
        }
        scores.append(row)
        details.append({"id": case.id, "target_new": case.target_new,
                        "efficacy_pred": runner.tokenizer.decode(
                            [p for p, m in zip(post[i], eff.mask, strict=True) if m])})
    return scores, details


def run_whitebox_unit(runner: WhiteBoxRunner, editor: Editor, cases: Sequence[EditCase],
                      protocol: Protocol, fluency_tokens: int = 0, seed: int = 0) -> UnitResult:
    """Spec §2 metrics for one unit on an HF model."""
    editor.reset()
    loc_probes = locality_probes(runner, cases)
    pre = runner.argmax([p for _, _, p in loc_probes])
    apply_unit(editor, cases, protocol)
    try:
        scores, details = score_cases(runner, editor, cases, loc_probes, pre)
        fluency = None
        if fluency_tokens > 0:
            texts = [runner.continuation(c.prompt, editor, fluency_tokens, FLUENCY_TOP_K,
                                         seed + k) for k, c in enumerate(cases)]
            fluency = mean(fluency_entropy(t) for t in texts)
        return UnitResult([c.id for c in cases], scores, fluency, details)
    finally:
        editor.reset()


Generate = Callable[[str, str], Awaitable[str]]
"""``generate(context, query)``: the model's reply to ``query`` shown after ``context``."""


async def run_blackbox_unit(generate: Generate, editor: Editor, cases: Sequence[EditCase],
                            protocol: Protocol) -> UnitResult:
    """Spec §7 text-match deviation for one unit through any text generator."""
    editor.reset()
    loc = [(i, q) for i, c in enumerate(cases) for q in c.locality]
    pre_a = await asyncio.gather(*(generate("", q.prompt) for _, q in loc))
    pre_b = await asyncio.gather(*(generate("", q.prompt) for _, q in loc))
    apply_unit(editor, cases, protocol)
    try:
        queries = [c.prompt for c in cases] + [c.rephrase_prompt for c in cases] + \
            [q.prompt for _, q in loc]
        contexts = editor.contexts(queries)
        answers = [first_line(a) for a in await asyncio.gather(
            *(generate(ctx, q) for ctx, q in zip(contexts, queries, strict=True)))]
        retrieval = retrieval_stats(editor, cases)
        n = len(cases)
        scores, details = [], []
        for i, case in enumerate(cases):
            locs = [(k, q) for k, (j, q) in enumerate(loc) if j == i]
            post = [answers[2 * n + k] for k, _ in locs]
            before = [first_line(pre_a[k]) for k, _ in locs]
            stable = [exact_match(first_line(pre_a[k]), first_line(pre_b[k])) for k, _ in locs]
            scores.append({
                "efficacy": float(exact_match(answers[i], case.target_new)),
                "generality": float(exact_match(answers[n + i], case.target_new)),
                "locality": mean(float(exact_match(a, b)) for a, b in zip(post, before,
                                                                         strict=True)),
                "efficacy_lenient": float(lenient_match(answers[i], case.target_new)),
                "generality_lenient": float(lenient_match(answers[n + i], case.target_new)),
                "locality_gold": mean(float(exact_match(a, q.ground_truth))
                                      for a, (_, q) in zip(post, locs, strict=True)),
                "locality_unstable": mean(float(not s) for s in stable),
                **retrieval[i],
            })
            details.append({"id": case.id, "efficacy_answer": answers[i],
                            "generality_answer": answers[n + i]})
        return UnitResult([c.id for c in cases], scores, None, details)
    finally:
        editor.reset()


# --- lifelong sequential editing ----------------------------------------------------------

LIFELONG_METRICS = ("efficacy", "generality", "locality", "avg", "false_retrieval")
DEFAULT_EVERY = 10
DEFAULT_BOOT = 2000


def checkpoints(n: int, every: int) -> list[int]:
    """Edit counts after which the lifelong curve is scored: every ``every``, and ``n``."""
    if n < 1 or every < 1:
        raise ValueError(f"need n >= 1 and every >= 1, got n={n}, every={every}")
    return sorted({*range(every, n + 1, every), n})


@dataclass
class CurvePoint:
    """Per-case scores of the first ``n_edits`` cases after ``n_edits`` sequential edits."""

    n_edits: int
    case_ids: list[str]
    scores: list[dict[str, float]]
    edit_seconds: float
    """Wall time spent in ``apply`` so far (cumulative)."""
    eval_seconds: float
    """Wall time of scoring this point."""


@dataclass
class Resume:
    """Where a lifelong run that stopped part-way continues: the points it scored and the
    editor's :meth:`~harness.plugins.editor.Editor.save_state` right after the last of them."""

    points: list[CurvePoint]
    state: dict[str, Any]


def run_lifelong(runner: WhiteBoxRunner, editor: Editor, cases: Sequence[EditCase],
                 every: int = DEFAULT_EVERY,
                 on_point: Callable[[CurvePoint], None] | None = None,
                 resume: Resume | None = None) -> list[CurvePoint]:
    """Lifelong editing: apply ``cases``' edits one ``apply`` call at a time, without reset,
    and after every ``every`` edits score every case edited so far (efficacy and generality
    of its edit, locality against the argmax recorded before the first edit).

    Unlike the sequential unit (scored once, after all N), this is a curve, so forgetting of
    early edits and the drift of weight editors show up as the count grows.

    With ``resume`` the editor is loaded from the saved state (after the unedited model's
    locality argmax is recorded) and the run goes on from the edit after the last saved
    point; the returned list starts with the saved points. ``on_point`` sees new points only.
    """
    import time

    editor.reset()
    loc_all = locality_probes(runner, cases)
    pre_all = runner.argmax([p for _, _, p in loc_all])
    marks = set(checkpoints(len(cases), every))
    points: list[CurvePoint] = []
    edit_time = 0.0
    done = 0
    if resume is not None:
        points = list(resume.points)
        if not points:
            raise ValueError("a resume needs at least one scored point")
        done = points[-1].n_edits
        if [p.n_edits for p in points] != [m for m in sorted(marks) if m <= done] or \
                points[-1].case_ids != [c.id for c in cases[:done]]:
            raise ValueError("the saved points are not this run's first checkpoints "
                             f"({[p.n_edits for p in points]} over other cases or marks)")
        editor.load_state(resume.state)
        if len(editor.edits) != done:
            raise ValueError(f"the saved editor holds {len(editor.edits)} edits, its last "
                             f"point {done}")
        edit_time = points[-1].edit_seconds
    try:
        for j, case in enumerate(cases[done:], start=done + 1):
            started = time.perf_counter()
            editor.apply([Edit(case.prompt, case.target_new)])
            edit_time += time.perf_counter() - started
            if j not in marks:
                continue
            started = time.perf_counter()
            chosen = [k for k, (i, _, _) in enumerate(loc_all) if i < j]
            scores, _ = score_cases(runner, editor, cases[:j], [loc_all[k] for k in chosen],
                                    [pre_all[k] for k in chosen])
            for row in scores:
                row["avg"] = avg_score(row["efficacy"], row["generality"], row["locality"])
            point = CurvePoint(j, [c.id for c in cases[:j]], scores, edit_time,
                               time.perf_counter() - started)
            points.append(point)
            if on_point is not None:
                on_point(point)
        return points
    finally:
        editor.reset()


def point_summary(point: CurvePoint, n_boot: int = DEFAULT_BOOT, seed: int = 0,
                  metrics: Sequence[str] = LIFELONG_METRICS) -> dict[str, Any]:
    """Means × 100 with percentile bootstrap 95% CIs, resampling records (a case is one
    record, so the record-clustered bootstrap is the case bootstrap)."""
    out: dict[str, Any] = {"n_edits": point.n_edits, "edit_seconds": round(point.edit_seconds, 3),
                           "eval_seconds": round(point.eval_seconds, 3)}
    for name in metrics:
        values = [100 * s[name] for s in point.scores if name in s]
        if not values:
            continue
        est = bootstrap_ci(values, n_boot=n_boot, seed=seed, cluster=point.case_ids)
        out[name] = {"mean": round(est.estimate, 3), "lo": round(est.lo, 3),
                     "hi": round(est.hi, 3)}
    return out


def retention(points: Sequence[CurvePoint], n_boot: int = DEFAULT_BOOT, seed: int = 0,
              metrics: Sequence[str] = ("efficacy", "generality", "locality")
              ) -> dict[str, Any]:
    """How the first point's cases fare at the last point: per metric, the mean paired
    change (last − first, × 100) over those cases with a bootstrap 95% CI. Negative =
    degradation of the earliest edits (or of their locality) as later edits pile up."""
    if len(points) < 2:
        return {}
    first, last = points[0], points[-1]
    n = first.n_edits
    out: dict[str, Any] = {"cases": n, "from_edits": n, "to_edits": last.n_edits}
    for name in metrics:
        diffs = [100 * (b[name] - a[name]) for a, b in zip(first.scores, last.scores[:n],
                                                             strict=True)]
        est = bootstrap_ci(diffs, n_boot=n_boot, seed=seed, cluster=first.case_ids)
        out[name] = {"mean": round(est.estimate, 3), "lo": round(est.lo, 3),
                     "hi": round(est.hi, 3)}
    return out
