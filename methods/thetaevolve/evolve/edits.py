"""What one model response proposes: a SEARCH/REPLACE diff, a full rewrite, or nothing.

ThetaEvolve asks for SEARCH/REPLACE diffs, but small models often answer with a whole
program (or just the code between the EVOLVE-BLOCK markers) in a code block. With the
full-rewrite fallback such a response is accepted *when it holds no diff at all*: a
response with diff blocks is judged as a diff only, so a diff that fails to apply is
never rescued by the code around it (it would hide how often the model's diffs are
broken, which is what :func:`edit_shares` measures).

Kinds (``Edit.kind``):

* ``diff``: at least one SEARCH/REPLACE block, and every block applied;
* ``diff_failed``: blocks were found but one does not match the parent;
* ``rewrite``: no blocks; a python code block (or the whole reply) that parses, taken as
  the whole program when it carries the EVOLVE markers or a ``__main__`` guard, else as
  the new code between the parent's EVOLVE markers (the parent keeps its fixed parts);
* ``none``: nothing usable (no blocks, and no code that parses, or the fallback is off).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from methods.thetaevolve.evolve.diff import DiffError, apply_diff, parse_diff

EDIT_KINDS = ("diff", "diff_failed", "rewrite", "none")
START = "EVOLVE-BLOCK-START"
END = "EVOLVE-BLOCK-END"
_CODE_BLOCK = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL)
_MIN_REWRITE_LINES = 2
"""A one-line snippet is an example, not a program: rewrites need at least two lines."""


@dataclass(frozen=True)
class Edit:
    """One response, classified; ``child`` is the program it proposes (None if none)."""

    kind: str
    child: str | None
    diff_text: str
    reason: str


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _candidate_code(response: str) -> str | None:
    """The longest python code block that parses, else the whole reply if it parses."""
    blocks = sorted(_CODE_BLOCK.findall(response), key=len, reverse=True)
    for block in blocks:
        if len(block.strip().splitlines()) >= _MIN_REWRITE_LINES and _parses(block):
            return block
    text = response.strip()
    if not blocks and len(text.splitlines()) >= _MIN_REWRITE_LINES and _parses(text):
        return text + "\n"
    return None


def _splice(parent: str, body: str) -> str | None:
    """``parent`` with the code between its EVOLVE markers replaced by ``body``."""
    lines = parent.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if START in line]
    ends = [i for i, line in enumerate(lines) if END in line]
    if len(starts) != 1 or len(ends) != 1 or ends[0] <= starts[0]:
        return None
    body_lines = [line for line in body.splitlines(keepends=True)
                  if START not in line and END not in line]
    text = "".join(body_lines)
    if text and not text.endswith("\n"):
        text += "\n"
    return "".join(lines[: starts[0] + 1]) + text + "".join(lines[ends[0]:])


def rewrite_child(parent: str, response: str) -> str | None:
    """The program a no-diff response proposes as a full rewrite (None if it proposes none)."""
    code = _candidate_code(response)
    if code is None:
        return None
    whole = (START in code and END in code) or "__main__" in code
    if whole or START not in parent:
        return code
    spliced = _splice(parent, code)
    return spliced if spliced is not None and _parses(spliced) else None


def classify(parent: str, response: str, full_rewrite: bool = True) -> Edit:
    """Classify ``response`` against ``parent`` and build the child it proposes."""
    blocks = parse_diff(response)
    diff_text = "\n".join(b.render() for b in blocks)
    if blocks:
        try:
            return Edit("diff", apply_diff(parent, blocks), diff_text, "diff applied")
        except DiffError as err:
            return Edit("diff_failed", None, diff_text, f"diff does not apply: {err}")
    if full_rewrite:
        child = rewrite_child(parent, response)
        if child is not None:
            return Edit("rewrite", child, "", "full rewrite (no SEARCH/REPLACE block)")
        return Edit("none", None, "", "no SEARCH/REPLACE block and no program that parses")
    return Edit("none", None, "", "no SEARCH/REPLACE block")


def edit_shares(kinds: Iterable[str]) -> dict[str, float | int]:
    """Counts and shares of the edit kinds of a run's responses.

    ``diff_share`` is the share of responses that were valid SEARCH/REPLACE diffs (found
    and applied); ``diff_found_share`` counts blocks found whether or not they applied;
    ``rewrite_share`` the full rewrites accepted by the fallback. All are 0 for no responses.
    """
    counts = Counter(kinds)
    unknown = set(counts) - set(EDIT_KINDS)
    if unknown:
        raise ValueError(f"unknown edit kinds {sorted(unknown)}; known: {', '.join(EDIT_KINDS)}")
    total = sum(counts.values())

    def share(n: int) -> float:
        return n / total if total else 0.0

    return {
        "responses": total,
        **{f"n_{kind}": counts[kind] for kind in EDIT_KINDS},
        "diff_share": share(counts["diff"]),
        "diff_found_share": share(counts["diff"] + counts["diff_failed"]),
        "rewrite_share": share(counts["rewrite"]),
    }
