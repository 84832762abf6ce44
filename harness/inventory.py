"""What the suite ships, as data: the source of ``harness list``."""

from __future__ import annotations

from typing import Any


def _benchmarks() -> list[dict[str, Any]]:
    from harness.tasks import BENCHMARKS

    return [
        {"name": name, "task": f"harness/{name}", "path": _folder(target),
         "status": "available", "summary": _first_doc_line(target)}
        for name, target in BENCHMARKS.items()
    ]


def _folder(target: str) -> str:
    """The benchmark's folder (``benchmarks/probes`` for ``benchmarks.probes.passkey:...``),
    which is what ``inspect eval`` takes; several tasks may share one folder."""
    return "/".join(target.split(":")[0].split(".")[:-1])


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
    import harness.tasks  # noqa: F401  (benchmarks register their reference policies)
    from harness.models import ladder
    from harness.models.scripted import get_policy, list_policies

    rows: list[dict[str, Any]] = []
    for model in ladder.LADDER:
        ready = bool(ladder.status(model)["ready"])
        status = "available" if ready else f"not fetched (harness models fetch {model.name})"
        rows += [
            {"name": f"embedded/{model.name}", "status": status,
             "summary": f"{model.title} through llama.cpp, in process, offline"},
            {"name": f"whitebox/{model.name}", "status": status,
             "summary": "the same weights through transformers: logits, hidden states, KV"},
            {"name": f"openai-api/evalsuite/{model.name}", "status": status,
             "summary": f"harness serve {model.name}: OpenAI-compatible, tool calls on the wire"},
        ]
    for policy in list_policies():
        doc = (get_policy(policy).__doc__ or "").strip().splitlines()
        rows.append({"name": f"scripted/{policy}", "status": "available",
                     "summary": doc[0] if doc else "scripted policy"})
    rows += [
        {"name": "hf/<model>", "status": "gpu or cpu",
         "summary": "Inspect's transformers provider (-M model_path=DIR -M device=cuda:0)"},
        {"name": "vllm/<model>", "status": "gpu",
         "summary": "Inspect's vLLM provider (pip install -e '.[gpu]')"},
    ]
    return rows


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
