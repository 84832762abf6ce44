"""Graded partial credit for the *format* of a response that proposes no usable edit.

Not in the paper. ThetaEvolve's lazy penalties give every response without an applicable
diff the same -0.4, which is fine for an 8B model that usually writes diffs, but a tiny
model (SmolLM2-135M) almost never does: every response in a group then earns -0.4, the
group-normalised advantages are all 0 and test-time RL receives no gradient at all. This
credit ranks such responses by how close they came to a diff, so that a group has mixed
rewards and the policy is pushed towards the edit format first. It is off by default
(``RewardConfig.format_weight = 0``) and, when on, only ever moves a no-diff response
within ``[-0.4, -0.4 + format_weight]``: with the suggested weight 0.1 it never reaches
the -0.3 of an identical child, so a response that really edits always earns more.

Five checks, each worth 1/5 (``format_credit`` is their mean, in ``[0, 1]``):

1. ``fence``: the reply opens a code block (three backticks);
2. ``grounded``: the share of its non-blank code lines that are lines of the parent
   (stripped); copying the program's lines is what a SEARCH text is made of;
3. ``marker``: a SEARCH marker line (``<<<<<<< SEARCH``, 3 or more ``<``);
4. ``block``: a complete SEARCH/=======/REPLACE block parses;
5. ``found``: the share of parsed blocks whose SEARCH text occurs in the parent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from methods.thetaevolve.evolve.diff import DiffError, apply_diff, parse_diff

_FENCE = re.compile(r"```")
_MARKER = re.compile(r"^\s*<{3,}\s*SEARCH\b", re.MULTILINE)
_FENCED = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
CHECKS = ("fence", "grounded", "marker", "block", "found")


@dataclass(frozen=True)
class FormatCredit:
    """The five checks of one response (each in ``[0, 1]``) and their mean."""

    fence: float
    grounded: float
    marker: float
    block: float
    found: float

    @property
    def credit(self) -> float:
        """Mean of the checks, in ``[0, 1]``."""
        return (self.fence + self.grounded + self.marker + self.block + self.found) / len(CHECKS)


def _code_lines(response: str) -> list[str]:
    """Non-blank stripped lines of the reply's code blocks (an unclosed last block counts:
    replies cut by the token cap are the common case), else of the whole reply."""
    blocks = _FENCED.findall(response)
    text = "\n".join(blocks) if blocks else response
    return [line.strip() for line in text.splitlines() if line.strip()]


def _grounded(parent: str, response: str) -> float:
    lines = [line for line in _code_lines(response) if not _is_marker(line)]
    if not lines:
        return 0.0
    known = {line.strip() for line in parent.splitlines() if line.strip()}
    return sum(line in known for line in lines) / len(lines)


def _is_marker(line: str) -> bool:
    return line.startswith(("<<<", "===", ">>>"))


def _found(parent: str, response: str) -> tuple[float, float]:
    blocks = parse_diff(response)
    if not blocks:
        return 0.0, 0.0
    hits = 0
    for block in blocks:
        try:
            apply_diff(parent, [block])
        except DiffError:
            continue
        hits += 1
    return 1.0, hits / len(blocks)


def format_credit(parent: str, response: str) -> FormatCredit:
    """How close ``response`` came to a SEARCH/REPLACE diff of ``parent`` (see module doc)."""
    block, found = _found(parent, response)
    return FormatCredit(
        fence=1.0 if _FENCE.search(response) else 0.0,
        grounded=_grounded(parent, response),
        marker=1.0 if _MARKER.search(response) else 0.0,
        block=block,
        found=found,
    )
