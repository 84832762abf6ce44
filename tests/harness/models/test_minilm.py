"""The bundled MiniLM encoder loads offline and gives sentence vectors that mean something."""

from __future__ import annotations

import numpy as np
import pytest

from harness.models.minilm import EMBEDDING_DIM, MiniLM


@pytest.fixture(scope="module")
def encoder() -> MiniLM:
    return MiniLM.shared()


def test_encode_shapes_and_unit_norm(encoder: MiniLM) -> None:
    vecs = encoder.encode(["aspirin inhibits platelets", "the cat sat on the mat"])
    assert vecs.shape == (2, EMBEDDING_DIM)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    assert encoder.encode([]).shape == (0, EMBEDDING_DIM)


def test_paraphrases_are_closer_than_unrelated_text(encoder: MiniLM) -> None:
    a, b, c = encoder.encode([
        "What is the capital city of France?",
        "Which city is France's capital?",
        "Metformin is a first-line drug for type 2 diabetes.",
    ])
    assert float(a @ b) > float(a @ c) + 0.3


def test_batching_does_not_change_vectors(encoder: MiniLM) -> None:
    texts = [f"sentence number {i} about heart disease" for i in range(7)]
    whole = encoder.encode(texts, batch_size=64)
    split = encoder.encode(texts, batch_size=3)
    np.testing.assert_allclose(whole, split, atol=1e-5)


def test_token_vectors(encoder: MiniLM) -> None:
    toks = encoder.encode_tokens("chest pain radiating to the left arm")
    assert toks.ndim == 2 and toks.shape[1] == EMBEDDING_DIM and toks.shape[0] >= 5
    with pytest.raises(TypeError):
        encoder.encode("not a list")  # type: ignore[arg-type]
