"""MedREK's training-budget curve, benchmark side: the checkpoint curve, its CIs and files."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks.medversa.medrek_budget import markdown, parse, run


def test_the_curve_has_every_checkpoint_and_training_raises_fit(
        confident_llama: Any, char_tokenizer: Any, hash_encoder: Any,
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import torch

    import harness.models.whitebox as whitebox
    import methods.editors.retrieval as retrieval
    from benchmarks.medversa.medversa import make_split, train_records
    from methods.editors.medrek_train import TrainConfig, train_modules, trained_modules

    monkeypatch.setenv("EVALSUITE_CACHE", str(tmp_path / "cache"))
    lm = SimpleNamespace(model=confident_llama, tokenizer=char_tokenizer)
    monkeypatch.setattr(whitebox, "shared_lm", lambda path, device, dtype: (lm, None))
    monkeypatch.setattr(retrieval, "default_encoder", lambda: hash_encoder)
    args = parse(["--data", "sample", "--model", "tiny", "--model-path", "unused",
                  "--dtype", "float32", "--steps", "40", "--checkpoints", "0,10,40",
                  "--batch-size", "4", "--lr", "0.01", "--n", "6", "--n-fit", "6",
                  "--log-every", "0", "--no-bf16", "--out", str(tmp_path / "out")])
    result = run(args)
    assert [p["steps"] for p in result["curve"]] == [0, 10, 40]
    assert result["complete"] and len(result["losses"]) == 40
    fit0, fit1 = (result["curve"][i]["fit"]["efficacy"]["mean"] for i in (0, -1))
    assert fit1 > fit0  # the prompt encoder learns the records it trains on
    point = result["curve"][-1]["held_out"]["generality"]
    assert point["lo"] <= point["mean"] <= point["hi"] and point["n"] == 6
    written = json.loads((tmp_path / "out" / "medrek_budget.json").read_text())
    assert written["split"]["n_fit"] == 6 and set(written["per_record"]) == {"0", "10", "40"}
    table = (tmp_path / "out" / "medrek_budget.md").read_text()
    assert table == markdown(written) and "| 40 |" in table
    # each checkpoint's encoder is cached as a run of that many steps: identical weights
    records = train_records(make_split("sample").train)
    config = TrainConfig(steps=10, batch_size=4, lr=0.01, seed=1, bf16=False)
    cached, report = trained_modules(confident_llama, char_tokenizer, records, hash_encoder, config)
    assert report.cached and report.steps == 10 and len(report.losses) == 10
    fresh, _ = train_modules(confident_llama, char_tokenizer, records, hash_encoder, config)
    for (name, a), (_, b) in zip(cached.state_dict().items(), fresh.state_dict().items(),
                                 strict=True):
        torch.testing.assert_close(a, b, msg=name)
    assert len(list((tmp_path / "cache" / "medrek").glob("*.pt"))) == 2  # steps 10 and 40
