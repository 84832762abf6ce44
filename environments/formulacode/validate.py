"""``python -m environments.formulacode.validate``: the old name of the pack's validation run.

The run itself is ``python -m benchmarks.formulacode.validate`` (same arguments, same JSON
and exit code). It moved to the benchmark layer with the metrics' statistics: p-values and
bootstrap CIs come from ``harness.stats``, and the import contracts (pyproject's
``[tool.importlinter]``) forbid environments to import harness or benchmarks. So this
module imports neither: it replaces its own process with the new command's, arguments
unchanged, and the exit code is that command's.
"""

from __future__ import annotations

import os
import sys

TARGET = "benchmarks.formulacode.validate"


def main(argv: list[str] | None = None) -> int:
    """Exec ``python -m benchmarks.formulacode.validate ARGV`` (does not return)."""
    args = sys.argv[1:] if argv is None else argv
    os.execv(sys.executable, [sys.executable, "-m", TARGET, *args])
    return 127  # pragma: no cover - execv only returns by raising


if __name__ == "__main__":
    raise SystemExit(main())
