"""MedREK's training-budget curve: does the trained soft prompt carry the edit, on the records
it trained on and on held-out ones, as training goes on?

Why a runner of its own: the full protocol trains MedREK for the default 30 steps and finds
its efficacy equal to the unedited model's; this asks whether that is the budget or the
mechanism. One training run through the frozen model, scored at checkpoints with **oracle
injection** (the method's own code, reached through the registered editor:
``MedREKEditor.budget_curve``, :mod:`methods.medversa.medrek_budget`): each record's own edit is
turned into its T soft tokens and prepended, with no retrieval, so the numbers isolate the
prompt encoder (retrieval is the same module as ``retrieval``'s and is measured in the full
protocol). Scores follow spec §2 (teacher-forced token accuracy for efficacy on the edit
prompt and generality on its paraphrase; locality = argmax agreement on the locality prompt
with the soft prompt prepended against the unedited argmax, i.e. what a false retrieval
would cost), means × 100 with 95% bootstrap CIs over records (:mod:`harness.stats`).

    harness medversa medrek-budget \\
        --data ../shared/reference-data/medversa/test.json --steps 600 \\
        --checkpoints 0,30,100,200,400,600 \\
        --out methods/studies/medversa_protocol/logs/medrek_budget

Each checkpoint's encoder is also written to MedREK's training cache under the key a run
with ``steps=<checkpoint>`` would have (the runs are identical: nothing random is drawn
between steps), so the editor at that budget (``EVALSUITE_MEDREK_STEPS=<checkpoint>``) loads
it instead of training again.

"fit" = the first ``--n-fit`` train records (seen in training); "held-out" = the first ``--n``
evaluated records after the seed shuffle (the full protocol's scored records). Writes
``<out>/medrek_budget.json`` and ``<out>/medrek_budget.md``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.medversa.full import ci, load_model
from benchmarks.medversa.medversa import make_split, train_records
from benchmarks.medversa.protocol import make_units
from harness.plugins.editor import get

METRICS = ("efficacy", "generality", "locality")


def summarize(rows: Sequence[dict[str, float]], ids: Sequence[str], seed: int
              ) -> dict[str, dict[str, float]]:
    """Mean × 100 and 95% bootstrap CI over records, per metric (the full runner's CI)."""
    return {m: ci([r[m] for r in rows], ids, seed) for m in METRICS}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Train once, score fit and held-out records at every checkpoint."""
    import torch

    torch.set_num_threads(args.threads)
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    split = make_split(args.data, args.train, args.n_train, args.seed)
    train = train_records(split.train)
    fit_ids = [c.id for c in split.train[: args.n_fit]]
    held_cases = [u[0] for u in make_units(list(split.eval), "single", 1, args.seed, args.n)]
    held_ids = [c.id for c in held_cases]
    lm = load_model(args.model, args.model_path, args.dtype)
    settings = {"steps": args.steps, "batch_size": args.batch_size, "lr": args.lr,
                "seed": args.train_seed, "n_tokens": args.tokens, "bf16": args.bf16}
    curve: list[dict[str, Any]] = []
    per_record: dict[str, Any] = {}

    def point(done: int, scores: dict[str, list[dict[str, float]]]) -> None:
        summary = {"fit": summarize(scores["fit"], fit_ids, args.seed),
                   "held_out": summarize(scores["held_out"], held_ids, args.seed)}
        curve.append({"steps": done, "epochs": done * args.batch_size / len(train), **summary,
                      "elapsed_cpu_s": time.process_time() - t_cpu,
                      "elapsed_wall_s": time.perf_counter() - t_wall})
        per_record[str(done)] = scores
        print(f"step {done}: fit {_line(summary['fit'])} | held-out "
              f"{_line(summary['held_out'])}", flush=True)
        _write(args.out, _result(args, split, settings, curve, per_record, None, t_cpu, t_wall))

    medrek = get("editor", "medrek").load()
    report = medrek.budget_curve(
        lm.model, lm.tokenizer, train,
        {"fit": train[: args.n_fit], "held_out": train_records(held_cases)},
        args.checkpoints, settings, point, store=args.store, log_every=args.log_every)
    result = _result(args, split, report["config"], curve, per_record, report, t_cpu, t_wall)
    _write(args.out, result)
    return result


def _line(summary: dict[str, dict[str, float]]) -> str:
    return " ".join(f"{m[:3]} {summary[m]['mean']:.1f}" for m in METRICS)


def _result(args: argparse.Namespace, split: Any, config: dict[str, Any],
            curve: list[dict[str, Any]], per_record: dict[str, Any],
            report: dict[str, Any] | None, t_cpu: float, t_wall: float) -> dict[str, Any]:
    losses = list(report["losses"]) if report is not None else []
    return {"model": args.model, "dtype": args.dtype, "data": args.data, "seed": args.seed,
            "split": {"source": split.source, "n_train": len(split.train),
                      "n_eval": len(split.eval), "n_fit": args.n_fit, "n_held_out": args.n},
            "config": dict(config), "complete": report is not None, "curve": curve,
            "losses": losses, "cpu_s": time.process_time() - t_cpu,
            "wall_s": time.perf_counter() - t_wall, "command": _command(args),
            "per_record": per_record}


def _command(args: argparse.Namespace) -> str:
    return (f"python -m benchmarks.medversa.medrek_budget --model {args.model} --dtype "
            f"{args.dtype} --data {args.data} --steps {args.steps} --checkpoints "
            f"{','.join(map(str, args.checkpoints))} --n {args.n} --n-fit {args.n_fit} "
            f"--out {args.out}")


def _write(out: Path, result: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "medrek_budget.json").write_text(json.dumps(result, indent=1, default=float))
    (out / "medrek_budget.md").write_text(markdown(result))


def _cell(s: dict[str, float]) -> str:
    return f"{s['mean']:.1f} [{s['lo']:.1f}, {s['hi']:.1f}]"


def markdown(result: dict[str, Any]) -> str:
    """The curve as a table (what the README quotes)."""
    cfg, split = result["config"], result["split"]
    lines = [f"# MedREK training budget: {result['model']} ({result['dtype']})", "",
             f"`{result['command']}`", "",
             f"Train split: {split['n_train']} records ({split['source']}); batch "
             f"{cfg['batch_size']}, lr {cfg['lr']}, T = {cfg['n_tokens']}, seed {cfg['seed']}. "
             "Oracle injection (each record's own edit, no retrieval); means × 100, 95% "
             "bootstrap CIs over records. "
             + ("" if result["complete"] else "**Incomplete: training was stopped early.**"),
             "", "| steps | epochs | fit efficacy | fit generality | held-out efficacy | "
             "held-out generality | held-out locality | CPU-s so far |",
             "|---:|---:|---|---|---|---|---|---:|"]
    for p in result["curve"]:
        lines.append(f"| {p['steps']} | {p['epochs']:.1f} | {_cell(p['fit']['efficacy'])} | "
                     f"{_cell(p['fit']['generality'])} | {_cell(p['held_out']['efficacy'])} | "
                     f"{_cell(p['held_out']['generality'])} | "
                     f"{_cell(p['held_out']['locality'])} | {p['elapsed_cpu_s']:.0f} |")
    lines += ["", f"n fit = {split['n_fit']} train records, n held-out = "
              f"{split['n_held_out']} evaluated records; total {result['cpu_s']:.0f} CPU-s, "
              f"{result['wall_s']:.0f} s wall.", ""]
    return "\n".join(lines)


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.medversa.medrek_budget")
    p.add_argument("--model", default="whitebox/qwen2.5-coder-0.5b")
    p.add_argument("--model-path", default=None)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--data", required=True)
    p.add_argument("--train", default="auto")
    p.add_argument("--n-train", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n", type=int, default=100, help="held-out records scored")
    p.add_argument("--n-fit", type=int, default=50, help="train records scored")
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--checkpoints", type=lambda s: [int(x) for x in s.split(",") if x],
                   default=[0, 30, 100, 200, 400, 600])
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--train-seed", type=int, default=1)
    p.add_argument("--tokens", type=int, default=3, help="T, soft tokens per edit")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True,
                   help="bfloat16 autocast for the frozen model's passes (CPU AMX)")
    p.add_argument("--store", action=argparse.BooleanOptionalAction, default=True,
                   help="cache each checkpoint's encoder, so `medrek` with "
                        "EVALSUITE_MEDREK_STEPS=<checkpoint> loads it instead of training")
    p.add_argument("--out", type=Path, required=True)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point."""
    run(parse(argv))


if __name__ == "__main__":
    from harness.errors import guarded

    guarded(main)
