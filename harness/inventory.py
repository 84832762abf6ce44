"""What the suite ships, as data: the source of ``harness list``.

Everything comes from :mod:`harness.registry` (benchmarks, methods, policies) and the model
ladder; a benchmark's headline metric and its direction come from its ``eval.yaml``. An entry
whose optional extra is missing is listed with the ``pip install`` line instead of failing
the listing.
"""

from __future__ import annotations

from typing import Any

from harness.registry import Entry, entries, extra_available

# how `harness list` has always grouped methods: the registry kind -> the listed kind
_METHOD_KINDS: dict[str, str] = {
    "agent": "agent", "whitebox_method": "model", "model": "model", "editor": "editor",
    "recipe": "recipe", "plain_method": "plain",
}


def _target(entry: Entry) -> str:
    if isinstance(entry.obj, str):
        return entry.obj
    obj = getattr(entry.obj, "__wrapped__", entry.obj)
    return f"{entry.module}:{getattr(obj, '__qualname__', entry.name)}"


def _benchmark_facts(name: str) -> dict[str, Any]:
    """Headline metric, direction and paper from the benchmark's eval.yaml (when it has one)."""
    try:
        from harness import evalspec
    except ImportError:  # pragma: no cover - evalspec ships with harness
        return {}
    try:
        task = evalspec.spec_for_task(name)
    except Exception as err:  # a malformed eval.yaml must not hide the rest of the listing
        return {"eval_yaml_error": str(err)}
    if task is None:
        return {}
    metric = task.metric(task.headline)
    return {"headline": task.headline, "lower_is_better": task.lower_is_better(),
            "headline_summary": metric.summary if metric is not None else None,
            "errored": task.policy(), "version": task.version, "paper": task.spec.paper_url}


def _benchmarks() -> list[dict[str, Any]]:
    return [
        {"name": e.name, "task": e.meta["task"], "path": e.meta["path"], "status": e.status,
         "extra": e.extra, "summary": e.summary, **_benchmark_facts(e.name)}
        for e in entries("benchmark")
    ]


def _methods() -> list[dict[str, Any]]:
    rows = []
    for kind in ("agent", "whitebox_method", "model", "editor", "recipe", "plain_method"):
        for e in entries(kind):  # type: ignore[arg-type]
            if kind == "whitebox_method" and e.name == "plain":
                continue  # the decode loop itself, not a method
            rows.append({"name": e.name, "kind": _METHOD_KINDS[kind], "target": _target(e),
                         "status": e.status, "extra": e.extra, "summary": e.summary})
    return rows


def _models() -> list[dict[str, Any]]:
    from harness.models import ladder

    rows: list[dict[str, Any]] = []
    torch = extra_available("cpu")
    for model in ladder.LADDER:
        ready = bool(ladder.status(model)["ready"])
        status = "available" if ready else f"not fetched (harness models fetch {model.name})"
        rows += [
            {"name": f"embedded/{model.name}", "status": status,
             "summary": f"{model.title} through llama.cpp, in process, offline"},
            {"name": f"whitebox/{model.name}",
             "status": status if torch else "needs pip install 'harness[cpu]'",
             "summary": "the same weights through transformers: logits, hidden states, KV"},
            {"name": f"openai-api/evalsuite/{model.name}", "status": status,
             "summary": f"harness serve {model.name}: OpenAI-compatible, tool calls on the wire"},
        ]
    for e in entries("policy"):
        rows.append({"name": f"scripted/{e.name}", "status": e.status,
                     "summary": e.summary or "scripted policy"})
    rows += [
        {"name": "hf/<model>", "status": "gpu or cpu",
         "summary": "Inspect's transformers provider (-M model_path=DIR -M device=cuda:0)"},
        {"name": "vllm/<model>", "status": "gpu",
         "summary": "Inspect's vLLM provider (pip install -e '.[gpu]')"},
    ]
    return rows


def _sandboxes() -> list[dict[str, Any]]:
    import shutil

    bwrap = "available" if shutil.which("bwrap") else "needs apt-get install bubblewrap"
    docker = "available" if shutil.which("docker") else "needs Docker Engine >= 24 + compose v2"
    return [
        {"name": "bwrap", "status": bwrap,
         "summary": "bubblewrap: no network, read-only system, per-sample work dir, limits"},
        {"name": "docker", "status": docker,
         "summary": "Inspect's docker/compose sandbox; offline base image via "
                    "`harness sandbox build-base`"},
        {"name": "local", "status": "available",
         "summary": "Inspect's local sandbox (no isolation; for trusted code only)"},
    ]


def study_parts() -> dict[str, list[dict[str, Any]]]:
    """Interventions and evaluation stacks a study can use as factors (they register when
    the factorial engine's modules are imported). Printed by ``harness list``; kept out of
    ``--json``, whose four sections are a contract."""
    import harness.factorial.interventions  # noqa: F401  (@intervention)
    import harness.factorial.run  # noqa: F401  (@stack_runner: inspect, lm-eval)

    interventions = [{"name": e.name, "status": e.status, "summary": e.summary}
                     for e in entries("intervention")]
    stacks = [{"name": e.name, "status": e.status, "extra": e.extra, "summary": e.summary}
              for e in entries("stack")]
    return {"interventions": interventions, "stacks": stacks}


def inventory() -> dict[str, list[dict[str, Any]]]:
    """Benchmarks, methods, model providers and sandboxes (the ``harness list --json`` shape)."""
    found: dict[str, list[dict[str, Any]]] = {
        "benchmarks": _benchmarks(),
        "methods": _methods(),
        "models": _models(),
        "sandboxes": _sandboxes(),
    }
    from harness.registry import broken_modules

    broken = broken_modules()
    if broken:  # each hides only its own entries; say which and why
        found["broken"] = [{"name": module, "status": "broken", "summary": error}
                           for module, error in sorted(broken.items())]
    return found
