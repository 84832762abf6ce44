"""Command-line verifier: ``python -m environments.open_problems.verify PROBLEM FILE [--json]``.

Prints ``{"valid": bool, "score": x, "reason": str}`` with ``--json`` (a one-line summary
otherwise). A missing, unreadable or malformed file is a verdict too (valid false, with
the reason), so scripts can always parse the output. Exit status: 0 valid, 1 invalid,
2 usage error (unknown problem).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from environments.open_problems.problems import PROBLEMS, get_problem
from environments.open_problems.verdict import Verdict


def verify_file(problem: str, path: Path) -> Verdict:
    """Read ``path`` as JSON and verify it; reading/parsing failures become rejections."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return Verdict.reject(f"cannot read {path}: {err}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return Verdict.reject(f"malformed: not JSON ({err})")
    return get_problem(problem).verify(data)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m environments.open_problems.verify")
    parser.add_argument("problem", choices=sorted(PROBLEMS))
    parser.add_argument("file", type=Path)
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    args = parser.parse_args(argv)
    verdict = verify_file(args.problem, args.file)
    if args.json:
        print(json.dumps(verdict.to_json()))
    else:
        status = f"valid, score {verdict.score!r}" if verdict.valid else "INVALID"
        print(f"{args.problem}: {status}: {verdict.reason}")
    return 0 if verdict.valid else 1


if __name__ == "__main__":
    sys.exit(main())
