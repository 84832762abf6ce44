"""Run one plain method in a fresh process (the bwrap sandbox's side of a method task).

``python3 -m harness.method_worker IN.pkl OUT.json``: ``IN.pkl`` holds ``target``
(``module:function``), ``inputs``, ``config`` and ``seed``; ``OUT.json`` gets the outputs
(arrays as lists), the wall time and the process's peak resident set size in MiB. It
imports only the method's module (no Inspect), so it starts in a fraction of a second.
"""

from __future__ import annotations

import importlib
import json
import pickle
import resource
import sys
import time
from pathlib import Path
from typing import Any


def _plain(value: Any) -> Any:
    """JSON-ready: numpy arrays and scalars become lists and floats."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python3 -m harness.method_worker IN.pkl OUT.json", file=sys.stderr)
        return 2
    job = pickle.loads(Path(args[0]).read_bytes())
    module, _, name = str(job["target"]).partition(":")
    fn: Any = importlib.import_module(module)
    for part in name.split("."):
        fn = getattr(fn, part)
    start = time.perf_counter()
    outputs = fn(job["inputs"], job["config"], int(job["seed"]))
    wall = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    Path(args[1]).write_text(json.dumps({"outputs": _plain(dict(outputs)), "wall_s": wall,
                                         "peak_mb": peak_kib / 1024}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
