"""Synthetic Inspect logs (``.json`` format) with known per-sample scores.

Each log is the subset of Inspect's JSON log that ``harness.results`` reads: the eval spec,
the plan, the status and one record per sample with its score, usage, time and error.
Tests compute the expected numbers by hand from the same scores.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Score = float | None  # None: the sample errored


def write_log(folder: Path, name: str, *, model: str, scores: Sequence[Score],
              task: str = "synth/bench", solver: str = "generate", epochs: int = 1,
              task_args: dict[str, Any] | None = None, scorer: str = "acc",
              tokens: tuple[int, int] = (100, 10), time: float = 1.0,
              ids: Sequence[str] | None = None, created: str = "2026-01-02T03:04:05+00:00",
              metadata: dict[str, Any] | None = None, inputs: Sequence[str] | None = None,
              ) -> Path:
    """One log; ``scores`` has ``len(ids) * epochs`` values, epoch-major (all items of
    epoch 1, then epoch 2, ...); None marks an errored sample. ``metadata`` is the eval's
    metadata; ``inputs`` (one per id) the samples' inputs."""
    ids = list(ids) if ids is not None else [f"item-{i:03d}" for i in
                                             range(len(scores) // epochs)]
    assert len(ids) * epochs == len(scores)
    samples = []
    for k, value in enumerate(scores):
        sample: dict[str, Any] = {
            "id": ids[k % len(ids)], "epoch": k // len(ids) + 1,
            "scores": {} if value is None else {scorer: {"value": value}},
            "model_usage": {model: {"input_tokens": tokens[0], "output_tokens": tokens[1],
                                    "total_tokens": sum(tokens)}},
            "total_time": time, "working_time": time / 2,
            "error": {"message": "boom", "traceback": ""} if value is None else None,
        }
        if inputs is not None:
            sample.update(input=inputs[k % len(ids)], target="t")
        samples.append(sample)
    log = {
        "version": 2, "status": "success",
        "eval": {"eval_id": f"{name}-id", "run_id": "run", "created": created, "task": task,
                 "task_version": 0, "task_args": task_args or {}, "model": model,
                 "model_args": {}, "scorers": [{"name": scorer}],
                 "config": {"epochs": epochs},
                 "packages": {"inspect_ai": "0.3.285"}, "metadata": metadata},
        "plan": {"steps": [{"solver": solver, "params": {}}], "config": {}},
        "samples": samples,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(log))
    return path
