"""Fact inventory checks: every checker-relevant fact must be reachable from the home page.

Why a separate proof: a page that exists but is linked from nowhere is invisible to a
browsing agent, and an unreachable fact would make a scenario unsolvable for reasons
that have nothing to do with the agent. Reachability is a breadth-first walk over the
``href`` and ``src`` attributes of the rendered HTML, starting at ``/index.html``.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from typing import Any

from environments.worldtravel.model import World
from environments.worldtravel.site.render import PRESENTATIONS, Fact, SiteBuild

_REF = re.compile(rb"""(?:href|src)=["']([^"'#?]+)""")

# the fields of each record kind the checker reads (see environments/worldtravel/checker.py)
CHECKER_FIELDS: dict[str, tuple[str, ...]] = {
    "hotel": (
        "rating",
        "min_nights",
        "check_in",
        "check_out",
        "pets",
        "smoking",
        "cancellation",
        "prices",
    ),
    "restaurant": ("rating", "price", "hours", "cuisine", "meal_minutes", "seatings", "closures"),
    "attraction": (
        "rating",
        "price",
        "hours",
        "category",
        "visit_minutes",
        "timed_entry",
        "booking_lead_days",
        "closures",
    ),
    "link": ("route", "mode", "depart", "arrive", "prices", "weekdays"),
    "city": ("station", "transit_fare", "travel"),
}


def links_of(html: bytes) -> list[str]:
    """Root-absolute targets of the page's links, stylesheets and images."""
    return [m.decode() for m in _REF.findall(html) if m.startswith(b"/")]


def reachable(build: SiteBuild, start: str = "/index.html") -> set[str]:
    """Every file reachable from ``start`` by following links (BFS)."""
    seen = {start}
    queue = deque([start])
    while queue:
        path = queue.popleft()
        data = build.files.get(path)
        if data is None or not path.endswith(".html"):
            continue
        for target in links_of(data):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return seen


def expected_facts(world: World) -> set[str]:
    """The fact keys the checker may need: one per record and checker field."""
    keys: set[str] = set()
    for h in world.hotels:
        for f in CHECKER_FIELDS["hotel"]:
            keys |= {f"{h.id}.prices.{r}" for r in h.prices} if f == "prices" else {f"{h.id}.{f}"}
    for r in world.restaurants:
        keys |= {f"{r.id}.{f}" for f in CHECKER_FIELDS["restaurant"]}
    for a in world.attractions:
        keys |= {f"{a.id}.{f}" for f in CHECKER_FIELDS["attraction"]}
    for x in world.links:
        keys |= {f"{x.id}.{f}" for f in CHECKER_FIELDS["link"]}
    for c in world.cities:
        keys |= {f"{c.id}.station", f"{c.id}.transit_fare"}
        keys |= {f"{c.id}.travel.{n}" for n in c.nodes}
    return keys


def unreachable(build: SiteBuild) -> list[Fact]:
    """Facts whose page (or image) cannot be reached from the home page."""
    seen = reachable(build)
    return [
        f
        for f in build.facts
        if f.page not in seen or (f.asset is not None and f.asset not in seen)
    ]


def modality_counts(build: SiteBuild) -> dict[str, Any]:
    """Per-fact modality counts: ``{"text", "layout", "image", "total", "by_medium"}``.

    ``by_medium`` splits them by how they are shown: ``html``, ``css`` (layout) and each
    image kind (``travel_map``, ``calendar``, ``price_chart``, ``slot_grid``, ``notice``).
    """
    kinds = Counter(f.presentation for f in build.facts)
    media = Counter(f.medium for f in build.facts)
    return {
        **{p: kinds[p] for p in PRESENTATIONS},
        "total": len(build.facts),
        "by_medium": dict(sorted(media.items())),
    }


def summary(world: World, build: SiteBuild) -> dict[str, Any]:
    """The CLI's JSON line: pages, images, facts by modality, unreachable facts.

    A checker fact that the inventory never recorded counts as unreachable too, so a
    renderer that silently drops a field cannot report zero.
    """
    recorded = {f.key for f in build.facts}
    missing = expected_facts(world) - recorded
    counts = modality_counts(build)
    return {
        "pages": len(build.pages()),
        "images": sum(p.endswith(".png") for p in build.files),
        "text_facts": counts["text"],
        "image_only_facts": counts["image"],
        "layout_only_facts": counts["layout"],
        "facts_by_medium": counts["by_medium"],
        "unreachable_facts": len(unreachable(build)) + len(missing),
    }
