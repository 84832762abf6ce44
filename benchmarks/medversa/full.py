"""The full MedVersa protocol with uncertainty, outside Inspect, on one white-box model.

Why a runner of its own: the Inspect task scores one (editor, protocol, batch size) per
eval; the issue asks for every editor under single and batch B ∈ {10, 50, 100} on the same
records, with bootstrap CIs clustered by record, a per-subject table, fluency over ≥ 100
prompts, portability (one-hop) and retention (medical multiple choice before/after), and a
shared 2-core CPU cannot afford to rerun identical forwards per cell. One process, one
model, one :class:`~benchmarks.medversa.whitebox.WhiteBoxRunner` with its forward cache:
a forward that two cells share runs once. Scores come from the same protocol code the task
uses (:func:`~benchmarks.medversa.protocol.run_whitebox_unit`); all intervals come from
:mod:`harness.stats`.

    python -m benchmarks.medversa.full --model whitebox/qwen2.5-coder-0.5b \\
        --data ../shared/reference-data/medversa/test.json --n 100 \\
        --out methods/studies/medversa_protocol/logs/full

Writes ``<out>/full.json`` (every per-record row, the summaries, timings) and
``<out>/full.md`` (the tables the README quotes).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.medversa.medversa import make_split, train_records
from benchmarks.medversa.protocol import make_units, run_whitebox_unit
from benchmarks.medversa.whitebox import WhiteBoxRunner
from environments.medversa.metrics import fluency_entropy, token_accuracy
from environments.medversa.probes import LETTERS, build_mcq, one_hop
from environments.medversa.schema import EditCase
from harness.plugins.editor import Edit, Editor, make_editor
from harness.stats import bootstrap_ci

DEFAULT_EDITORS = ("none", "ike", "retrieval", "medrek")
DEFAULT_BATCHES = (10, 50, 100)
METRICS = ("efficacy", "generality", "locality")
FLUENCY_TOP_K = 5
N_BOOT = 2000


def ci(values: Sequence[float], clusters: Sequence[str], seed: int = 0) -> dict[str, float]:
    """Mean × 100 with a 95% bootstrap CI clustered by record (``harness.stats``)."""
    est = bootstrap_ci(list(values), n_boot=N_BOOT, seed=seed, cluster=list(clusters))
    return {"mean": 100 * est.estimate, "lo": 100 * est.lo, "hi": 100 * est.hi, "n": est.n}


def load_model(model: str, model_path: str | None, dtype: str) -> Any:
    """The white-box model these runners score: ``whitebox/<ladder name>`` (or a bare ladder
    name) from the ladder's HF copy, else ``model_path``; shared within the process."""
    from harness.models import ladder
    from harness.models.whitebox import ladder_hf_copy, shared_lm

    name = model.split("/", 1)[1] if model.startswith("whitebox/") else model
    path = model_path or (str(ladder_hf_copy(name)) if ladder.find(name) else None)
    lm, _ = shared_lm(path, "cpu", dtype)
    return lm


def _cpu() -> float:
    return time.process_time()


def protocol_rows(runner: WhiteBoxRunner, name: str, editor: Editor, cases: Sequence[EditCase],
                  batches: Sequence[int], seed: int, n: int | None) -> list[dict[str, Any]]:
    """Per-record scores of one editor under single and each batch size."""
    rows: list[dict[str, Any]] = []
    cells: list[tuple[str, int]] = [("single", 1)] + [("batch", b) for b in batches]
    for proto, size in cells:
        units = make_units(list(cases), "single" if proto == "single" else "batch", size,
                           seed, n)
        for u, unit in enumerate(units):
            res = run_whitebox_unit(runner, editor, unit, "single" if size == 1 else "batch",
                                    0, seed)
            for case, score in zip(unit, res.scores, strict=True):
                rows.append({"editor": name, "protocol": proto, "batch_size": size, "unit": u,
                             "case_id": case.id, "subject": case.subject, **score})
    return rows


def portability_rows(runner: WhiteBoxRunner, name: str, editor: Editor,
                     cases: Sequence[EditCase]) -> list[dict[str, Any]]:
    """One-hop probe per record, single edit in place (records without a probe skipped)."""
    rows = []
    for case in cases:
        hop = one_hop(case)
        if hop is None:
            continue
        editor.reset()
        editor.apply([Edit(case.prompt, case.target_new)])
        try:
            probe = runner.probe(hop.prompt, hop.target)
            pred = runner.argmax([probe], editor)[0]
            acc = token_accuracy(pred, probe.forced.labels, probe.forced.mask)
        finally:
            editor.reset()
        rows.append({"editor": name, "case_id": case.id, "subject": case.subject,
                     "portability": acc})
    return rows


def letter_ids(tokenizer: Any) -> list[int]:
    """Token id of " A" … " D" (the last token of each, for tokenizers that add a BOS)."""
    return [int(tokenizer(f" {x}").input_ids[-1]) for x in LETTERS]


def summarize(rows: Sequence[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """One line per (editor, protocol, batch size): each metric's mean and clustered CI."""
    cells: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((r["editor"], r["protocol"], r["batch_size"]), []).append(r)
    out = []
    for (ed, proto, size), members in cells.items():
        ids = [m["case_id"] for m in members]
        line: dict[str, Any] = {"editor": ed, "protocol": proto, "batch_size": size,
                                "n": len(members), "n_units": len({m["unit"] for m in members})}
        for metric in (*METRICS, "retrieval_precision", "false_retrieval"):
            line[metric] = ci([m[metric] for m in members], ids, seed)
        e, g, loc = (line[m]["mean"] for m in METRICS)
        line["avg"] = ((e + g) / 2 + loc) / 2
        out.append(line)
    return out


def paired(rows: Sequence[dict[str, Any]], a: str, b: str, proto: str, size: int,
           metric: str, seed: int) -> dict[str, float]:
    """``a - b`` per record on one metric, bootstrap CI clustered by record."""
    left = {r["case_id"]: r[metric] for r in rows
            if r["editor"] == a and r["protocol"] == proto and r["batch_size"] == size}
    right = {r["case_id"]: r[metric] for r in rows
             if r["editor"] == b and r["protocol"] == proto and r["batch_size"] == size}
    ids = sorted(set(left) & set(right))
    return ci([left[i] - right[i] for i in ids], ids, seed)


def shared_cells(rows: Sequence[dict[str, Any]], a: str, b: str) -> list[tuple[str, int]]:
    """The (protocol, batch size) cells both editors were scored in, single first: a
    paired difference exists only there (``--single-only`` leaves an editor's batch cells
    out)."""
    cells = [{(r["protocol"], int(r["batch_size"])) for r in rows if r["editor"] == e}
             for e in (a, b)]
    return sorted(cells[0] & cells[1], key=lambda c: (c[0] != "single", c[1]))


def per_subject(rows: Sequence[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Single-protocol means and CIs per subject and editor."""
    out = []
    single = [r for r in rows if r["protocol"] == "single"]
    for subject in sorted({r["subject"] for r in single}):
        for ed in sorted({r["editor"] for r in single}):
            members = [r for r in single if r["subject"] == subject and r["editor"] == ed]
            ids = [m["case_id"] for m in members]
            line: dict[str, Any] = {"subject": subject, "editor": ed, "n": len(members)}
            for metric in METRICS:
                line[metric] = ci([m[metric] for m in members], ids, seed)
            out.append(line)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Everything the module docstring lists; returns the JSON it writes."""
    import torch

    torch.set_num_threads(args.threads)
    t_wall, t_cpu = time.perf_counter(), _cpu()
    split = make_split(args.data, args.train, args.n_train, args.seed)
    records = train_records(split.train)
    chosen = [u[0] for u in make_units(list(split.eval), "single", 1, args.seed, args.n)]
    lm = load_model(args.model, args.model_path, args.dtype)
    runner = WhiteBoxRunner(lm.model, lm.tokenizer, cache=True, store=args.forward_store)
    timings: dict[str, dict[str, float]] = {"load": {"cpu_s": _cpu() - t_cpu,
                                                     "wall_s": time.perf_counter() - t_wall}}
    rows: list[dict[str, Any]] = []
    hop_rows: list[dict[str, Any]] = []
    editors: dict[str, Editor] = {}
    medrek_report: dict[str, Any] | None = None
    for ed_name in args.editors:
        c0, w0 = _cpu(), time.perf_counter()
        editor = make_editor(ed_name, lm.model, lm.tokenizer, train=records)
        print(f"{ed_name}: built after {_cpu() - c0:.0f} CPU-s", flush=True)
        editors[ed_name] = editor
        report = getattr(editor, "train_report", None)  # editors that train say how
        if report is not None:
            losses = list(report.get("losses", []))
            medrek_report = {**{k: v for k, v in report.items() if k != "losses"},
                             "losses_first": losses[:3], "losses_last": losses[-3:]}
            timings[f"train:{ed_name}"] = {"cpu_s": _cpu() - c0,
                                           "wall_s": time.perf_counter() - w0}
            c0, w0 = _cpu(), time.perf_counter()
        before = runner.forwards
        sizes = [] if ed_name in args.single_only else args.batch_sizes
        rows += protocol_rows(runner, ed_name, editor, split.eval, sizes, args.seed, args.n)
        if args.portability:
            hop_rows += portability_rows(runner, ed_name, editor, chosen)
        timings[f"protocol:{ed_name}"] = {"cpu_s": _cpu() - c0,
                                          "wall_s": time.perf_counter() - w0,
                                          "forwards": float(runner.forwards - before)}
        print(f"{ed_name}: {timings[f'protocol:{ed_name}']}", flush=True)
        args.out.mkdir(parents=True, exist_ok=True)  # partial results survive an interrupt
        (args.out / "partial.json").write_text(json.dumps(
            {"summary": summarize(rows, args.seed), "medrek_train": medrek_report,
             "portability_rows": hop_rows, "timings": timings, "rows": rows}, default=float))
    result: dict[str, Any] = {
        "model": args.model, "dtype": args.dtype, "data": args.data, "seed": args.seed,
        "split": {"source": split.source, "n_train": len(split.train),
                  "n_eval": len(split.eval), "n_scored": len(chosen)},
        "editors": list(args.editors), "batch_sizes": list(args.batch_sizes),
        "summary": summarize(rows, args.seed), "per_subject": per_subject(rows, args.seed),
        "medrek_train": medrek_report,
    }
    if "medrek" in editors and "retrieval" in editors:
        result["medrek_minus_retrieval"] = [
            {"protocol": p, "batch_size": b, "metric": m,
             **paired(rows, "medrek", "retrieval", p, b, m, args.seed)}
            for p, b in shared_cells(rows, "medrek", "retrieval") for m in METRICS]
    if hop_rows:
        result["portability"] = [
            {"editor": e, **ci([r["portability"] for r in hop_rows if r["editor"] == e],
                               [r["case_id"] for r in hop_rows if r["editor"] == e], args.seed)}
            for e in args.editors if any(r["editor"] == e for r in hop_rows)]
    print(f"protocols done: {timings}", flush=True)
    if args.mcq_n:
        c0, w0 = _cpu(), time.perf_counter()
        result["retention"] = retention(runner, editors, split.eval, chosen, args)
        timings["retention"] = {"cpu_s": _cpu() - c0, "wall_s": time.perf_counter() - w0}
    print(f"retention done: {timings.get('retention')}", flush=True)
    if args.fluency_n:
        c0, w0 = _cpu(), time.perf_counter()
        result["fluency"] = fluency(runner, editors, split.eval, args)
        timings["fluency"] = {"cpu_s": _cpu() - c0, "wall_s": time.perf_counter() - w0}
    runner.save()
    timings["total"] = {"cpu_s": _cpu() - t_cpu, "wall_s": time.perf_counter() - t_wall}
    result["timings"] = timings
    result["rows"] = rows
    result["portability_rows"] = hop_rows
    return result


def retention(runner: WhiteBoxRunner, editors: dict[str, Editor], pool: Sequence[EditCase],
              chosen: Sequence[EditCase], args: argparse.Namespace) -> list[dict[str, Any]]:
    """MCQ accuracy unedited vs with a knowledge base of the first ``retention_edits``
    scored records; items from the other evaluation records' locality questions."""
    edited = list(chosen[: args.retention_edits])
    skip = {c.id for c in edited}
    items = build_mcq([c for c in pool if c.id not in skip], args.mcq_n, args.seed)
    prompts = [it.prompt() for it in items]
    choices = letter_ids(runner.tokenizer)
    before = [float(p == it.answer) for p, it in
              zip(runner.choose(prompts, choices, None), items, strict=True)]
    out = []
    ids = [it.id for it in items]
    for name, editor in editors.items():
        editor.reset()
        editor.apply([Edit(c.prompt, c.target_new) for c in edited])
        try:
            after = [float(p == it.answer) for p, it in
                     zip(runner.choose(prompts, choices, editor), items, strict=True)]
        finally:
            editor.reset()
        out.append({"editor": name, "n_items": len(items), "n_edits": len(edited),
                    "before": ci(before, ids, args.seed), "after": ci(after, ids, args.seed),
                    "change": ci([a - b for a, b in zip(after, before, strict=True)], ids,
                                 args.seed)})
    return out


def fluency(runner: WhiteBoxRunner, editors: dict[str, Editor], pool: Sequence[EditCase],
            args: argparse.Namespace) -> list[dict[str, Any]]:
    """n-gram entropy × 100 of sampled continuations of ``fluency_n`` edit prompts, with
    all of them in the knowledge base (one batch, spec §2.4), per editor."""
    cases = [u[0] for u in make_units(list(pool), "single", 1, args.seed, args.fluency_n)]
    prompts = [c.prompt for c in cases]
    out = []
    for name in args.fluency_editors:
        if name not in editors:
            continue
        editor = editors[name]
        editor.reset()
        editor.apply([Edit(c.prompt, c.target_new) for c in cases])
        try:
            texts = runner.sample_batch(prompts, editor, args.fluency_tokens, FLUENCY_TOP_K,
                                        args.seed, args.fluency_batch)
        finally:
            editor.reset()
        values = [fluency_entropy(t) for t in texts]
        out.append({"editor": name, "n": len(values),
                    **ci(values, [c.id for c in cases], args.seed),
                    "example": texts[0][:300]})
    return out


def _fmt(c: dict[str, float]) -> str:
    return f"{c['mean']:.1f} [{c['lo']:.1f}, {c['hi']:.1f}]"


def markdown(result: dict[str, Any]) -> str:
    """The tables of ``full.md``."""
    lines = [f"# MedVersa full protocol: {result['model']} ({result['dtype']})", "",
             f"Data `{result['data']}`, split {result['split']}, seed {result['seed']}. "
             "Means × 100 with 95% bootstrap CIs clustered by record (2,000 resamples).", "",
             "| editor | protocol | B | n | Efficacy | Generality | Locality | Avg | "
             "retrieval precision | false retrieval |",
             "|---|---|---:|---:|---|---|---|---:|---|---|"]
    for s in result["summary"]:
        lines.append(f"| {s['editor']} | {s['protocol']} | {s['batch_size']} | {s['n']} | "
                     f"{_fmt(s['efficacy'])} | {_fmt(s['generality'])} | "
                     f"{_fmt(s['locality'])} | {s['avg']:.1f} | "
                     f"{_fmt(s['retrieval_precision'])} | {_fmt(s['false_retrieval'])} |")
    if result.get("medrek_minus_retrieval"):
        lines += ["", "medrek − retrieval, paired per record:", "",
                  "| protocol | B | metric | difference [95% CI] |", "|---|---:|---|---|"]
        lines += [f"| {d['protocol']} | {d['batch_size']} | {d['metric']} | {_fmt(d)} |"
                  for d in result["medrek_minus_retrieval"]]
    if result.get("portability"):
        lines += ["", "Portability (one-hop first-letter probe, single edit):", "",
                  "| editor | n | portability |", "|---|---:|---|"]
        lines += [f"| {p['editor']} | {p['n']} | {_fmt(p)} |" for p in result["portability"]]
    if result.get("retention"):
        lines += ["", "Retention (medical MCQ accuracy, before → with the edits in place):", "",
                  "| editor | items | edits | before | after | change |",
                  "|---|---:|---:|---|---|---|"]
        lines += [f"| {r['editor']} | {r['n_items']} | {r['n_edits']} | {_fmt(r['before'])} | "
                  f"{_fmt(r['after'])} | {_fmt(r['change'])} |" for r in result["retention"]]
    if result.get("fluency"):
        lines += ["", "Fluency (n-gram entropy × 100, all prompts' edits in one knowledge base):",
                  "", "| editor | n | fluency |", "|---|---:|---|"]
        lines += [f"| {f['editor']} | {f['n']} | {_fmt(f)} |" for f in result["fluency"]]
    lines += ["", "Per subject (single protocol):", "",
              "| subject | editor | n | Efficacy | Generality | Locality |",
              "|---|---|---:|---|---|---|"]
    lines += [f"| {p['subject']} | {p['editor']} | {p['n']} | {_fmt(p['efficacy'])} | "
              f"{_fmt(p['generality'])} | {_fmt(p['locality'])} |" for p in result["per_subject"]]
    if result.get("medrek_train"):
        t = result["medrek_train"]
        lines += ["", f"MedREK training: {t['records']} records, {t['steps']} steps, "
                  f"{t['cpu_seconds']:.0f} CPU-s ({'cached' if t['cached'] else 'trained now'}), "
                  f"config {t['config']}; first losses {t['losses_first']}, "
                  f"last {t['losses_last']}."]
    lines += ["", "Timings (CPU-s / wall-s): " + ", ".join(
        f"{k} {v['cpu_s']:.0f}/{v['wall_s']:.0f}" for k, v in result["timings"].items())]
    return "\n".join(lines) + "\n"


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.medversa.full")
    p.add_argument("--model", default="whitebox/qwen2.5-coder-0.5b")
    p.add_argument("--model-path", default=None)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--data", required=True)
    p.add_argument("--train", default="auto")
    p.add_argument("--n-train", type=int, default=None)
    p.add_argument("--n", type=int, default=None, help="first n eval records after the shuffle")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--editors", type=lambda s: s.split(","), default=list(DEFAULT_EDITORS))
    p.add_argument("--batch-sizes", type=lambda s: [int(x) for x in s.split(",") if x],
                   default=list(DEFAULT_BATCHES))
    p.add_argument("--portability", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--mcq-n", type=int, default=100)
    p.add_argument("--retention-edits", type=int, default=100)
    p.add_argument("--fluency-n", type=int, default=100)
    p.add_argument("--fluency-tokens", type=int, default=100)
    p.add_argument("--fluency-batch", type=int, default=50)
    p.add_argument("--fluency-editors", type=lambda s: s.split(","),
                   default=["none", "retrieval", "medrek"])
    p.add_argument("--single-only", type=lambda s: s.split(","), default=[],
                   help="editors scored under the single protocol only (CPU budget)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--forward-store", type=Path, default=None,
                   help="pickle file keeping the forward cache across processes")
    p.add_argument("--out", type=Path, required=True)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run and write ``full.json`` and ``full.md``."""
    args = parse(argv)
    result = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "full.json").write_text(json.dumps(result, indent=1, default=float))
    (args.out / "full.md").write_text(markdown(result))
    (args.out / "partial.json").unlink(missing_ok=True)
    print(markdown(result))
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    raise SystemExit(guarded(main))

