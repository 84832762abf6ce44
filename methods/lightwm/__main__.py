"""``python -m methods.lightwm induce|induce-llm --traces LOGDIR --out SCHEMA``.

``induce`` is the deterministic rule-based induction, ``induce-llm`` the paper's (a model
reads the traces and writes the schema; ``--model NAME``).

The same function backs ``harness method lightwm induce``; this entry point exists so the
method can be used without the suite's CLI.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from methods.lightwm.induce import induce
from methods.lightwm.induce_llm import induce_llm, summary


def _model_args(pairs: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--model-arg wants KEY=VALUE, got {pair!r}")
        out[key] = int(value) if value.lstrip("-").isdigit() else value
    return out


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the induction; prints a one-line summary."""
    parser = argparse.ArgumentParser(prog="python -m methods.lightwm")
    commands = parser.add_subparsers(dest="command", required=True)
    cmd = commands.add_parser("induce", help="induce a schema from successful traces")
    cmd.add_argument("--traces", type=Path, required=True, help="log file or folder")
    cmd.add_argument("--out", type=Path, required=True, help="schema file (or folder)")
    cmd.add_argument("--family", default=None, help="task family name")
    cmd.add_argument("--score", default=None, help="score key that defines success")
    cmd.add_argument("--threshold", type=float, default=1.0, help="minimum score value")
    llm = commands.add_parser("induce-llm", help="a model induces the schema from traces")
    llm.add_argument("--traces", type=Path, required=True, help="log file or folder")
    llm.add_argument("--out", type=Path, required=True, help="schema file (or folder)")
    llm.add_argument("--model", required=True, help="Inspect model name")
    llm.add_argument("--family", default=None, help="task family name")
    llm.add_argument("--score", default=None, help="score key that defines success")
    llm.add_argument("--threshold", type=float, default=1.0, help="minimum score value")
    llm.add_argument("--traces-shown", type=int, default=4, help="traces in the prompt")
    llm.add_argument("--max-tokens", type=int, default=700, help="cap of the reply")
    llm.add_argument("--model-arg", action="append", default=[], metavar="KEY=VALUE",
                     help="provider argument (repeatable; integers are parsed)")
    ns = parser.parse_args(argv)
    try:
        if ns.command == "induce-llm":
            made = induce_llm(ns.traces, ns.out, ns.model, ns.family, ns.score, ns.threshold,
                              ns.traces_shown, ns.max_tokens, _model_args(ns.model_arg))
            print(summary(made))
            return 0
        schema = induce(ns.traces, ns.out, ns.family, ns.score, ns.threshold)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    steps = " -> ".join(s.name for s in schema.subtasks)
    print(f"{schema.family}: {schema.traces} traces, {len(schema.fields)} fields, {steps}")
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    raise SystemExit(guarded(main))
