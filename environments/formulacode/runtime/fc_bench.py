"""asv-style benchmark runner that runs inside a task container (stdlib only).

Why not asv itself: the offline base image has no asv, and the grader needs only three things
from it — discovery of parameterised ``time_*`` benchmarks nested in modules and classes,
repeated timing samples, and the benchmarks' return values for snapshot checks. This module
does those with asv's conventions (``benchmark_dir`` from ``asv.conf.json``, ``params`` /
``param_names``, ``setup``/``teardown``, ``NotImplementedError`` in setup = skip, workload
names ``module.Class.method(p1, p2)``), so a real repository's asv suite is readable too.

    python fc_bench.py list TREE
    python fc_bench.py time TREE OUT.json [--repeat K] [--timer process|wall]
    python fc_bench.py snapshot TREE OUT.pkl

Every RNG (``random``, legacy numpy) is reseeded to 42 before each setup and call, as in the
spec's snapshot tool, so workloads are identical across trees.
"""

from __future__ import annotations

import gc
import importlib
import itertools
import json
import math
import os
import pickle
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

PREFIX = "time_"
MIN_SAMPLE_S = 0.004  # a timing sample repeats the call until it lasts at least this long
MAX_NUMBER = 10_000


def _reseed() -> None:
    random.seed(42)
    try:
        import numpy as np

        np.random.seed(42)
    except ImportError:  # pragma: no cover - numpy is in every pack image
        pass


def benchmark_dir(tree: Path) -> Path:
    """The benchmark folder named by the tree's asv config (asv's default: ``benchmarks``)."""
    for conf in sorted(tree.glob("asv*.json")):
        try:
            text = "\n".join(
                line for line in conf.read_text().splitlines() if not line.strip().startswith("//")
            )
            return tree / json.loads(text).get("benchmark_dir", "benchmarks")
        except (OSError, ValueError):
            continue
    return tree / "benchmarks"


def _modules(bench: Path) -> Iterator[str]:
    for path in sorted(bench.rglob("*.py")):
        rel = path.relative_to(bench.parent).with_suffix("")
        if path.name.startswith("_") and path.name != "__init__.py":
            continue
        if path.name == "__init__.py":
            continue
        yield ".".join(rel.parts)


def _param_grid(obj: Any) -> list[tuple[Any, ...]]:
    params = getattr(obj, "params", None)
    if params is None:
        return [()]
    if not (isinstance(params, list | tuple) and params and isinstance(params[0], list | tuple)):
        params = [params]
    return [tuple(p) for p in itertools.product(*params)]


class Workload:
    """One (benchmark, parameter combination): knows how to set itself up and call itself."""

    def __init__(self, name: str, owner: type | None, func_name: str, func: Any, params: tuple):
        self.name, self.owner, self.func_name, self.func, self.params = (
            name, owner, func_name, func, params,
        )

    def prepare(self) -> Callable[[], Any]:
        """Run setup and return a zero-argument callable of the benchmark (raises
        NotImplementedError to mean skip, as in asv)."""
        _reseed()
        if self.owner is not None:
            instance = self.owner()
            setup = getattr(instance, "setup", None)
            if setup is not None:
                setup(*self.params)
            method = getattr(instance, self.func_name)
            self._teardown = getattr(instance, "teardown", None)
            return lambda: method(*self.params)
        setup = getattr(self.func, "setup", None)
        if setup is not None:
            setup(*self.params)
        self._teardown = getattr(self.func, "teardown", None)
        return lambda: self.func(*self.params)

    def teardown(self) -> None:
        teardown = getattr(self, "_teardown", None)
        if teardown is not None:
            teardown(*self.params)


def discover(tree: Path) -> list[Workload]:
    """All workloads of the tree's benchmark suite, in a stable order."""
    bench = benchmark_dir(tree)
    sys.path[:0] = [str(tree), str(bench.parent)]
    found: list[Workload] = []
    for mod_name in _modules(bench):
        module = importlib.import_module(mod_name)
        for attr in sorted(vars(module)):
            obj = getattr(module, attr)
            if isinstance(obj, type) and getattr(obj, "__module__", None) == mod_name:
                for meth in sorted(vars(obj)):
                    if meth.startswith(PREFIX) and callable(getattr(obj, meth)):
                        for params in _param_grid(obj):
                            found.append(_workload(mod_name, obj, meth, params))
            elif attr.startswith(PREFIX) and callable(obj):
                for params in _param_grid(obj):
                    found.append(_workload(mod_name, None, attr, params, obj))
    return found


def _workload(mod: str, owner: type | None, func: str, params: tuple, obj: Any = None) -> Workload:
    mod = mod.split(".", 1)[1] if "." in mod else mod  # asv names start below benchmark_dir
    base = f"{mod}.{owner.__name__}.{func}" if owner is not None else f"{mod}.{func}"
    name = f"{base}({', '.join(repr(p) for p in params)})" if params else base
    return Workload(name, owner, func, obj, params)


def time_all(tree: Path, repeat: int, timer_name: str) -> dict[str, Any]:
    """``repeat`` samples (seconds per call) of every workload; errors are reported per
    workload instead of stopping the run."""
    timer = time.process_time if timer_name == "process" else time.perf_counter
    samples: dict[str, list[float]] = {}
    errors: dict[str, str] = {}
    for wl in discover(tree):
        try:
            call = wl.prepare()
        except NotImplementedError:
            continue
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            errors[wl.name] = f"setup: {type(exc).__name__}: {exc}"
            continue
        try:
            gc.collect()
            gc.disable()
            t0 = timer()
            call()  # warm-up, also the calibration probe
            first = max(timer() - t0, 1e-7)
            number = min(MAX_NUMBER, max(1, math.ceil(MIN_SAMPLE_S / first)))
            values = []
            for _ in range(repeat):
                t0 = timer()
                for _ in range(number):
                    call()
                values.append((timer() - t0) / number)
            samples[wl.name] = values
        except Exception as exc:  # noqa: BLE001
            errors[wl.name] = f"call: {type(exc).__name__}: {exc}"
        finally:
            gc.enable()
            try:
                wl.teardown()
            except Exception:  # noqa: BLE001
                pass
    return {"samples": samples, "errors": errors}


def _portable(value: Any) -> Any:
    """The value if it pickles, else a placeholder the comparer skips."""
    if callable(value) or hasattr(value, "__next__"):
        return {"__fc_placeholder__": type(value).__name__}
    try:
        pickle.dumps(value)
        return value
    except Exception:  # noqa: BLE001
        return {"__fc_placeholder__": type(value).__name__}


def snapshot_all(tree: Path) -> dict[str, Any]:
    """Each workload's return value (one call after setup), or its error / skip."""
    out: dict[str, Any] = {}
    for wl in discover(tree):
        try:
            call = wl.prepare()
            _reseed()
            out[wl.name] = {"status": "ok", "value": _portable(call())}
        except NotImplementedError:
            out[wl.name] = {"status": "skip"}
        except Exception as exc:  # noqa: BLE001
            out[wl.name] = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
    return out


def main(argv: list[str]) -> int:
    cmd, tree = argv[0], Path(argv[1]).resolve()
    os.chdir(tree)
    if cmd == "list":
        print(json.dumps([w.name for w in discover(tree)]))
        return 0
    out = Path(argv[2])
    opts = dict(zip(argv[3::2], argv[4::2], strict=False))
    if cmd == "time":
        result = time_all(tree, int(opts.get("--repeat", 3)), opts.get("--timer", "process"))
        out.write_text(json.dumps(result))
        return 0
    if cmd == "snapshot":
        out.write_bytes(pickle.dumps(snapshot_all(tree)))
        return 0
    print(f"unknown command {cmd}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
