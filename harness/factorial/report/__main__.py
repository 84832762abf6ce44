"""``python -m harness.factorial.report LOGDIR [OUT]``: write a study's report."""

import shlex
import sys

from harness.factorial.report.build import build_report

if __name__ == "__main__":  # pragma: no cover - convenience: python -m harness.factorial.report
    for kind, path in build_report(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "report",
                                   command=shlex.join(sys.argv)).items():
        print(f"{kind}: {path}")
