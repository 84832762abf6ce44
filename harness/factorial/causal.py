"""What a study's design lets the report claim causally.

A factorial study sets every factor by design, so each factor's *total* effect on the score
is identified by randomisation — unless the design confounds it. This module turns the
study's optional causal graph (``a -> b`` edges) and its design into plain statements:

- a manipulated factor with a path to the score: total effect identified;
- in a two-level fraction, an effect aliased with another effect of the same or lower order
  is identified only if its aliases are assumed negligible (they are named);
- a path through a variable that is not a factor (``prompt_style -> parsing -> score``): the
  total effect is identified, the direct and mediated parts are not (the mediator was not
  manipulated);
- an edge between two factors contradicts the design (both are set by it) and is ignored;
- a factor with no path to the score in the graph: its estimated effect tests that claim.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from harness.factorial.design import Design

SCORE = "score"


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> list[list[str]]:
    """Every simple path from ``start`` to ``goal``."""
    paths: list[list[str]] = []
    stack: list[list[str]] = [[start]]
    while stack:
        path = stack.pop()
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt in path:
                continue
            if nxt == goal:
                paths.append([*path, nxt])
            else:
                stack.append([*path, nxt])
    return paths


def _aliases_by_name(design: Design) -> dict[str, list[str]]:
    """Main-effect aliases with factor names instead of letters (fractions only)."""
    if not design.aliases:
        return {}
    by_letter = {letter: name for name, letter in design.letters.items()}

    def name_of(word: str) -> str:
        return ":".join(by_letter.get(ch, ch) for ch in word)

    return {by_letter[k]: [name_of(w) for w in words]
            for k, words in design.aliases.items() if k in by_letter}


def identification(factors: list[str], edges: list[tuple[str, str]],
                   design: Design | None = None) -> list[dict[str, Any]]:
    """One statement per factor: identified or not, why, and the paths to the score."""
    factor_set = set(factors)
    graph: dict[str, set[str]] = defaultdict(set)
    ignored = [(a, b) for a, b in edges if a in factor_set and b in factor_set]
    for a, b in edges:
        if (a, b) not in ignored:
            graph[a].add(b)
    aliases = _aliases_by_name(design) if design is not None else {}
    out: list[dict[str, Any]] = []
    for name in factors:
        paths = _reaches(graph, name, SCORE) if edges else [[name, SCORE]]
        mediators = sorted({n for p in paths for n in p[1:-1]})
        confounded = [a for a in aliases.get(name, []) if a.count(":") <= 1]
        if not paths:
            status, reason = "no path", ("the causal graph gives no path to the score; its "
                                         "estimated effect tests that claim")
        elif confounded:
            status = "aliased"
            reason = ("set by design, but aliased with " + ", ".join(confounded)
                      + ": identified only if those are negligible")
        else:
            status = "identified"
            reason = "set by design (randomised), so its total effect is identified"
            if mediators:
                reason += ("; the split into direct and mediated parts (via "
                           + ", ".join(mediators) + ") is not, as those were not manipulated")
        out.append({"factor": name, "status": status, "reason": reason,
                    "paths": ["->".join(p) for p in paths], "mediators": mediators})
    for a, b in ignored:
        out.append({"factor": f"{a}->{b}", "status": "ignored",
                    "reason": "both are factors set by the design, so neither can cause the "
                              "other in this study", "paths": [], "mediators": []})
    return out
