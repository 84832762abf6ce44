"""What the suite ships, as data: the source of ``harness list``."""

from __future__ import annotations

from typing import Any


def _benchmarks() -> list[dict[str, Any]]:
    from harness.tasks import BENCHMARKS

    return [
        {"name": name, "task": f"harness/{name}", "path": f"benchmarks/{name}",
         "status": "available", "summary": _first_doc_line(target)}
        for name, target in BENCHMARKS.items()
    ]


def _first_doc_line(target: str) -> str:
    import importlib

    module = importlib.import_module(target.split(":")[0])
    doc = (module.__doc__ or "").strip().splitlines()
    return doc[0] if doc else ""


def _methods() -> list[dict[str, Any]]:
    from methods.registry import METHODS

    return [{"name": m.name, "kind": m.kind, "target": m.target, "status": m.status,
             "summary": m.summary} for m in METHODS]


def _models() -> list[dict[str, Any]]:
    from harness.models.catalog import model_catalog

    return model_catalog()


def _sandboxes() -> list[dict[str, Any]]:
    return [
        {"name": "bwrap", "status": "available",
         "summary": "bubblewrap: no network, read-only system, per-sample work dir, limits"},
        {"name": "docker", "status": "available",
         "summary": "Inspect's docker/compose sandbox; offline base image via "
                    "`harness sandbox build-base`"},
        {"name": "local", "status": "available",
         "summary": "Inspect's local sandbox (no isolation; for trusted code only)"},
    ]


def inventory() -> dict[str, list[dict[str, Any]]]:
    """Benchmarks, methods, model providers and sandboxes (the ``harness list --json`` shape)."""
    return {
        "benchmarks": _benchmarks(),
        "methods": _methods(),
        "models": _models(),
        "sandboxes": _sandboxes(),
    }
