"""Generated sections of a Markdown file, between marker comments.

Why markers: the README is mostly prose a person writes; only the tables that restate data
(eval.yaml, report.json) are generated. A section is::

    <!-- generated: NAME (harness readme --write; edit the data, not this table) -->
    ...
    <!-- /generated: NAME -->

and :func:`replace_sections` swaps each section's body for a fresh one, leaving the rest of
the file byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from harness.errors import UserInputError

_SECTION = re.compile(
    r"(?P<open><!-- generated: (?P<name>[\w-]+)[^>]*-->\n)(?P<body>.*?)"
    r"(?P<close><!-- /generated: (?P=name) -->)",
    re.DOTALL)


def open_marker(name: str) -> str:
    """The opening comment of section ``name``."""
    return f"<!-- generated: {name} (harness readme --write; edit the data, not this table) -->"


def sections(text: str) -> dict[str, str]:
    """Section name -> its current body."""
    return {m.group("name"): m.group("body") for m in _SECTION.finditer(text)}


def replace_sections(text: str, bodies: Mapping[str, str], source: str = "README.md") -> str:
    """``text`` with each named section's body replaced; a name in ``bodies`` that has no
    section in ``text`` is an error naming the file (nothing is silently left out)."""
    missing = sorted(set(bodies) - set(sections(text)))
    if missing:
        raise UserInputError(f"{source}: no generated section {', '.join(missing)} "
                             f"(add {open_marker(missing[0])} ... <!-- /generated: "
                             f"{missing[0]} -->)")

    def swap(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in bodies:
            return match.group(0)
        body = bodies[name] if bodies[name].endswith("\n") else bodies[name] + "\n"
        return match.group("open") + body + match.group("close")

    return _SECTION.sub(swap, text)


def stale_sections(text: str, bodies: Mapping[str, str]) -> list[str]:
    """Names of the sections whose body differs from the fresh one."""
    current = sections(text)
    return sorted(name for name, body in bodies.items()
                  if current.get(name) != (body if body.endswith("\n") else body + "\n"))
