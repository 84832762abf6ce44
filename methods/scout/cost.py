"""Exploration cost, scout vs LLM: CPU seconds per environment transition, measured.

SCOUT's claim is that exploration, not knowledge, is the LLM's bottleneck: a scout makes a
transition for microseconds of CPU, an LLM pays a forward pass over its whole prompt for
each move it tries. This module measures both on the same game instances, one CPU thread
each, so the ratio is a like-for-like price:

* the **scouts**: tabular Q-learning on every instance of the task (default the scored
  ``test`` split, which nothing here trains on), counting every environment step
  (learning episodes, greedy checks, the final rollout) and its CPU time;
* each **LLM** (white-box model folders): one forced ``move`` call per instance's first
  board, rendered exactly as ``whitebox/`` renders it, greedy, batch 1; CPU seconds per
  call is the price of one LLM transition (a lower bound on LLM exploration, which also
  needs backward passes to learn).

``equal_transitions_cpu_s`` is what the LLM would spend to make as many transitions as the
scouts needed (their ``transitions``), at its measured price. The eval logs give the
other side: the moves the models actually made while being scored (``scout_score/moves``).

    python -m methods.scout.cost --out methods/studies/scout/cost.json \\
        --model smollm2-135m=default --model scout-sft=recipe:scout-sft
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from methods.scout.data import load_game_task, opening_prompts
from methods.scout.qlearning import QConfig, train_scout

__all__ = ["llm_cost", "main", "scout_cost"]


def scout_cost(task: str, task_args: str, cfg: QConfig, seed: int = 0) -> dict[str, Any]:
    """Per game and in total: instances, solved, transitions, CPU seconds, per transition."""
    built, simulator, _ = load_game_task(task, task_args)
    games: dict[str, dict[str, float]] = {}
    for k, sample in enumerate(built.dataset):
        game = simulator(sample.metadata["spec"])
        started = time.process_time()
        run = train_scout(game, cfg, seed * 100_003 + k)
        cpu = time.process_time() - started
        row = games.setdefault(game.name, {"instances": 0, "solved": 0, "transitions": 0,
                                           "cpu_s": 0.0})
        row["instances"] += 1
        row["solved"] += int(run.trajectory.solved)
        row["transitions"] += run.transitions
        row["cpu_s"] += cpu
    total = {key: sum(r[key] for r in games.values())
             for key in ("instances", "solved", "transitions", "cpu_s")}
    for row in [*games.values(), total]:
        row["cpu_s_per_transition"] = row["cpu_s"] / max(row["transitions"], 1)
    return {"games": games, "total": total}


def _resolve(path: str) -> str | None:
    """``default`` (SmolLM2-135M), a folder, or ``recipe:NAME?opt=v`` (a product)."""
    if path == "default":
        return None
    if path.startswith("recipe:"):
        from harness.plugins.recipe import resolve_model_args

        return str(resolve_model_args({"model_path": path})["model_path"])
    return path


def llm_cost(task: str, task_args: str, model_path: str | None, calls: int,
             max_new_tokens: int = 32) -> dict[str, Any]:
    """CPU seconds per forced ``move`` call on one thread (the first ``calls`` openings)."""
    from harness.models.toolprompt import CLOSE_TAG
    from harness.models.whitebox import WhiteBoxLM
    from methods.recipes.tinylm import deterministic

    lm = WhiteBoxLM.load(model_path)
    prompts = opening_prompts(task, task_args, lm.tokenizer)[:calls]
    tokens = 0
    with deterministic(1):
        lm.generate_batch([prompts[0]], max_new_tokens=4)  # warm-up, not timed
        started, wall = time.process_time(), time.perf_counter()
        for prompt in prompts:
            (gen,) = lm.generate_batch([prompt], max_new_tokens=max_new_tokens,
                                       stop=[CLOSE_TAG])
            tokens += gen.prompt_tokens
        cpu, wall = time.process_time() - started, time.perf_counter() - wall
    return {"calls": len(prompts), "cpu_s": cpu, "wall_s": wall,
            "cpu_s_per_transition": cpu / max(len(prompts), 1),
            "mean_prompt_tokens": tokens / max(len(prompts), 1)}


def main(argv: list[str] | None = None) -> None:
    """Measure the scouts and each ``--model LABEL=PATH``; write the JSON to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="harness/scout")
    parser.add_argument("--task-args", default='{"split": "test", "n": 8}')
    parser.add_argument("--episodes", type=int, default=800)
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--model", action="append", default=[],
                        help="LABEL=PATH (PATH: default, a folder, or recipe:NAME?opt=v)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    scouts = scout_cost(args.task, args.task_args, QConfig(episodes=args.episodes))
    per_scout = scouts["total"]["cpu_s_per_transition"]
    models: dict[str, Any] = {}
    for item in args.model:
        label, _, path = item.partition("=")
        if not path:
            raise SystemExit(f"--model takes LABEL=PATH, got {item!r}")
        row = llm_cost(args.task, args.task_args, _resolve(path), args.calls)
        row["times_scout_per_transition"] = row["cpu_s_per_transition"] / max(per_scout, 1e-12)
        row["equal_transitions_cpu_s"] = (row["cpu_s_per_transition"]
                                          * scouts["total"]["transitions"])
        models[label] = row
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"task": args.task, "task_args": json.loads(args.task_args),
                                    "episodes": args.episodes, "scouts": scouts,
                                    "models": models}, indent=2, sort_keys=True) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    from harness.errors import guarded

    guarded(main)
