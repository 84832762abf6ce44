"""Does what test-time RL learned transfer? ``harness method ttrl transfer`` (also ``python
-m methods.thetaevolve.ttrl_transfer transfer``): inference-only ThetaEvolve on an unseen task
with the
base model and with a checkpoint :class:`methods.thetaevolve.ttrl.TestTimeRL` wrote, as one JSON.

Why a module of its own: it drives the search (:mod:`methods.thetaevolve.thetaevolve`), which in
turn loads the learner (:mod:`methods.thetaevolve.ttrl`); kept apart, neither of those imports the
other's driver and the import graph has no circle.

    harness method ttrl transfer --checkpoint CKPT_DIR --task harness/first_autocorrelation \\
        --out transfer.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def transfer(checkpoint: Path, task: str, out: Path, steps: int, parents_per_step: int,
             responses_per_parent: int, max_tokens: int, task_args: dict[str, Any],
             base_model: str = "whitebox/smollm2-135m", seed: int = 0,
             temperature: float = 0.8, reward_format: float = 0.0) -> dict[str, Any]:
    """Inference-only ThetaEvolve on ``task`` with the base model and with ``checkpoint``;
    the per-step best scores, edit shares, format credit (when ``reward_format > 0``; it
    only changes the logged rewards, not the search) and final score of both, as one JSON."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai import task_with

    from harness.factorial.cells import load_task
    from methods.thetaevolve.thetaevolve import STORE_CANDIDATES, STORE_SUMMARY, thetaevolve

    arms = {"base": {}, "trained": {"model_path": str(checkpoint)}}
    result: dict[str, Any] = {"task": task, "checkpoint": str(checkpoint), "steps": steps,
                              "parents_per_step": parents_per_step,
                              "responses_per_parent": responses_per_parent,
                              "max_tokens": max_tokens, "seed": seed,
                              "temperature": temperature, "reward_format": reward_format,
                              "arms": {}}
    for arm, model_args in arms.items():
        solver = thetaevolve(steps=steps, parents_per_step=parents_per_step,
                             responses_per_parent=responses_per_parent, num_islands=1,
                             max_tokens=max_tokens, seed=seed, temperature=temperature,
                             reward_format=reward_format,
                             checkpoint_dir=str(out.parent / f".{out.stem}-{arm}"), resume=False)
        built = task_with(load_task(task, dict(task_args)), solver=solver)
        t_cpu = time.process_time()
        log = inspect_eval(built, model=base_model, model_args=model_args, display="none",
                           log_dir=str(out.parent / f".{out.stem}-logs"))[0]
        if log.status != "success" or not log.samples:
            raise RuntimeError(f"transfer arm {arm} failed: {log.error}")
        sample = log.samples[0]
        summary = sample.store.get(STORE_SUMMARY, {})
        candidates = sample.store.get(STORE_CANDIDATES, [])
        scores = {name: s.value for name, s in (sample.scores or {}).items()}
        result["arms"][arm] = {
            "model_args": model_args, "scores": scores,
            "best_score_per_step": summary.get("best_score_per_step"),
            "best_objective_per_step": summary.get("best_objective_per_step"),
            "diff_share": summary.get("diff_share"), "rewrite_share": summary.get("rewrite_share"),
            "outcomes": summary.get("outcomes"), "tokens_used": summary.get("tokens_used"),
            **per_step_format(candidates, steps),
            "cpu_s": round(time.process_time() - t_cpu, 1),
        }
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    return result


def per_step_format(candidates: Sequence[dict[str, Any]], steps: int) -> dict[str, list[Any]]:
    """Per step ``1..steps``: responses, valid diffs, full rewrites, and the mean format
    credit of the candidates (the format-validity curve of a run)."""
    out: dict[str, list[Any]] = {"responses_per_step": [], "valid_diffs_per_step": [],
                                 "rewrites_per_step": [], "format_credit_per_step": []}
    for step in range(1, steps + 1):
        rows = [c for c in candidates if c.get("step") == step]
        credits = [float(c.get("format_credit") or 0.0) for c in rows]
        out["responses_per_step"].append(len(rows))
        out["valid_diffs_per_step"].append(sum(c.get("edit") == "diff" for c in rows))
        out["rewrites_per_step"].append(sum(c.get("edit") == "rewrite" for c in rows))
        out["format_credit_per_step"].append(round(sum(credits) / len(credits), 6)
                                             if credits else None)
    return out


def main(argv: list[str] | None = None) -> int:
    """``harness method ttrl transfer ...`` (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="harness method ttrl")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("transfer", help="base vs trained checkpoint on an unseen task")
    t.add_argument("--checkpoint", type=Path, required=True)
    t.add_argument("--task", default="harness/first_autocorrelation")
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--steps", type=int, default=3)
    t.add_argument("--parents-per-step", type=int, default=1)
    t.add_argument("--responses-per-parent", type=int, default=4)
    t.add_argument("--max-tokens", type=int, default=256)
    t.add_argument("--timeout", type=int, default=20)
    t.add_argument("--base-model", default="whitebox/smollm2-135m")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--temperature", type=float, default=0.8)
    t.add_argument("--reward-format", type=float, default=0.0,
                   help="log the graded format credit with this weight (0..0.1)")
    args = parser.parse_args(argv)
    if not (args.checkpoint / "config.json").is_file():
        parser.error(f"--checkpoint {args.checkpoint} is not a model folder (no config.json)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = transfer(args.checkpoint, args.task, args.out, args.steps, args.parents_per_step,
                      args.responses_per_parent, args.max_tokens, {"timeout": args.timeout},
                      args.base_model, args.seed, args.temperature, args.reward_format)
    print(json.dumps({arm: r["scores"] for arm, r in result["arms"].items()}, indent=2))
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(guarded(main))
