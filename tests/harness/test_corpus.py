"""The shipped corpus: a fixed file list, a split by file, a content fingerprint, windows."""

from __future__ import annotations

import pytest

from harness import corpus as corpus_mod
from harness.corpus import (
    HELD_OUT_EVERY,
    STDLIB_FILES,
    held_out_windows,
    load_corpus,
    split_windows,
)


def test_stdlib_list_is_sorted_and_present() -> None:
    assert list(STDLIB_FILES) == sorted(STDLIB_FILES)
    found = load_corpus("stdlib")
    assert found.missing == ()  # every listed module exists on the supported Pythons
    assert [f.path for f in found.files] == list(STDLIB_FILES)


def test_split_is_by_file_and_fixed() -> None:
    found = load_corpus("stdlib+docs")
    for source in ("stdlib", "docs"):
        files = [f for f in found.files if f.source == source]
        held = [i for i, f in enumerate(files) if f.held_out]
        assert held == [i for i in range(len(files)) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1]
    train = {f.path for f in found.files if not f.held_out}
    assert train.isdisjoint({f.path for f in found.files if f.held_out})
    assert all(not p.startswith(".venv") for p in train)
    summary = found.summary()
    assert summary["held_out_files"]
    assert int(str(summary["train_bytes"])) > int(str(summary["held_out_bytes"]))


def test_fingerprint_follows_the_text() -> None:
    a = load_corpus("stdlib")
    assert a.fingerprint == corpus_mod.Corpus(a.name, a.files).fingerprint
    changed = corpus_mod.Corpus(a.name, (corpus_mod.CorpusFile(
        a.files[0].source, a.files[0].path, a.files[0].text + " ", a.files[0].held_out),
        *a.files[1:]))
    assert changed.fingerprint != a.fingerprint
    assert load_corpus("docs").fingerprint != a.fingerprint
    with pytest.raises(ValueError, match="unknown corpus"):
        load_corpus("web")


def test_windows_count_utf8_bytes() -> None:
    text = "aé€😀" * 40  # 1 + 2 + 3 + 4 bytes
    pieces = split_windows(text, 16)
    assert "".join(pieces) == text
    assert all(len(p.encode()) <= 16 for p in pieces)
    assert split_windows("abcdefg", 4) == ["abcd", "efg"]
    windows = held_out_windows(load_corpus("stdlib"), 256, 32)
    assert len(windows) == 32 and len(set(windows)) == 32
    assert all(253 <= len(w.encode()) <= 256 for w in windows)
    assert windows == held_out_windows(load_corpus("stdlib"), 256, 32)
    with pytest.raises(ValueError, match="n must be"):
        held_out_windows(load_corpus("stdlib"), 256, 10**6)


def test_pydoc_is_pythons_language_reference_split_by_topic() -> None:
    from pydoc_data.topics import topics

    found = load_corpus("pydoc")
    assert [f.path for f in found.files] == sorted(f"{name}.txt" for name in topics)
    assert {f.source for f in found.files} == {"pydoc"} and found.missing == ()
    held = [i for i, f in enumerate(found.files) if f.held_out]
    assert held == [i for i in range(len(found.files)) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1]
    both = load_corpus("stdlib+pydoc")
    assert [f.source for f in both.files] == (["stdlib"] * len(STDLIB_FILES)
                                             + ["pydoc"] * len(found.files))
    assert len({load_corpus(n).fingerprint for n in ("stdlib", "pydoc", "stdlib+pydoc")}) == 3
    assert len(held_out_windows(found, 256, 64)) == 64
