"""SCD's learned patch predictor: training lowers its loss, the loss bound is enforced (and
binds where plain regression misses it), training is deterministic, the artefact is built
once, and the method's ``predictor=learned`` path patches layers without extra bytes."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from typing import Any

import pytest

HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="needs torch + transformers")


@pytest.fixture(scope="module")
def consumer(tiny: Any) -> Any:
    """The tiny model with perturbed layer-0 weights: a consumer that differs from it."""
    import torch

    model = copy.deepcopy(tiny)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.model.layers[0].parameters():
            p.add_(0.1 * p.std() * torch.randn(p.shape, generator=gen))
    return model.eval()


def _pairs(tiny: Any, consumer: Any, layer: int = 1, n: int = 6) -> tuple[Any, Any]:
    import torch

    from methods.scd.scd_predictor import collect

    gen = torch.Generator().manual_seed(3)
    xs, ys = [], []
    for _ in range(n):
        ids = torch.randint(2, 90, (1, 40), generator=gen)
        x, y = collect(tiny, consumer, ids, [layer], [None, 8])[layer]
        xs.append(x)
        ys.append(y)
    return torch.cat(xs), torch.cat(ys)


def test_training_lowers_the_loss_and_meets_the_bound(tiny: Any, consumer: Any) -> None:
    from methods.scd.scd_predictor import fit, kv_weight, relative_errors, sources_of

    x, y = _pairs(tiny, consumer)
    weight = kv_weight(consumer, 1)
    result = fit(x, y, weight, layer=1, sources=sources_of(1, 4), rank=16, epsilon=0.3)
    e_y, e_kv = relative_errors(result.predictor, x, y, weight)
    assert e_y < 0.5 * result.history["untrained_e_y"][0]  # vs predicting the mean
    assert e_kv <= 0.3 + 1e-6 and result.lam > 0  # the bound held, and it had to be enforced
    assert (e_y, e_kv) == pytest.approx((result.e_y, result.e_kv), rel=1e-4)


def test_the_bound_binds_and_is_reported_when_out_of_reach(tiny: Any, consumer: Any) -> None:
    """Unconstrained, the low-rank fit spends its rank on the normalised input; the bound
    moves it to what the keys/values see (lower e_kv, higher e_y: the price); a bound below
    what the rank allows is not met, and the fit says so."""
    from methods.scd.scd_predictor import fit, kv_weight, sources_of

    x, y = _pairs(tiny, consumer)
    weight = kv_weight(consumer, 1)
    common: dict[str, Any] = {"layer": 1, "sources": sources_of(1, 4), "rank": 16}
    free = fit(x, y, weight, epsilon=0.0, constrained=False, **common)
    tied = fit(x, y, weight, epsilon=0.8 * free.e_kv, **common)
    assert free.lam == 0 and tied.lam > 0
    assert tied.e_kv <= 0.8 * free.e_kv + 1e-6 and tied.e_y > free.e_y
    floor = fit(x, y, weight, epsilon=1e-4, **common)
    assert floor.e_kv > 1e-4 and floor.e_kv < tied.e_kv  # unmet, but as low as it goes
    assert floor.lam == max(floor.history["lam"])


def test_training_is_deterministic(tiny: Any, consumer: Any) -> None:
    import torch

    from methods.scd.scd_predictor import fit, kv_weight

    x, y = _pairs(tiny, consumer, n=2)
    weight = kv_weight(consumer, 1)
    runs = [fit(x, y, weight, layer=1, sources=(0, 1, 2), rank=8, epsilon=e)
            for e in (0.2, 0.2, 0.9)]
    assert torch.equal(runs[0].predictor.up, runs[1].predictor.up)
    assert runs[0].history == runs[1].history
    assert not torch.equal(runs[0].predictor.up, runs[2].predictor.up)


class _Tokenizer:
    """Characters as token ids (inside the tiny model's 96-token vocabulary)."""

    def __call__(self, text: str, return_tensors: str, add_special_tokens: bool) -> Any:
        import torch

        ids = torch.tensor([[2 + ord(c) % 90 for c in text[:60]]])
        return type("Encoded", (), {"input_ids": ids})()


class _LM:
    def __init__(self, model: Any) -> None:
        self.model, self.tokenizer = model, _Tokenizer()

    def chat_prompt(self, messages: list[dict[str, Any]]) -> str:
        return str(messages[0]["content"])


def test_artefact_is_built_once_and_reloads(tiny: Any, consumer: Any, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from methods.scd import scd_predictor

    monkeypatch.setenv("EVALSUITE_CACHE", str(tmp_path))
    options: dict[str, Any] = {"prompts": 4, "holdout": 1, "train_ranks": (None, 8), "rank": 8}
    built = scd_predictor.ensure_predictor(tiny, _LM(consumer), tmp_path, [0, 2], **options)
    path = scd_predictor.artefact_path(scd_predictor.config_for(tmp_path, [0, 2], **options))
    assert path.is_file() and sorted(built) == [0, 2]
    info = scd_predictor.summary(path)
    assert info["cpu_s"]["total"] > 0 and set(info["layers"]) == {0, 2}
    assert all("heldout_e_kv" in row for row in info["layers"].values())

    def no_training(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("retrained a cached predictor")

    monkeypatch.setattr(scd_predictor, "train", no_training)
    again = scd_predictor.ensure_predictor(tiny, _LM(consumer), tmp_path, [0, 2], **options)
    assert torch.equal(again[2].down, built[2].down)
    with pytest.raises(ValueError, match="another configuration"):
        scd_predictor.load_predictor(path, {"other": 1})
    monkeypatch.undo()
    monkeypatch.setenv("EVALSUITE_CACHE", str(tmp_path / "second"))  # a fresh build: same tensors
    fresh = scd_predictor.ensure_predictor(tiny, _LM(consumer), tmp_path, [0, 2], **options)
    assert all(torch.equal(fresh[L].up, built[L].up) for L in (0, 2))


def test_learned_patch_replaces_layers_without_extra_bytes(tiny: Any, consumer: Any) -> None:
    import torch

    from methods.kv.cache import layers_of
    from methods.scd.scd import rebuild
    from methods.scd.scd_predictor import collect, fit, kv_weight, sources_of

    ids = torch.arange(2, 42).view(1, -1)
    with torch.no_grad():
        out = tiny(input_ids=ids, use_cache=True)
    layers = [(k[:, :, :-1], v[:, :, :-1]) for k, v in layers_of(out.past_key_values)]
    x, y = collect(tiny, consumer, ids, [2], [None])[2]
    pred = fit(x, y, kv_weight(consumer, 2), layer=2, sources=sources_of(2, 4),
               rank=16).predictor
    reuse, reuse_bytes = rebuild(consumer, layers, {}, 8)
    learned, learned_bytes = rebuild(consumer, layers, {}, 8, {2: pred})
    assert learned_bytes == reuse_bytes
    for i in (0, 1, 3):
        assert torch.equal(learned[i][0], reuse[i][0]) and torch.equal(learned[i][1], reuse[i][1])
    assert not torch.allclose(learned[2][1], reuse[2][1], atol=1e-4)
    with pytest.raises(ValueError, match="KV codes"):
        rebuild(consumer, layers, {2: torch.zeros(39, 64)}, 8, {2: pred})


def test_predictor_option_reaches_the_method() -> None:
    from types import SimpleNamespace

    from harness.plugins.whitebox_method import resolve_method

    method: Any = resolve_method("scd", predictor="learned", patch=2, predictor_rank=16,
                                 epsilon=0.1)
    method.start(SimpleNamespace(n_layers=30), [])
    assert method.predictor == "learned" and method.hidden_layers == ()
    assert method.predictor_rank == 16 and method.epsilon == 0.1
    residual: Any = resolve_method("scd", patch=2)
    residual.start(SimpleNamespace(n_layers=30), [])
    assert residual.hidden_layers == (0, 15)
    with pytest.raises(ValueError, match="predictor"):
        resolve_method("scd", predictor="oracle")


@pytest.mark.slow
def test_learned_patch_runs_on_smollm2(lm: Any, chat: str) -> None:
    """The real path: SmolLM2 producer, fine-tuned consumer, the cached default predictor."""
    from harness.plugins.whitebox_method import resolve_method

    method = resolve_method("scd", predictor="learned", patch=2, rank=64, max_tokens=4)
    kv = lm.generate_batch([chat], max_new_tokens=4, method=method)[0].data["metadata"]["kv"]
    reuse = resolve_method("scd", patch=0, rank=64, max_tokens=4)
    kv0 = lm.generate_batch([chat], max_new_tokens=4, method=reuse)[0].data["metadata"]["kv"]
    assert kv["learned_patch"] == 1 and kv["kv_bytes"] == kv0["kv_bytes"]
    assert 0.0 <= kv["agreement"] <= 1.0
