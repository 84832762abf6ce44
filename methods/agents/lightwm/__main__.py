"""``python -m methods.agents.lightwm induce --traces LOGDIR --out SCHEMA``.

The same function backs ``harness method lightwm induce``; this entry point exists so the
method can be used without the suite's CLI.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from methods.agents.lightwm.induce import induce


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the induction; prints a one-line summary."""
    parser = argparse.ArgumentParser(prog="python -m methods.agents.lightwm")
    commands = parser.add_subparsers(dest="command", required=True)
    cmd = commands.add_parser("induce", help="induce a schema from successful traces")
    cmd.add_argument("--traces", type=Path, required=True, help="log file or folder")
    cmd.add_argument("--out", type=Path, required=True, help="schema file (or folder)")
    cmd.add_argument("--family", default=None, help="task family name")
    cmd.add_argument("--score", default=None, help="score key that defines success")
    cmd.add_argument("--threshold", type=float, default=1.0, help="minimum score value")
    ns = parser.parse_args(argv)
    try:
        schema = induce(ns.traces, ns.out, ns.family, ns.score, ns.threshold)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    steps = " -> ".join(s.name for s in schema.subtasks)
    print(f"{schema.family}: {schema.traces} traces, {len(schema.fields)} fields, {steps}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
