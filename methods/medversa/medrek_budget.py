"""MedREK's training-budget curve, method side: train once and score the prompt encoder with
oracle injection at checkpoints along the run.

Why here and not in the benchmark: the scoring needs the encoder's internals (soft prompts
prepended to the frozen model's input), which belong to the method; the benchmark reaches
this through the registered editor (``MedREKEditor.budget_curve``), supplies the records
and turns the per-record scores into intervals with :mod:`harness.stats`.

Oracle injection: each record's own edit becomes its T soft tokens and is prepended, with no
retrieval, so the numbers isolate the prompt encoder. Per record (spec §2, teacher forced):
efficacy on the edit prompt and generality on its paraphrase are the shares of target
positions whose argmax is the target token; locality is the share of the locality answer's
positions whose argmax with the soft prompt equals the unedited argmax (what a false
retrieval would cost).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
import torch

from methods.medversa.medrek_train import (
    PromptModules,
    TrainConfig,
    TrainRecord,
    TrainReport,
    _hidden_at,
    compute_platform,
    forced,
    sentence,
    store_trained,
    train_modules,
    weights_digest,
)

SCORE_BATCH = 8
Scores = list[dict[str, float]]


def _share(predicted: Sequence[int], reference: Sequence[int]) -> float:
    if not reference:
        raise ValueError("empty target: nothing to score")
    return sum(int(p == r) for p, r in zip(predicted, reference, strict=True)) / len(reference)


def injection_scores(model: Any, tokenizer: Any, modules: PromptModules, encoder: Any,
                     records: Sequence[TrainRecord], bf16: bool = True) -> Scores:
    """Per record: efficacy, generality and locality (shares in [0, 1]) with the record's
    own soft prompt in front, batched ``SCORE_BATCH`` records at a time."""
    head = model.get_output_embeddings()
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else \
        tokenizer.eos_token_id
    feats = torch.from_numpy(np.asarray(encoder.encode([sentence(r[0], r[3]) for r in records]),
                                        dtype=np.float32))
    out: Scores = []
    for start in range(0, len(records), SCORE_BATCH):
        chunk = records[start:start + SCORE_BATCH]
        groups = [[forced(tokenizer, r[k], r[3]) for r in chunk] for k in (0, 1)]
        groups.append([forced(tokenizer, r[2], r[4]) for r in chunk])
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            soft = modules(feats[start:start + len(chunk)])
            rows = [f[0] for g in groups for f in g]
            masks = [f[2] for g in groups for f in g]
            post = head(_hidden_at(model, soft.repeat(3, 1, 1), rows, pad, masks)).argmax(-1)
            pre = head(_hidden_at(model, None, [f[0] for f in groups[2]], pad,
                                  [f[2] for f in groups[2]])).argmax(-1)
        post_parts = torch.split(post, [sum(f[2]) for g in groups for f in g])
        pre_parts = torch.split(pre, [sum(f[2]) for f in groups[2]])
        n = len(chunk)
        for i in range(n):
            scores = {}
            for k, metric in enumerate(("efficacy", "generality")):
                _, labels, mask = groups[k][i]
                scores[metric] = _share(post_parts[k * n + i].tolist(),
                                        [y for y, m in zip(labels, mask, strict=True) if m])
            scores["locality"] = _share(post_parts[2 * n + i].tolist(), pre_parts[i].tolist())
            out.append(scores)
    return out


def budget_curve(model: Any, tokenizer: Any, train: Sequence[TrainRecord],
                 probes: Mapping[str, Sequence[TrainRecord]], checkpoints: Sequence[int],
                 settings: Mapping[str, Any], on_point: Callable[[int, dict[str, Scores]],
                                                                 None],
                 *, encoder: Any = None, store: bool = True, log_every: int = 0
                 ) -> dict[str, Any]:
    """Train MedREK's encoder on ``train`` with ``settings`` (:class:`TrainConfig` fields)
    and call ``on_point(steps_done, {probe set: per-record scores})`` at every checkpoint.

    With ``store``, each checkpoint's encoder is also written to the training cache under
    the key a run of that many steps has (nothing random is drawn between steps, so the two
    are identical), so the editor at that budget loads it. Returns the run's report."""
    if encoder is None:
        from methods.editors.retrieval import default_encoder

        encoder = default_encoder()
    config = TrainConfig(**settings)
    wanted = {c for c in checkpoints if 0 <= c <= config.steps}
    t_cpu, t_wall = time.process_time(), time.perf_counter()

    def point(done: int, modules: PromptModules, losses: list[dict[str, float]]) -> None:
        if done not in wanted:
            return
        if store and done > 0:
            partial = TrainReport("", done, len(train), time.process_time() - t_cpu,
                                  time.perf_counter() - t_wall, list(losses),
                                  weights_digest=weights_digest(modules),
                                  platform=compute_platform())
            store_trained(modules, partial, model, train, TrainConfig(**{**asdict(config),
                                                                         "steps": done}))
        on_point(done, {name: injection_scores(model, tokenizer, modules, encoder, records,
                                               config.bf16)
                        for name, records in probes.items()})

    _, report = train_modules(model, tokenizer, train, encoder, config, log_every,
                              on_step=point)
    return {**asdict(report), "config": asdict(config)}
