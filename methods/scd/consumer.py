"""The SCD consumer: a lightly fine-tuned copy of the embedded model, built once and cached.

SCD needs a producer and a consumer that share an architecture but not weights (the
consumer is a fine-tune of the producer). Here the consumer is SmolLM2 after ``steps``
AdamW steps on procedural key-recall dialogues that this module writes itself (a method
never reads a benchmark's data, and nothing is downloaded), on CPU, with a fixed seed:
the same (seed, steps, lr) always gives the same folder. It is saved under the model
cache (``<cache>/smollm2-135m-scd-consumer-s<seed>-n<steps>``) through a staging folder
renamed into place, like :func:`harness.models.whitebox.ensure_hf_copy`.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

from harness.models.weights import cache_root

DEFAULT_SEED = 0
DEFAULT_STEPS = 6
DEFAULT_LR = 2e-5
_MARKER = "evalsuite-consumer.json"


def consumer_dir(seed: int = DEFAULT_SEED, steps: int = DEFAULT_STEPS) -> Path:
    """Where the consumer for (seed, steps) lives."""
    return cache_root() / f"smollm2-135m-scd-consumer-s{seed}-n{steps}"


_NOISE = ("Clouds drift over the hills.", "A kettle hums in the kitchen.",
          "The train leaves at noon.", "Leaves fall in autumn.")


def recall_dialogue(index: int, seed: int, n_noise: int = 8) -> tuple[str, str]:
    """One (user, assistant) pair: a code hidden among ``n_noise`` neutral sentences, then
    asked for. Same (index, seed) -> same pair. The consumer only needs to stay close to
    the producer while learning to read a long context back; this is enough for that."""
    rng = random.Random(f"scd-consumer:{seed}:{index}")
    code = str(rng.randrange(10_000, 100_000))
    lines = [_NOISE[rng.randrange(len(_NOISE))] for _ in range(n_noise)]
    lines.insert(rng.randrange(n_noise + 1), f"Keep this code in mind: {code}.")
    return " ".join(lines) + "\n\nWhich code were you asked to keep?", f"The code is {code}."


def training_texts(lm: Any, n: int, seed: int) -> list[str]:
    """Chat-formatted recall dialogues with their answers (the fine-tuning data)."""
    texts = []
    for index in range(n):
        user, assistant = recall_dialogue(index, 10_000 + seed)
        messages = [{"role": "user", "content": user},
                    {"role": "assistant", "content": assistant}]
        texts.append(lm.tokenizer.apply_chat_template(messages, tokenize=False))
    return texts


def finetune(lm: Any, steps: int, seed: int, lr: float = DEFAULT_LR) -> None:
    """``steps`` AdamW steps (one dialogue each) on ``lm.model`` in place, deterministic."""
    import torch

    torch.manual_seed(seed)
    model = lm.model
    model.train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    for text in training_texts(lm, steps, seed):
        ids = lm.tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad(set_to_none=True)
    model.eval()


def ensure_consumer(seed: int = DEFAULT_SEED, steps: int = DEFAULT_STEPS) -> Path:
    """Build the consumer folder once (a few CPU minutes) and return it."""
    from harness.models.whitebox import WhiteBoxLM, ensure_hf_copy

    folder = consumer_dir(seed, steps)
    source = {"base": str(ensure_hf_copy()), "seed": seed, "steps": steps, "lr": DEFAULT_LR,
              "data": "recall-dialogues-v1"}
    marker = folder / _MARKER
    if marker.is_file() and json.loads(marker.read_text()) == source:
        return folder
    import torch

    # built on first use, which may be inside a decode's no-grad/inference context: loading
    # and fine-tuning need autograd, so both leave it explicitly
    with torch.inference_mode(False), torch.enable_grad():
        lm = WhiteBoxLM.load()
        finetune(lm, steps, seed)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        lm.model.save_pretrained(staging)
        lm.tokenizer.save_pretrained(staging)
        (staging / _MARKER).write_text(json.dumps(source))
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
        try:
            staging.rename(folder)
        except OSError:  # another process finished first
            if not (folder / _MARKER).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder
