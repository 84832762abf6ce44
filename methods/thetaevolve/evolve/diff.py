"""SEARCH/REPLACE diffs, the edit format of AlphaEvolve-style program evolution.

A reply holds zero or more blocks::

    <<<<<<< SEARCH
    ITERATIONS = 0
    =======
    ITERATIONS = 500
    >>>>>>> REPLACE

Each block replaces the first occurrence of its SEARCH text. Small models often get
trailing whitespace or the exact marker length wrong, so markers need at least 5 of their
character and a block whose SEARCH text is not found verbatim is retried line by line with
trailing whitespace ignored. A block that still does not match fails the whole diff (a
partial edit would be a program nobody asked for).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BLOCK = re.compile(
    r"^<{5,}\s*SEARCH[^\n]*\n(?P<search>.*?)^={5,}[^\n]*\n(?P<replace>.*?)^>{5,}\s*REPLACE[^\n]*$",
    re.DOTALL | re.MULTILINE,
)


class DiffError(ValueError):
    """A diff that cannot be applied (the message says which block and why)."""


@dataclass(frozen=True)
class DiffBlock:
    """One SEARCH/REPLACE edit."""

    search: str
    replace: str

    def render(self) -> str:
        """The block in the reply format (for logs and prompts)."""
        return f"<<<<<<< SEARCH\n{self.search}=======\n{self.replace}>>>>>>> REPLACE"


def parse_diff(text: str) -> list[DiffBlock]:
    """All SEARCH/REPLACE blocks of a reply, in order (``[]`` when there are none)."""
    return [DiffBlock(m["search"], m["replace"]) for m in _BLOCK.finditer(text)]


def _replace_lines(code: str, block: DiffBlock) -> str | None:
    """Match ``block.search`` line by line ignoring trailing whitespace; None if absent."""
    lines = code.splitlines(keepends=True)
    wanted = [line.rstrip() for line in block.search.splitlines()]
    if not wanted:
        return None
    stripped = [line.rstrip() for line in lines]
    for start in range(len(lines) - len(wanted) + 1):
        if stripped[start : start + len(wanted)] == wanted:
            replacement = block.replace
            if replacement and not replacement.endswith("\n"):
                replacement += "\n"
            return "".join(lines[:start]) + replacement + "".join(lines[start + len(wanted) :])
    return None


def apply_diff(code: str, blocks: list[DiffBlock]) -> str:
    """``code`` with every block applied in order; ``DiffError`` if one does not match."""
    for number, block in enumerate(blocks, start=1):
        if not block.search.strip():
            raise DiffError(f"block {number}: empty SEARCH text")
        if block.search in code:
            code = code.replace(block.search, block.replace, 1)
            continue
        replaced = _replace_lines(code, block)
        if replaced is None:
            first = block.search.strip().splitlines()[0][:60]
            raise DiffError(f"block {number}: SEARCH text not found (starts {first!r})")
        code = replaced
    return code
