"""SCOUT's last stage: multi-turn GRPO of the scout-sft model on whole game episodes.

Why a command of its own: the trainer (:func:`methods.rl.trainer.train`) and the episode
source (:class:`methods.rl.multiturn.EpisodeGroups`) are generic; this wires them for
SCOUT: the start is a ``scout-sft`` product (built or found in the recipe cache), the
episodes are the task's *training* instances (the scored ``test`` split is never played),
and the checkpoint in ``--run-dir`` is a model folder the engine scores:

    python -m methods.scout.multiturn_rl --base recipe:scout-sft --run-dir /tmp/scout-rl \\
        --steps 40 --lr 5e-5
    inspect eval harness/scout -T split=test -T n=4 -T limit_factor=1.0 -T limit_extra=2 \\
        --model whitebox/tinylm -M model_path=/tmp/scout-rl/ckpt-000040

A rerun with the same ``--run-dir`` resumes from its last checkpoint (the trainer's).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Train; print each step's log line and the final checkpoint's folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="recipe:scout-sft",
                        help="a model folder or recipe:NAME?opt=v&seed=N")
    parser.add_argument("--run-dir", type=Path, required=True)
    parser.add_argument("--task", default="harness/scout")
    parser.add_argument("--task-args", default=json.dumps(
        {"split": "train", "n": 40, "limit_factor": 1.0, "limit_extra": 2}))
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--k", type=int, default=4, help="episodes per group")
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import methods._registry  # noqa: F401  (recipes)
    from harness.plugins.recipe import resolve_model_args
    from methods.rl.multiturn import EpisodeGroups
    from methods.rl.trainer import RLConfig, train

    base = Path(args.base)
    if args.base.startswith("recipe:"):
        base = Path(resolve_model_args({"model_path": args.base})["model_path"])
    source = EpisodeGroups(args.task, args.task_args, k=args.k, seed=args.seed,
                           temperature=args.temperature)
    cfg = RLConfig(algo="grpo", steps=args.steps, k=args.k, lr=args.lr,
                   temperature=args.temperature, ckpt_every=max(args.steps // 2, 1),
                   seed=args.seed)
    final = train(cfg, base, args.run_dir, source, on_step=lambda row: print(
        json.dumps({k: row[k] for k in ("step", "loss", "reward", "tokens", "cpu_s")}),
        flush=True))
    print(final)


if __name__ == "__main__":
    from harness.errors import guarded

    guarded(main)
