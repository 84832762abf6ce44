"""The shipped offline text corpora: Python's standard-library source, Python's language
reference, and this suite's docs.

Recipes train on it and the ``bpb`` probe scores held-out perplexity on it, so both read the
same files through this module (harness is the one package that methods and benchmarks may
both import). Nothing is downloaded: the text is files already on disk.

* ``stdlib``: the fixed, sorted list :data:`STDLIB_FILES` of pure-Python modules under
  ``sysconfig.get_paths()["stdlib"]`` (a module missing from this Python is skipped and the
  fingerprint says so). The text differs between Python versions, so the fingerprint does.
* ``pydoc``: the topics of Python's own language reference as shipped in the standard
  library (``pydoc_data.topics``, the text ``help("assert")`` prints): 79 topics, about
  465 KB of English prose with code snippets on Python 3.11, one "file" per topic (sorted
  by name). Fixed for a given Python like ``stdlib``, so it is the general-text corpus for
  products and probes whose numbers must reproduce; ``stdlib+pydoc`` is code plus prose.
* ``docs``: every ``*.md`` file of this checkout (sorted by path; hidden folders, ``.venv``
  and ``node_modules`` left out). Docs change as the repo changes; each change changes the
  fingerprint, so cached products keyed on it rebuild and bpb scores move. The default is
  therefore ``stdlib`` alone, fixed across commits for a given Python, so products and bpb
  scores stay comparable; ``corpus="stdlib+docs"`` adds the docs on request.

Split by file, independent of any seed (every seed and every model is scored on the same
held-out text): in each source's sorted list, file number ``i`` is held out when
``i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1`` (one file in five). Files are read as UTF-8
with universal newlines; a file is joined to the next with one ``"\\n"``.

    corpus = load_corpus("stdlib+docs")
    corpus.train, corpus.held_out          # two strings
    corpus.fingerprint                     # sha256 over (source, path, text) of every file
    held_out_windows(corpus, 256, 64)      # 64 fixed windows of <= 256 UTF-8 bytes
"""

from __future__ import annotations

import hashlib
import sysconfig
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

__all__ = [
    "CORPORA",
    "DEFAULT_CORPUS",
    "HELD_OUT_EVERY",
    "STDLIB_FILES",
    "Corpus",
    "CorpusFile",
    "held_out_windows",
    "load_corpus",
    "split_windows",
]

STDLIB_FILES: tuple[str, ...] = tuple(sorted(
    f"{name}.py" for name in (
        "abc", "argparse", "ast", "base64", "bisect", "calendar", "cmd", "code", "codecs",
        "colorsys", "configparser", "contextlib", "copy", "csv", "dataclasses", "difflib",
        "enum", "filecmp", "fnmatch", "fractions", "functools", "getopt", "gettext", "glob",
        "graphlib", "heapq", "hmac", "html/parser", "inspect", "ipaddress", "json/decoder",
        "json/encoder", "keyword", "linecache", "numbers", "operator", "optparse", "pprint",
        "queue", "random", "reprlib", "sched", "secrets", "shlex", "statistics", "string",
        "textwrap", "timeit", "tokenize", "traceback", "typing", "uuid", "weakref",
    )
))
"""Standard-library files of the ``stdlib`` source, relative to the stdlib folder (sorted)."""

CORPORA = ("stdlib", "pydoc", "docs", "stdlib+pydoc", "stdlib+docs")
"""Corpus names: a source, or sources joined by ``+`` (each split on its own, then
concatenated in this order: stdlib, pydoc, docs)."""
DEFAULT_CORPUS = "stdlib"
HELD_OUT_EVERY = 5
_SKIP_DIRS = {".venv", "node_modules", "__pycache__"}
REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class CorpusFile:
    """One file of the corpus: its source (``stdlib``/``docs``), path, text and split."""

    source: str
    path: str
    text: str
    held_out: bool


@dataclass(frozen=True)
class Corpus:
    """The files of one corpus, split train/held-out by file, with a content fingerprint."""

    name: str
    files: tuple[CorpusFile, ...]
    missing: tuple[str, ...] = field(default_factory=tuple)

    @property
    def train(self) -> str:
        """The training text: the train files joined by newlines."""
        return "\n".join(f.text for f in self.files if not f.held_out)

    @property
    def held_out(self) -> str:
        """The held-out text: the held-out files joined by newlines."""
        return "\n".join(f.text for f in self.files if f.held_out)

    @property
    def fingerprint(self) -> str:
        """sha256 over every file's source, path, split and text (and the missing list)."""
        digest = hashlib.sha256(f"corpus:{self.name}\n".encode())
        for f in self.files:
            digest.update(f"{f.source}\0{f.path}\0{int(f.held_out)}\0".encode())
            digest.update(f.text.encode("utf-8"))
            digest.update(b"\0")
        for name in self.missing:
            digest.update(f"missing\0{name}\0".encode())
        return digest.hexdigest()

    def summary(self) -> dict[str, object]:
        """Counts for logs and product.json: files, bytes per split, fingerprint."""
        return {
            "corpus": self.name,
            "fingerprint": self.fingerprint,
            "train_files": sum(not f.held_out for f in self.files),
            "held_out_files": sum(f.held_out for f in self.files),
            "train_bytes": len(self.train.encode("utf-8")),
            "held_out_bytes": len(self.held_out.encode("utf-8")),
            "missing": list(self.missing),
        }


def _read(path: Path) -> str:
    with path.open(encoding="utf-8", errors="replace", newline=None) as handle:
        return handle.read()


def _split(source: str, found: list[tuple[str, str]]) -> list[CorpusFile]:
    return [
        CorpusFile(source, rel, text, i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1)
        for i, (rel, text) in enumerate(sorted(found))
    ]


def _stdlib() -> tuple[list[CorpusFile], list[str]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    found, missing = [], []
    for rel in STDLIB_FILES:
        path = root / rel
        if path.is_file():
            found.append((rel, _read(path)))
        else:
            missing.append(f"stdlib/{rel}")
    return _split("stdlib", found), missing


def _pydoc() -> list[CorpusFile]:
    from pydoc_data.topics import topics

    return _split("pydoc", [(f"{name}.txt", text.replace("\r\n", "\n"))
                            for name, text in topics.items()])


def _docs(root: Path = REPO_ROOT) -> list[CorpusFile]:
    found = []
    for path in root.rglob("*.md"):
        parts = path.relative_to(root).parts
        if any(p.startswith(".") or p in _SKIP_DIRS for p in parts[:-1]):
            continue
        found.append((path.relative_to(root).as_posix(), _read(path)))
    return _split("docs", found)


@lru_cache(maxsize=4)
def load_corpus(name: str = DEFAULT_CORPUS) -> Corpus:
    """The corpus ``name``, one of :data:`CORPORA` (read once per process)."""
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}: one of {', '.join(CORPORA)}")
    sources = name.split("+")
    files: list[CorpusFile] = []
    missing: list[str] = []
    if "stdlib" in sources:
        stdlib, missing = _stdlib()
        files += stdlib
    if "pydoc" in sources:
        files += _pydoc()
    if "docs" in sources:
        files += _docs()
    if not files:
        raise ValueError(f"corpus {name!r} found no files")
    return Corpus(name, tuple(files), tuple(missing))


def split_windows(text: str, window_bytes: int) -> list[str]:
    """Consecutive pieces of ``text`` of at most ``window_bytes`` UTF-8 bytes each, cut only
    between characters (so a piece's byte count is ``len(piece.encode())``); the last piece
    may be shorter."""
    if window_bytes < 4:
        raise ValueError("window_bytes must be >= 4 (one UTF-8 character)")
    if text.isascii():  # one byte per character
        return [text[i:i + window_bytes] for i in range(0, len(text), window_bytes)]
    pieces: list[str] = []
    start, size = 0, 0
    for i, ch in enumerate(text):
        width = len(ch.encode("utf-8"))
        if size + width > window_bytes:
            pieces.append(text[start:i])
            start, size = i, 0
        size += width
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def held_out_windows(corpus: Corpus, window_bytes: int, n: int) -> list[str]:
    """``n`` fixed windows of the held-out text: the full-size windows, evenly spaced over
    the whole held-out split (the same windows for every model and seed)."""
    windows = [w for w in split_windows(corpus.held_out, window_bytes)
               if len(w.encode("utf-8")) > window_bytes - 4]
    if n < 1 or n > len(windows):
        raise ValueError(f"n must be in 1..{len(windows)} for window_bytes={window_bytes}")
    step = len(windows) / n
    return [windows[int(i * step)] for i in range(n)]
