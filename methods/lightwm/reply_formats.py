"""How many of an agent study's replies carried no tool call, and why (issue 49, item 2).

    python -m methods.lightwm.reply_formats LOGDIR --out FORMATS.md

Why: on the 1.5B household study every agent sat near the floor, and reading the
transcripts showed many turns lost before the world saw an action: Qwen2.5's chat template
shows the tool-call example as ``{{"name": <function-name>, "arguments": ...}}`` (doubled
braces inside a Jinja string literal, so they reach the prompt doubled), the model copies
the doubled braces, and a doubled object is not JSON, so the turn yields no call. Whether a
verdict is about the method or about this format is a count, so this writes it per agent
level: assistant replies, those with no tool call, and of those the ones holding the
doubled-brace form. Logs are read through :mod:`harness.results`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.results import iter_samples, kept_samples, read_headers

DOUBLED = '{{"name"'
"""The template's example call, copied: an object opened with two braces."""


def _text(content: Any) -> str:
    """A message's content as text (Inspect stores a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


def count_replies(messages: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Assistant replies, those without a tool call, and of those the doubled-brace ones.

    Every assistant message counts: LightWM's transcript also holds its JSON state updates,
    which carry no call by design, so its "no call" share is an upper bound on lost actions.
    """
    out = {"replies": 0, "no_call": 0, "doubled_braces": 0}
    for m in messages:
        if m.get("role") != "assistant":
            continue
        text = _text(m.get("content"))
        out["replies"] += 1
        if not m.get("tool_calls"):
            out["no_call"] += 1
            out["doubled_braces"] += DOUBLED in text
    return out


def by_agent(log_dir: str | Path) -> dict[str, dict[str, int]]:
    """:func:`count_replies` summed over each agent level's samples."""
    keep, _ = kept_samples(log_dir)  # each sample once (resumed runs, copied logs)
    totals: dict[str, dict[str, int]] = {}
    for row in read_headers(log_dir).iter_rows(named=True):
        meta = json.loads(row["eval_metadata"] or "{}")
        agent = str((meta.get("factors") or {}).get("agent", "?"))
        acc = totals.setdefault(agent, {"replies": 0, "no_call": 0, "doubled_braces": 0,
                                        "samples": 0})
        for sample in iter_samples(row["log_file"]):
            sample_key = (row["log_file"], str(sample.get("id")), int(sample.get("epoch") or 1))
            if sample_key not in keep:
                continue
            acc["samples"] += 1
            for key, value in count_replies(sample.get("messages") or []).items():
                acc[key] += value
    return totals


def render(totals: Mapping[str, Mapping[str, int]]) -> str:
    """The markdown table of :func:`by_agent`."""
    lines = ["| agent | episodes | assistant replies | no tool call | of those, doubled braces |",
             "|---|---|---|---|---|"]
    for agent in sorted(totals):
        t = totals[agent]
        share = t["no_call"] / t["replies"] if t["replies"] else float("nan")
        lines.append(f"| {agent} | {t['samples']} | {t['replies']} | {t['no_call']} "
                     f"({share:.0%}) | {t['doubled_braces']} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    """CLI: count the replies of LOGDIR's samples and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log_dir")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    Path(args.out).write_text("# Replies without a tool call, per agent\n\n"
                              f"From `python -m methods.lightwm.reply_formats {args.log_dir}`; "
                              "module doc says why.\n\n" + render(by_agent(args.log_dir)))


if __name__ == "__main__":
    main()
