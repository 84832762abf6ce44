"""Tokens/s of the white-box decode loop: plain vs ESamp (beta 0.1), batch 1 and 8.

Marked ``perf`` and ``slow``: pytest-benchmark times one greedy decode of 16 tokens per row;
compare ``plain`` with ``esamp`` rows at the same batch for ESamp's overhead::

    .venv/bin/pytest tests/perf/test_esamp_perf.py -m perf --benchmark-enable
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

pytestmark = [
    pytest.mark.perf,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                       reason="needs transformers"),
]

NEW_TOKENS = 16


@pytest.fixture(scope="module")
def lm() -> Any:
    import torch

    torch.set_num_threads(2)
    from harness.models.whitebox import shared_lm

    return shared_lm()[0]


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("method", ["plain", "esamp"])
def test_decode_tokens_per_second(benchmark: Any, lm: Any, method: str, batch: int) -> None:
    from harness.plugins.whitebox_method import resolve_method

    prompts = [lm.chat_prompt([{"role": "user", "content": f"What is {i} + {2 * i + 3}?"}])
               for i in range(batch)]
    options = {"beta": 0.1} if method == "esamp" else {}

    def run() -> int:
        outs = lm.generate_batch(prompts, max_new_tokens=NEW_TOKENS, temperature=0.8,
                                 top_p=0.95, seeds=list(range(batch)),
                                 method=resolve_method(method, **options))
        return sum(len(o.tokens) for o in outs)

    tokens = benchmark.pedantic(run, rounds=1, iterations=1)
    assert 0 < tokens <= NEW_TOKENS * batch
    benchmark.extra_info["tokens"] = tokens
