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
for several editors with::

    python -m benchmarks.medversa.protocol --data PATH/test.json --model smollm2-135m \\
        --n 100 --every 10 --editors none,retrieval,ft-l,rome,memit,grace,medrek,ike

The same command continues a run cut short: finished editors are kept from the JSON, and
an editor stopped part-way resumes from the checkpoint saved at its last scored point
(:mod:`benchmarks.medversa.lifelong_checkpoint`).
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
from harness.editors import ALL_EDITS, Edit, Editor
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
    editor's :meth:`~harness.editors.Editor.save_state` right after the last of them."""

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


# --- `python -m benchmarks.medversa.protocol`: the lifelong curves as JSON + Markdown -------

def _table(runs: dict[str, dict[str, Any]]) -> str:
    """One Markdown row per (editor, checkpoint): means [95% CI] × 100."""
    head = ("| editor | edits | reliability | generality | locality | Avg | false retr. "
            "| apply s (cum.) |\n|---|---:|---|---|---|---|---|---:|\n")
    rows = []
    for name, run in runs.items():
        for p in run["curve"]:
            cells = [f"{p[m]['mean']:.1f} [{p[m]['lo']:.1f}, {p[m]['hi']:.1f}]"
                     if m in p else "–" for m in LIFELONG_METRICS]
            rows.append(f"| {name} | {p['n_edits']} | " + " | ".join(cells)
                        + f" | {p['edit_seconds']:.1f} |")
    stopped = [f"{name} (after {run['stopped_after']} edits)" for name, run in runs.items()
               if "stopped_after" in run]
    if stopped:
        rows.append("\nStopped before the last edit, curve so far: " + ", ".join(stopped)
                    + ".")
    ret = ["", "Retention of the first checkpoint's edits at the last one (paired change × 100, "
           "95% bootstrap CI; negative = degradation):", "",
           "| editor | cases | Δ reliability | Δ generality | Δ locality |",
           "|---|---:|---|---|---|"]
    for name, run in runs.items():
        r = run["retention"]
        if r:
            ret.append(f"| {name} | {r['cases']} | " + " | ".join(
                f"{r[m]['mean']:+.1f} [{r[m]['lo']:+.1f}, {r[m]['hi']:+.1f}]"
                for m in ("efficacy", "generality", "locality")) + " |")
    return head + "\n".join(rows) + "\n" + "\n".join(ret) + "\n"


def _progress(editor: str) -> Callable[[CurvePoint], None]:
    """Print one line per curve point (the run is long; this shows it is moving)."""

    def show(point: CurvePoint) -> None:
        means = " ".join(f"{m}={100 * mean(s[m] for s in point.scores):.1f}"
                         for m in ("efficacy", "generality", "locality"))
        print(f"{editor} {point.n_edits}: {means}", flush=True)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    """Run the lifelong protocol for several editors on one white-box model; write
    ``<out>/<stem>.json`` (curves, retention, settings, wall times) and ``<stem>.md``."""
    import argparse
    import time
    from pathlib import Path

    from benchmarks.medversa.lifelong_checkpoint import (
        checkpoint_path,
        load_checkpoint,
        save_checkpoint,
    )
    from benchmarks.medversa.medversa import train_records
    from environments.medversa.load import load_dataset
    from environments.medversa.split import check_disjoint
    from harness.editors import make_editor
    from harness.models.whitebox import WhiteBoxLM, ensure_hf_copy, ladder_hf_copy

    parser = argparse.ArgumentParser(prog="python -m benchmarks.medversa.protocol",
                                     description=main.__doc__)
    parser.add_argument("--data", default="sample", help="sample, a JSON path or medversa:SPLIT")
    parser.add_argument("--model", default="smollm2-135m", help="a ladder model name")
    parser.add_argument("--editors", default="none,retrieval,ft-l,rome,memit,grace")
    parser.add_argument("--n", type=int, default=100, help="edits applied in sequence")
    parser.add_argument("--every", type=int, default=DEFAULT_EVERY, help="score every k edits")
    parser.add_argument("--seed", type=int, default=0, help="shuffle and bootstrap seed")
    parser.add_argument("--out", default="benchmarks/medversa/results/lifelong")
    parser.add_argument("--stem", default=None, help="file name stem (default lifelong-n<N>)")
    args = parser.parse_args(argv)
    cases = make_units(load_dataset(args.data), "sequential", args.n, args.seed)[0]
    # what the learning editors train on (retrieval's projection, the ROME/MEMIT covariance
    # corpus, MedREK's retriever and prompt encoder): the shipped sample set, never the
    # evaluated records; the 5-field rows of `train_records` (retrieval and the covariance
    # corpus read the first three fields, MedREK all five)
    sample = load_dataset("sample")
    check_disjoint(sample, cases)
    train = train_records(sample)
    folder = ensure_hf_copy() if args.model == "smollm2-135m" else ladder_hf_copy(args.model)
    lm = WhiteBoxLM.load(folder)
    runner = WhiteBoxRunner(lm.model, lm.tokenizer)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = args.stem or f"lifelong-n{args.n}"
    settings = {"model": args.model, "data": str(args.data), "n": args.n, "every": args.every,
                "seed": args.seed, "case_ids": [c.id for c in cases],
                "bootstrap": {"n_boot": DEFAULT_BOOT, "level": 0.95, "cluster": "record"},
                "train": f"sample ({len(train)} records, disjoint from the evaluated ones)",
                "command": "python -m benchmarks.medversa.protocol " + " ".join(
                    argv if argv is not None else __import__("sys").argv[1:])}
    # resumable: editors already in a file written with the same design are kept, not rerun;
    # an editor that stopped part-way continues from its checkpoint (lifelong_checkpoint)
    runs = _resumed_runs(out / f"{stem}.json", settings)
    design = {k: settings[k] for k in _DESIGN_KEYS}
    for name in [e.strip() for e in args.editors.split(",") if e.strip()]:
        if name in runs:
            print(f"[{name}] kept from {out / stem}.json")
            continue
        started = time.perf_counter()
        editor = make_editor(name, lm.model, lm.tokenizer, train=train)
        build = time.perf_counter() - started
        trained = getattr(editor, "train_report", None)  # MedREK says what its training did
        ckpt = checkpoint_path(out, stem, name)
        saved = load_checkpoint(ckpt, design=design, editor=name, settings=editor.settings())
        resumed_after: list[int] = []
        if saved is not None:  # wall time and build time count from the first segment
            started -= saved.wall_seconds
            build = saved.build_seconds
            resumed_after = [*saved.resumed_after, saved.resume.points[-1].n_edits]
        done: list[CurvePoint] = list(saved.resume.points) if saved is not None else []

        def keep(point: CurvePoint, editor_name: str = name, done: list[CurvePoint] = done,
                 show: Callable[[CurvePoint], None] = _progress(name), t0: float = started,
                 build_s: float = build, training: Any = trained, current: Editor = editor,
                 path: Path = ckpt, resumed: list[int] = resumed_after) -> None:
            # every scored point reaches the file at once, marked as a stopped run until
            # the last one, so a run cut short (a session's end) keeps its curve so far,
            # and the editor's state is saved beside it so a rerun continues from here
            show(point)
            done.append(point)
            if point.n_edits < args.n:
                save_checkpoint(path, design=design, editor=editor_name,
                                settings=current.settings(), points=done,
                                state=current.save_state(),
                                wall_seconds=time.perf_counter() - t0, build_seconds=build_s,
                                resumed_after=resumed)
                runs[editor_name] = {**_run_entry(done, t0, build_s, training, args.seed,
                                                  resumed),
                                     "stopped_after": point.n_edits}
                _write_lifelong(out, stem, settings, runs)

        run_lifelong(runner, editor, cases, args.every, on_point=keep,
                     resume=saved.resume if saved is not None else None)
        runs[name] = _run_entry(done, started, build, trained, args.seed, resumed_after)
        _write_lifelong(out, stem, settings, runs)
        ckpt.unlink(missing_ok=True)  # finished: the JSON holds the whole curve
    _write_lifelong(out, stem, settings, runs)
    print(f"wrote {out / stem}.json and .md")
    return 0


def _run_entry(points: Sequence[CurvePoint], started: float, build: float, trained: Any,
               seed: int, resumed_after: Sequence[int] = ()) -> dict[str, Any]:
    """One editor's record in the lifelong file: timings, training, curve, retention, and
    (for a run continued from a checkpoint) the edit counts its earlier segments stopped
    after; ``wall_seconds`` then sums every segment."""
    import time

    return {"build_seconds": round(build, 3),
            **({"resumed_after": list(resumed_after)} if resumed_after else {}),
            **({"training": {k: trained[k] for k in ("key", "steps", "records", "cached",
                                                     "platform") if k in trained}}
               if trained else {}),
            "wall_seconds": round(time.perf_counter() - started, 3),
            "curve": [point_summary(p, seed=seed) for p in points],
            "retention": retention(points, seed=seed),
            "scores": {p.n_edits: p.scores for p in points[-1:]}}


_DESIGN_KEYS = ("model", "data", "n", "every", "seed", "case_ids")


def _resumed_runs(path: Any, settings: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The runs of an earlier file at ``path`` when its design (model, data, n, every, seed
    and the exact case ids) is this run's; an empty dict when there is none. A file with a
    different design is an error, never silently overwritten or mixed in."""
    import json

    if not path.exists():
        return {}
    earlier = json.loads(path.read_text())
    old = earlier.get("settings", {})
    differing = [k for k in _DESIGN_KEYS if old.get(k) != settings[k]]
    if differing:
        raise SystemExit(f"{path} was written with another design ({', '.join(differing)} "
                         "differ); pass --stem or --out to write elsewhere")
    # a run that stopped part-way (``stopped_after``) is run again: from its checkpoint when
    # one matches (lifelong_checkpoint), otherwise from the first edit
    return {name: run for name, run in earlier.get("runs", {}).items()
            if "stopped_after" not in run}


def _write_lifelong(out: Any, stem: str, settings: dict[str, Any],
                    runs: dict[str, dict[str, Any]]) -> None:
    """Write ``<stem>.json`` and ``<stem>.md``; called after every editor so a long run
    that stops keeps what it finished."""
    import json

    (out / f"{stem}.json").write_text(json.dumps({"settings": settings, "runs": runs},
                                                 indent=1) + "\n")
    (out / f"{stem}.md").write_text(
        f"# Lifelong editing: {settings['n']} sequential edits, {settings['model']}\n\n"
        f"`{settings['command']}`\n\nScores × 100 over the cases edited so far, 95% "
        f"bootstrap CIs over records ({DEFAULT_BOOT} resamples).\n\n" + _table(runs))


if __name__ == "__main__":
    from harness.errors import guarded

    raise SystemExit(guarded(main))
