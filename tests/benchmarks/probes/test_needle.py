"""Needle probe: the task's samples end with the cue and hold their key once; the scorer
wants the key at the start of the completion and counts digits in place."""

from __future__ import annotations

import asyncio

from inspect_ai.model import ModelName, ModelOutput
from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState

from benchmarks.probes.needle import needle, needle_recall
from environments.probes.needle import CUE


def test_task_builds_samples() -> None:
    samples = list(needle(n=6, seed=2).dataset)
    assert len(samples) == 6 and len({str(s.input) for s in samples}) == 6
    for sample in samples:
        prompt, key = str(sample.input), str(sample.target)
        assert prompt.endswith("\n" + CUE) and prompt.count(f"{CUE}{key}.") == 1


def _state(text: str) -> TaskState:
    return TaskState(model=ModelName("mockllm/m"), sample_id=1, epoch=1, input="q",
                     messages=[], output=ModelOutput.from_content("m", text))


def test_needle_recall_scores_the_key_in_place() -> None:
    score = needle_recall()
    cases = {"4821. The": (1.0, 1.0), " 4820": (0.0, 0.75), "1482": (0.0, 0.0), "": (0.0, 0.0)}
    for text, (exact, digits) in cases.items():
        result = asyncio.run(score(_state(text), Target("4821")))
        assert result is not None and result.value == {"accuracy": exact, "digits": digits}
