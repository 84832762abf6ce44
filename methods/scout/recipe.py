"""``scout-sft``: a tiny byte LM fine-tuned on scout dialogues of a game task.

SCOUT (Harry-mic/SCOUT; "Sub-Scale Collaboration On Unseen Tasks", ICML 2026): small
scouts explore symbolic and spatial games far more cheaply than an LLM can, and their
expert trajectories, textualised as dialogues, bootstrap the LLM by SFT (then multi-turn
RL: :mod:`methods.scout.multiturn_rl`). This recipe: tabular Q-learning scouts learn each
training instance of the task (default ``harness/scout``, ``split=train``: seeds disjoint
from the scored ``test`` split), the solved greedy trajectories become dialogues
(:mod:`methods.scout.textualise`), every turn is rendered exactly as ``whitebox/`` asks the
model (:func:`methods.scout.data.window_prompts`), and a seeded tiny byte Llama
(:mod:`methods.recipes.tinylm`) is trained on the move argument only (cross-entropy on the
answer bytes and the end token). ``steps=0`` saves the seeded, untrained model: the
"untrained" product of the study, same architecture.

Why a tiny LM here: each training prompt is ~900 bytes (the rules, the fallback tools
prompt with the ``move`` schema, the board); one SmolLM2 forward pass over a move prompt
costs 3.67 CPU-s against the tiny model's 0.064 (measured by :mod:`methods.scout.cost`).
The ladder model itself is taught by ``scout-sft-ladder`` (registered below, built by
:mod:`methods.scout.ladder_sft`), which trains only SmolLM2's top layers on inputs the
frozen bottom computes once per shared prompt prefix.

``scout.json`` in the product: per game, instances scouted, solved, environment
transitions, CPU seconds, moves of the kept trajectories vs the optimum; and the SFT
totals (examples, prompt length, steps, CPU seconds).

    harness recipes build scout-sft --seed 0
    inspect eval harness/scout --model whitebox/tinylm -M recipe=scout-sft
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from harness.corpus import Corpus
from harness.plugins.recipe import TrainLog, recipe
from methods.scout.data import scout_task, token_rows, window_prompts
from methods.scout.qlearning import QConfig

__all__ = ["LADDER_DEFAULTS", "SFT_DEFAULTS", "scout_sft", "scout_sft_ladder"]

SFT_DEFAULTS: dict[str, Any] = {
    "task": "harness/scout", "task_args": '{"split": "train", "n": 40}',
    "episodes": 800, "max_steps": 40, "shaping": True,
    "steps": 200, "batch": 16, "lr": 3e-3, "d_model": 64, "n_layers": 2, "n_heads": 4,
    "threads": 1,
}
"""40 training instances per game scouted with up to 800 Q-learning episodes each; 200
AdamW steps of 16 turns on a 2-layer, d = 64 byte Llama (117,248 parameters)."""

VERSION = "1"


@recipe("scout-sft", extra="cpu", version=VERSION, defaults=SFT_DEFAULTS,
        summary="a tiny byte LM fine-tuned on Q-learning scouts' game dialogues (SCOUT)")
def scout_sft(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
              log: TrainLog) -> None:
    """Scout the task's training instances, textualise, SFT a seeded tiny byte Llama."""
    import torch
    from transformers import AutoTokenizer

    from methods.recipes import tinylm

    qcfg = QConfig(episodes=int(options["episodes"]), max_steps=int(options["max_steps"]),
                   shaping=bool(options["shaping"]))
    data = scout_task(str(options["task"]), str(options["task_args"]), qcfg, seed)
    if not data.dialogues:
        raise ValueError("the scouts solved no training instance: nothing to train on")
    tinylm.save_tokenizer(out_dir, 4096)
    tok = AutoTokenizer.from_pretrained(str(out_dir), local_files_only=True)
    rows = token_rows(window_prompts(data, tok), tok, tinylm.EOS)
    longest = max(len(p) + len(a) for p, a in rows)
    d = int(options["d_model"])
    cfg = tinylm.TinyConfig(d_model=d, n_layers=int(options["n_layers"]),
                            n_heads=int(options["n_heads"]), n_kv_heads=int(options["n_heads"]),
                            ffn=int(d * 2.75) // 8 * 8, seq_len=longest,
                            batch=int(options["batch"]), steps=max(int(options["steps"]), 1),
                            lr=float(options["lr"]), warmup=10,
                            threads=int(options["threads"]), max_positions=4096)
    steps = int(options["steps"])
    started = time.process_time()
    with tinylm.deterministic(cfg.threads):
        model = tinylm.build_model(cfg, seed)
        opt = tinylm.make_optimizer(model, cfg)
        gen = torch.Generator().manual_seed(seed)

        next_batch = tinylm.answer_batches(rows, cfg.batch, gen)

        log.reset_clock()
        if steps > 0:
            tinylm.train_steps(model, opt, range(1, steps + 1), next_batch,
                               tinylm.cosine_lr(cfg), tinylm.step_flops(cfg), log.step)
        tinylm.save(tinylm.export(model, cfg), cfg, out_dir)
    (out_dir / "scout.json").write_text(json.dumps({
        "task": options["task"], "task_args": json.loads(str(options["task_args"])),
        "scouts": data.stats, "dialogues": len(data.dialogues),
        "sft": {"examples": len(rows), "longest_tokens": longest, "steps": steps,
                "cpu_s": round(time.process_time() - started, 3)},
    }, indent=2, sort_keys=True) + "\n")


LADDER_DEFAULTS: dict[str, Any] = {
    "task": "harness/scout", "task_args": '{"split": "train", "n": 40}',
    "episodes": 800, "max_steps": 40, "shaping": True,
    "base": "smollm2-135m", "top_layers": 4, "max_examples": 240,
    "steps": 60, "batch": 8, "lr": 2e-4, "threads": 1,
}
"""The scouts of ``scout-sft`` (40 training instances per game); 60 AdamW steps of 8 turns
on SmolLM2-135M's top 4 of 30 decoder layers, over at most 240 turns drawn (seeded) from
the scouts' dialogues."""

LADDER_VERSION = "1"


@recipe("scout-sft-ladder", extra="cpu", version=LADDER_VERSION, defaults=LADDER_DEFAULTS,
        summary="SmolLM2-135M's top layers fine-tuned on Q-learning scouts' dialogues (SCOUT)")
def scout_sft_ladder(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
                     log: TrainLog) -> None:
    """The ladder model taught by the scouts (:mod:`methods.scout.ladder_sft`)."""
    from methods.scout.ladder_sft import build

    build(options, out_dir, seed, log)
