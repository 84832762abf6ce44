"""The SCD consumer: a lightly fine-tuned copy of the embedded model, built once and cached.

SCD needs a producer and a consumer that share an architecture but not weights (the
consumer is a fine-tune of the producer). Here the consumer is SmolLM2 after ``steps``
AdamW steps on procedural passkey dialogues (the suite's own generator, so nothing is
downloaded), on CPU, with a fixed seed: the same (seed, steps, lr) always gives the same
folder. It is saved under the model cache (``<cache>/smollm2-135m-scd-consumer-s<seed>-n<steps>``)
through a staging folder renamed into place, like :func:`harness.models.whitebox.ensure_hf_copy`.
"""

from __future__ import annotations

import json
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


def training_texts(lm: Any, n: int, seed: int) -> list[str]:
    """Chat-formatted passkey dialogues with their answers (the fine-tuning data)."""
    from benchmarks.probes.passkey_gen import make_items

    texts = []
    for item in make_items(n, seed=10_000 + seed, n_filler=8):
        messages = [
            {"role": "user", "content": f"{item.context}\n\n{item.question}"},
            {"role": "assistant", "content": f"The pass key is {item.key}."},
        ]
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
    source = {"base": str(ensure_hf_copy()), "seed": seed, "steps": steps, "lr": DEFAULT_LR}
    marker = folder / _MARKER
    if marker.is_file() and json.loads(marker.read_text()) == source:
        return folder
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
