"""The prompt that asks for a child: task, parent program, its score, a few better programs.

Kept short on purpose: the suite's CPU model has a 2,048-token context, and a program
plus instructions must fit with room for the reply.
"""

from __future__ import annotations

from methods.thetaevolve.evolve.database import Program

SYSTEM = (
    "You improve Python programs by editing them. Reply with one or more edits in exactly "
    "this format, copying the SEARCH lines exactly from the program:\n"
    "<<<<<<< SEARCH\n"
    "lines to find\n"
    "=======\n"
    "lines to put instead\n"
    ">>>>>>> REPLACE\n"
    "Change only code between EVOLVE-BLOCK-START and EVOLVE-BLOCK-END."
)


def child_prompt(task: str, parent: Program, inspirations: list[Program]) -> str:
    """User message asking for an edit of ``parent`` that raises its score."""
    others = "".join(
        f"\nAnother program scored {p.score:.6g}:\n```python\n{p.code}\n```\n"
        for p in inspirations
    )
    return (
        f"{task}\n\nCurrent program (score {parent.score:.6g}, higher is better):\n"
        f"```python\n{parent.code}\n```\n{others}\n"
        "Propose SEARCH/REPLACE edits that make the score higher."
    )
