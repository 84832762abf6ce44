"""Every benchmark's task, registered again under the ``harness/`` namespace.

Inspect names a registered object after the top-level package its function lives in, so a
task defined in ``benchmarks/arithmetic/arithmetic.py`` is ``benchmarks/arithmetic``. The
installed suite promises ``inspect eval harness/<name>``; this module re-registers each
benchmark's task function (same signature, same docstring, so ``-T`` args and ``inspect
list`` keep working) with ``harness`` as its package. Adding a benchmark is one line in
``BENCHMARKS``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

from inspect_ai import task

# name -> "module:function" of the benchmark's @task (imported when registered).
BENCHMARKS: dict[str, str] = {
    "arithmetic": "benchmarks.arithmetic.arithmetic:arithmetic",
    "causalgame": "benchmarks.causalgame.causalgame:causalgame_all",
    "worldtravel": "benchmarks.worldtravel.worldtravel:worldtravel",
    "medversa": "benchmarks.medversa.medversa:medversa",
    "formulacode": "benchmarks.formulacode.formulacode:formulacode",
    "passkey": "benchmarks.probes.passkey:passkey",
    "esamp_arith": "benchmarks.probes.esamp_arith:esamp_arith",
    "mvr_workload": "benchmarks.probes.mvr_workload:mvr_workload",
    "worldtravel_webscape": "benchmarks.worldtravel_webscape.worldtravel_webscape:worldtravel_webscape",  # noqa: E501
    "circle_packing": "benchmarks.open_problems.open_problems:circle_packing",
    "first_autocorrelation": "benchmarks.open_problems.open_problems:first_autocorrelation",
}

# modules that register scripted reference policies (``scripted/<policy>``) for benchmarks
POLICY_MODULES: tuple[str, ...] = (
    "benchmarks.arithmetic.policies",
    "benchmarks.causalgame.policies",
    "benchmarks.worldtravel.policies",
    "benchmarks.medversa.policies",
    "benchmarks.worldtravel_webscape.policies",
    "benchmarks.open_problems.policies",
    "methods.agents.lightwm_policies",
)


def _reexport(name: str, target: str) -> Callable[..., Any]:
    module_name, func_name = target.split(":")
    original = getattr(importlib.import_module(module_name), func_name)
    # the @task wrapper keeps the user's function as __wrapped__; re-register that
    inner = getattr(original, "__wrapped__", original)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return inner(*args, **kwargs)

    wrapper.__module__ = __name__  # registry namespace comes from the defining module
    return task(name=name)(wrapper)


for _name, _target in BENCHMARKS.items():
    globals()[_name] = _reexport(_name, _target)

for _module in POLICY_MODULES:
    importlib.import_module(_module)
