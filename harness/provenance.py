"""Provenance once per run: what a run ran on, recorded in its eval's metadata.

Why: two runs that differ only in the model can still differ in the packages, the sandbox
image, the model file or the data they read, and nothing in an Inspect log says so (the
maintainers agree the problem is real and decline per-sample capture, Inspect issue 4269).
Here it is captured **once per eval**, when the task starts, into the eval's metadata under
``provenance``:

* ``packages``: Python, the platform, and the versions of the packages that decide scores
  (Inspect records its own ``packages`` too; these are the rest);
* ``sandbox``: the task's sandbox type and, for ``bwrap``, its resolved limits; for
  ``docker``, the resolved compose config's hash and each service image's id (digest);
* ``model``: for the suite's offline providers (``embedded/``, ``whitebox/``, ``served/``
  ladder models) the model file's sha256 (the ladder's verified value, so nothing large is
  hashed again), and for a ``model_path`` argument the sha256 of that file or folder
  (cached by path, size and mtime);
* ``dataset``: its name, location, sample count and a hash of its sample ids;
* ``study``: the study file's sha256 when the run is a study cell;
* ``task_files``: the sha256 of the task's source (its file, or its folder's files without
  caches) when the launcher knows it (the board runner does).

The record is taken when a run is launched (:func:`task_record`; the study runner does it
for every cell) and passed as the eval's metadata, which Inspect writes once into the log
header. Not from an Inspect hook: hooks see the eval spec but must not change it.

:func:`compare_provenance` is what ``harness compare`` uses: it also hashes the inputs and
targets both logs hold under the shared ids, so two runs of "the same" benchmark whose data
changed are caught even when neither recorded provenance.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from harness.models import ladder


class _Side(Protocol):
    """One side of a comparison (:class:`harness.compare.Run`): its logs' eval specs."""

    specs: list[dict[str, Any]]

__all__ = ["PACKAGES", "collect", "compare_provenance", "dataset_hash", "entry_provenance",
           "file_sha256", "log_provenance", "record_digest", "run_provenance", "source_sha256",
           "task_record"]

PACKAGES = ("inspect_ai", "evalsuite", "numpy", "polars", "scipy", "torch", "transformers",
            "llama_cpp_python", "vllm", "openai", "playwright", "docker")
"""Distributions whose versions a run records (those not installed are left out)."""

KEY = "provenance"
"""The eval metadata key the record lives under."""
_OFFLINE = ("embedded/", "whitebox/", "served/")


def _version(dist: str) -> str | None:
    if dist == "evalsuite":
        names = importlib.metadata.packages_distributions().get("harness") or ["evalsuite"]
        dist = names[0]
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def packages() -> dict[str, Any]:
    """Python, the platform and the installed versions of :data:`PACKAGES`."""
    found = {name: _version(name) for name in PACKAGES}
    return {"python": platform.python_version(), "platform": platform.platform(),
            **{k: v for k, v in found.items() if v}}


# --------------------------------------------------------------------------- hashing


def _cache_file() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "evalsuite" / "sha256.json"


def file_sha256(path: str | Path) -> str:
    """sha256 of a file, or of a folder (over each file's relative path and sha256, in
    order); cached by resolved path, size and mtime, so a run re-hashes nothing unchanged.
    """
    target = Path(path).resolve()
    files = sorted(p for p in target.rglob("*") if p.is_file()) if target.is_dir() else [target]
    cache_path = _cache_file()
    try:
        cache: dict[str, Any] = json.loads(cache_path.read_text())
    except (OSError, ValueError):
        cache = {}
    changed = False
    digest = hashlib.sha256()
    for file in files:
        stat = file.stat()
        key = str(file)
        hit = cache.get(key)
        if hit and hit.get("size") == stat.st_size and hit.get("mtime") == stat.st_mtime:
            value = str(hit["sha256"])
        else:
            value = ladder.sha256_of(file)
            cache[key] = {"size": stat.st_size, "mtime": stat.st_mtime, "sha256": value}
            changed = True
        if not target.is_dir():
            return value if not changed else _saved(cache_path, cache, value)
        digest.update(f"{file.relative_to(target)}\0{value}\n".encode())
    return _saved(cache_path, cache, digest.hexdigest()) if changed else digest.hexdigest()


def _saved(cache_path: Path, cache: dict[str, Any], value: str) -> str:
    try:
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache, sort_keys=True))
        tmp.replace(cache_path)
    except OSError:  # a read-only home: the hash is still right, only not cached
        pass
    return value


def _model(name: str | None, model_args: Mapping[str, Any]) -> dict[str, Any] | None:
    """The model file's identity for offline models; None for a remote API model."""
    out: dict[str, Any] = {}
    path = model_args.get("model_path")
    if path and Path(str(path)).exists():
        out.update(path=str(path), sha256=file_sha256(str(path)), source="hashed")
    elif name and name.startswith(_OFFLINE):
        rung = ladder.find(name.split("/", 1)[1])
        if rung is not None and rung.sha256:
            out.update(ladder=rung.name, sha256=rung.sha256, source="ladder (verified on load)",
                       packages=rung.packages)
        elif rung is not None:  # shipped as one package: its version pins the bytes
            out.update(ladder=rung.name, packages=rung.packages,
                       source="package version (no file hash recorded)")
    return out or None


def _docker(config: Any) -> dict[str, Any]:
    """The resolved compose config's hash and each service image's id, or why not."""
    out: dict[str, Any] = {"type": "docker"}
    if not isinstance(config, str) or not Path(config).is_file():
        out["config"] = config if isinstance(config, str | None) else str(config)
        return out
    try:
        resolved = subprocess.run(["docker", "compose", "-f", config, "config", "--format",
                                   "json"], capture_output=True, text=True, timeout=30,
                                  check=True).stdout
        data = json.loads(resolved)
        out["config_sha256"] = hashlib.sha256(
            json.dumps(data, sort_keys=True).encode()).hexdigest()
        images = {}
        for service, body in (data.get("services") or {}).items():
            image = body.get("image")
            if image:
                found = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}",
                                        image], capture_output=True, text=True, timeout=30)
                images[service] = {"image": image,
                                   "id": found.stdout.strip() or None}
        out["images"] = images
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        out["unavailable"] = f"{type(exc).__name__}: {exc}"[:300]
    return out


def _sandbox(sandbox: Any) -> dict[str, Any] | None:
    """The task-level sandbox: bwrap's resolved limits, docker's config and images."""
    if sandbox is None:
        return None
    kind = getattr(sandbox, "type", None) or (sandbox.get("type") if isinstance(
        sandbox, Mapping) else None)
    config = getattr(sandbox, "config", None) if not isinstance(sandbox, Mapping) else (
        sandbox.get("config"))
    if kind == "bwrap":
        from harness.sandbox.limits import load_config

        try:
            resolved = load_config(config)
            return {"type": "bwrap", "limits": resolved.limits().model_dump(mode="json")}
        except (OSError, ValueError) as exc:
            return {"type": "bwrap", "unavailable": str(exc)[:300]}
    if kind == "docker":
        return _docker(config)
    return {"type": kind, "config": config if isinstance(config, str | None) else str(config)}


def _dataset(dataset: Any) -> dict[str, Any] | None:
    if dataset is None:
        return None
    get = (dataset.get if isinstance(dataset, Mapping)
           else lambda k, d=None: getattr(dataset, k, d))
    ids = [str(i) for i in get("sample_ids") or []]
    return {"name": get("name"), "location": get("location"), "samples": get("samples"),
            "sample_ids_sha256": hashlib.sha256("\n".join(ids).encode()).hexdigest()
            if ids else None}


def collect(spec: Any) -> dict[str, Any]:
    """The provenance record of one eval, from its eval spec (an Inspect ``EvalSpec`` or
    its JSON form)."""
    get = spec.get if isinstance(spec, Mapping) else (lambda k, d=None: getattr(spec, k, d))
    record: dict[str, Any] = {"packages": packages()}
    model = _model(get("model"), get("model_args") or {})
    if model:
        record["model"] = model
    sandbox = _sandbox(get("sandbox"))
    if sandbox:
        record["sandbox"] = sandbox
    dataset = _dataset(get("dataset"))
    if dataset:
        record["dataset"] = dataset
    return record


def run_provenance(specs: list[dict[str, Any]]) -> dict[str, Any]:
    """What one side's logs recorded: their ``provenance`` metadata, Inspect's packages,
    the task version and revision (the first log's; a side is one run)."""
    if not specs:
        return {}
    spec = specs[0]
    revision = spec.get("revision") or {}
    return {"recorded": (spec.get("metadata") or {}).get(KEY),
            "inspect_packages": spec.get("packages") or {},
            "task_version": spec.get("task_version"),
            "revision": revision.get("commit") if isinstance(revision, Mapping) else None}


def record_digest(record: Mapping[str, Any]) -> str:
    """sha256 of a provenance record as canonical JSON (sorted keys), leaving out its own
    ``sha256`` and the kernel build string (``packages.platform``: the machine's noise, not
    a difference in what ran, as :func:`compare_provenance` treats it)."""
    flat = {k: v for k, v in _flat(record).items()
            if k != "sha256" and not k.endswith("packages.platform")}
    return hashlib.sha256(json.dumps(flat, sort_keys=True, default=str).encode()).hexdigest()


def log_provenance(spec: Mapping[str, Any], texts: pl.DataFrame) -> dict[str, Any]:
    """One log's provenance as exports and boards carry it: what it recorded
    (:func:`run_provenance`), the hash of the (id, input, target) it holds
    (:func:`dataset_hash`, so a changed dataset shows even where nothing was recorded) and
    ``sha256``, the digest of all of it (:func:`record_digest`)."""
    record = run_provenance([dict(spec)])
    record["data_sha256"] = dataset_hash(texts) if texts.height else None
    record["sha256"] = record_digest(record)
    return record


def entry_provenance(records: list[Mapping[str, Any]]) -> dict[str, Any]:
    """A board entry's provenance from its logs' records: one digest over theirs (two
    entries, or two builds, with the same digest ran on the same recorded environment and
    data), how many logs there are and how many recorded a launch-time record."""
    digests = sorted(str(r.get("sha256")) for r in records)
    return {"sha256": hashlib.sha256("\n".join(digests).encode()).hexdigest(),
            "logs": len(records),
            "recorded": sum(r.get("recorded") is not None for r in records)}


# --------------------------------------------------------------------------- comparison


def dataset_hash(texts: pl.DataFrame) -> str:
    """sha256 over (id, input, target) of the items in ``texts``, in id order (epoch 1 or
    the first epoch of each item)."""
    rows = (texts.sort("sample_id", "epoch").unique("sample_id", keep="first")
            .sort("sample_id"))
    digest = hashlib.sha256()
    for sid, inp, tgt in rows.select("sample_id", "input", "target").iter_rows():
        digest.update(json.dumps([sid, inp, tgt]).encode())
    return digest.hexdigest()


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def compare_provenance(a: _Side, b: _Side, shared: pl.DataFrame, texts_a: pl.DataFrame,
                       texts_b: pl.DataFrame) -> tuple[list[str], dict[str, Any]]:
    """Warnings (one line each) where A's and B's recorded provenance differ, and both
    sides' provenance with the hash of the data both hold under the shared ids.

    The model is what a comparison usually varies, so ``model.*`` differences are listed
    but not warned about; everything else is a warning.
    """
    pa, pb = run_provenance(a.specs), run_provenance(b.specs)
    on = ["sample_id", "epoch"]
    ha = dataset_hash(texts_a.join(shared, on=on, how="semi"))
    hb = dataset_hash(texts_b.join(shared, on=on, how="semi"))
    pa["paired_data_sha256"], pb["paired_data_sha256"] = ha, hb
    warnings: list[str] = []
    if ha != hb:
        both = texts_a.join(texts_b, on=on, suffix="_b")
        differ = both.filter((pl.col("input") != pl.col("input_b"))
                             | (pl.col("target") != pl.col("target_b")))
        warnings.append(f"provenance: the data differ: {differ['sample_id'].n_unique()} shared "
                        "id(s) have a different input or target in A and B")
    for field in ("task_version", "revision"):
        if pa.get(field) != pb.get(field):
            warnings.append(f"provenance: {field} differs: A {pa.get(field)}, "
                            f"B {pb.get(field)}")
    fa, fb = _flat(pa.get("inspect_packages") or {}), _flat(pb.get("inspect_packages") or {})
    for key in sorted(set(fa) | set(fb)):
        if fa.get(key) != fb.get(key):
            warnings.append(f"provenance: package {key} differs: A {fa.get(key)}, "
                            f"B {fb.get(key)}")
    ra, rb = pa.get("recorded"), pb.get("recorded")
    if (ra is None) != (rb is None):
        warnings.append("provenance: recorded by only one side "
                        f"({'A' if ra is not None else 'B'}); the other's is unknown")
    elif ra is not None and rb is not None:
        fa, fb = _flat(ra), _flat(rb)
        for key in sorted(set(fa) | set(fb)):
            if fa.get(key) == fb.get(key) or key.startswith("model."):
                continue
            if key == "packages.platform":
                continue  # the kernel build: noise, not a difference in what ran
            warnings.append(f"provenance: {key} differs: A {fa.get(key)}, B {fb.get(key)}")
    return warnings, {"a": pa, "b": pb}


# --------------------------------------------------------------------------- recording


def source_sha256(path: str | Path) -> str:
    """sha256 of a task's source: a file, or a folder's files (relative path and content,
    in order) without caches and hidden files, so compiling or a checkout's ``.git`` leaves
    it unchanged while any edit of what the task runs changes it."""
    target = Path(path)
    if target.is_file():
        return hashlib.sha256(target.read_bytes()).hexdigest()
    digest = hashlib.sha256()
    for file in sorted(target.rglob("*")):
        parts = file.relative_to(target).parts
        if not file.is_file() or any(p == "__pycache__" or p.startswith(".") for p in parts):
            continue
        digest.update(f"{'/'.join(parts)}\0{hashlib.sha256(file.read_bytes()).hexdigest()}\n"
                      .encode())
    return digest.hexdigest()


def task_record(task: Any, model: str | None, model_args: Mapping[str, Any] | None = None,
                study_file: str | Path | None = None,
                task_file: str | Path | None = None) -> dict[str, Any]:
    """The record for one run of an Inspect ``Task`` (taken when the run is launched, so
    it is written once, into the eval's metadata: ``{"provenance": task_record(...)}``).

    Why at launch and not from a hook: Inspect hands hooks the eval spec but forbids
    changing it (it is the object written to the log header).
    """
    dataset = getattr(task, "dataset", None)
    spec: dict[str, Any] = {
        "model": model, "model_args": dict(model_args or {}),
        "sandbox": getattr(task, "sandbox", None),
        "dataset": None if dataset is None else {
            "name": getattr(dataset, "name", None), "location": getattr(dataset, "location", None),
            "samples": len(dataset), "sample_ids": [s.id for s in dataset]},
    }
    record = collect(spec)
    if study_file is not None and Path(study_file).is_file():
        record["study"] = {"file": str(study_file), "sha256": file_sha256(study_file)}
    if task_file is not None and Path(task_file).exists():
        record["task_files"] = {"path": Path(task_file).as_posix(),
                                "sha256": source_sha256(task_file)}
    return record
