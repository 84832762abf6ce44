"""The base install (no ``web``, ``cpu``, ``gpu``, ``lmeval``, ``distributed`` extra) lists the
suite, runs its checks and the benchmarks that need no extra; an entry that needs one says
which ``pip install`` to type.

The base install is simulated in a fresh interpreter: a ``sys.meta_path`` finder makes every
import of an optional package fail with ``ModuleNotFoundError`` (as it does when the package
is absent), and ``importlib.util.find_spec`` answers ``None`` for them (what it answers on a
real base install, where no finder knows them). ``.ci/base-install.sh`` checks the same on a
real fresh venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
OPTIONAL = ("playwright", "torch", "transformers", "accelerate", "vllm", "lm_eval", "ray")

SIMULATE_BASE_INSTALL = textwrap.dedent(
    f"""
    import importlib.abc
    import importlib.util
    import sys

    BLOCKED = frozenset({OPTIONAL!r})

    def _blocked(name):
        return name.partition(".")[0] in BLOCKED

    class BaseInstall(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if _blocked(fullname):
                raise ModuleNotFoundError(
                    f"No module named {{fullname!r}} (simulated base install)", name=fullname)
            return None

    sys.meta_path.insert(0, BaseInstall())
    for _name in [m for m in sys.modules if _blocked(m)]:
        del sys.modules[_name]
    _find_spec = importlib.util.find_spec

    def find_spec(name, package=None):
        return None if _blocked(name) else _find_spec(name, package)

    importlib.util.find_spec = find_spec
    """
)

PROBE = textwrap.dedent(
    """
    import asyncio
    import json
    import logging
    import sys
    import tempfile

    warnings = []

    class Keep(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                warnings.append(record.getMessage())

    logging.getLogger().addHandler(Keep())
    out = {"warnings": warnings}

    import harness._registry  # noqa: F401  (what the inspect_ai entry point imports)
    from typer.testing import CliRunner

    from harness import registry
    from harness.cli import app

    runner = CliRunner()
    listed = runner.invoke(app, ["list", "--json"])
    out["list_exit"] = listed.exit_code
    out["list_exception"] = repr(listed.exception) if listed.exception else None
    out["list"] = json.loads(listed.stdout) if listed.exit_code == 0 else listed.output
    doctor = runner.invoke(app, ["doctor", "--json"])
    out["doctor_exit"] = doctor.exit_code
    out["doctor_exception"] = repr(doctor.exception) if doctor.exception else None

    # a benchmark that needs no extra: built from its registry entry and run
    from inspect_ai import eval as inspect_eval

    task = registry.get("benchmark", "arithmetic").obj(n=3)
    out["arithmetic_samples"] = len(task.dataset)
    with tempfile.TemporaryDirectory() as logs:
        log = inspect_eval(task, model="scripted/arith-oracle", log_dir=logs, display="none")[0]
    out["arithmetic_status"] = log.status
    out["arithmetic_accuracy"] = log.results.scores[0].metrics["accuracy"].value

    # an entry that needs the web extra: listed with it, and using it names the install line
    web = registry.get("benchmark", "worldtravel_webscape")
    out["webscape_extra"] = web.extra
    out["webscape_status"] = web.status
    try:
        web.obj(vision=False)
        out["webscape_build"] = "built"
    except registry.MissingExtraError as err:
        out["webscape_build"] = str(err)
    from harness.browser import BrowserSession

    try:
        asyncio.run(BrowserSession("http://127.0.0.1:9").start())
        out["browser_start"] = "started"
    except registry.MissingExtraError as err:
        out["browser_start"] = str(err)
    out["loaded_optional"] = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
    print("PROBE " + json.dumps(out))
    """
)


def _probe() -> dict[str, Any]:
    env = {**os.environ, "INSPECT_DISPLAY": "none", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", SIMULATE_BASE_INSTALL + PROBE],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=600, check=False,
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("PROBE ")]
    assert done.returncode == 0 and lines, (done.stdout + done.stderr)[-4000:]
    result: dict[str, Any] = json.loads(lines[-1][len("PROBE "):])
    return result


@pytest.mark.slow
def test_the_base_install_lists_checks_runs_and_names_the_missing_extra() -> None:
    out = _probe()
    assert out["list_exit"] == 0, (out["list_exception"], out["list"])
    benchmarks = {row["name"]: row for row in out["list"]["benchmarks"]}
    assert {"arithmetic", "causalgame", "worldtravel", "worldtravel_webscape"} <= set(benchmarks)
    assert benchmarks["arithmetic"]["status"] == "available"
    assert benchmarks["causalgame"]["status"] == "available"
    assert benchmarks["worldtravel_webscape"]["extra"] == "web"
    assert "harness[web]" in benchmarks["worldtravel_webscape"]["status"]
    assert not [w for w in out["warnings"] if "failed to load" in w], out["warnings"]
    assert out["doctor_exit"] == 0, out["doctor_exception"]
    assert out["arithmetic_samples"] == 3
    assert out["arithmetic_status"] == "success"
    assert out["arithmetic_accuracy"] == 1.0
    assert out["webscape_extra"] == "web"
    assert "harness[web]" in out["webscape_status"]
    assert "pip install 'harness[web]'" in out["webscape_build"], out["webscape_build"]
    assert "pip install 'harness[web]'" in out["browser_start"], out["browser_start"]
    assert out["loaded_optional"] == []
