"""The lifelong editing run as a command: ``harness medversa lifelong`` (also ``python -m
benchmarks.medversa.lifelong``) writes ``<out>/<stem>.json`` and ``.md`` with every editor's
curve, retention, settings and wall times.

Why a module of its own: the protocol (:mod:`benchmarks.medversa.protocol`) is what the task
and the full protocol run; this driver adds resumability (finished editors are kept from the
JSON, an editor stopped part-way continues from the checkpoint saved at its last scored
point, :mod:`benchmarks.medversa.lifelong_checkpoint`), which needs the protocol's types.
Kept apart, the imports run one way: driver -> checkpoint -> protocol.

    harness medversa lifelong --data PATH/test.json --model smollm2-135m \\
        --n 100 --every 10 --editors none,retrieval,ft-l,rome,memit,grace,medrek,ike
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import mean
from typing import Any

from benchmarks.medversa.protocol import (
    DEFAULT_BOOT,
    DEFAULT_EVERY,
    LIFELONG_METRICS,
    CurvePoint,
    make_units,
    point_summary,
    retention,
    run_lifelong,
)
from benchmarks.medversa.whitebox import WhiteBoxRunner
from harness.plugins.editor import Editor


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
    from harness.models.whitebox import WhiteBoxLM, ensure_hf_copy, ladder_hf_copy
    from harness.plugins.editor import make_editor

    parser = argparse.ArgumentParser(prog="harness medversa lifelong",
                                     description=main.__doc__)
    parser.add_argument("--data", default="sample", help="sample, a JSON path or medversa:SPLIT")
    parser.add_argument("--model", default="smollm2-135m", help="a ladder model name")
    parser.add_argument("--editors", default="none,retrieval,ft-l,rome,memit,grace")
    parser.add_argument("--n", type=int, default=100, help="edits applied in sequence")
    parser.add_argument("--every", type=int, default=DEFAULT_EVERY, help="score every k edits")
    parser.add_argument("--seed", type=int, default=0, help="shuffle and bootstrap seed")
    parser.add_argument("--out", default="methods/studies/medversa_protocol/logs/lifelong")
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
                "command": "harness medversa lifelong " + " ".join(
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
