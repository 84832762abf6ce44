"""The Webscape request: the scenario's request with every record id replaced by a name.

Why: with ids in the request an agent could skip the search the site is built for (the
site has no jump box and no id-bearing URLs, but an id still tells which page to look
for). The webscape agent gets the places by the names the site shows
(:func:`~environments.worldtravel.site.render.display_names`, unique per city) and must
find them through the city pages, the filtered listings and the links; the ids it needs
for the plan are printed on each record's page.

Rephrasing works on the request text itself, so every constraint kind (also kinds added
later) is covered: a parenthesised id right after its own name is dropped ("Avalon
station (AVA-ST)" -> "Avalon station"), any other id becomes the quoted display name.
A request that still contains an id afterwards raises, so no id can slip through.
"""

from __future__ import annotations

import re

from environments.worldtravel.model import World
from environments.worldtravel.scenario import Scenario
from environments.worldtravel.site.render import display_names


def record_names(world: World) -> dict[str, str]:
    """Every record id the request could mention -> the name the site shows for it."""
    names = display_names(world)
    for city in world.cities:
        names[city.station] = f"{city.name} main station"
    for link in world.links:
        names[link.id] = (
            f"the {link.mode} from {city_name(world, link.origin)} at "
            f"{link.depart // 60:02d}:{link.depart % 60:02d}"
        )
    return {k: v for k, v in names.items() if k not in {c.id for c in world.cities}}


def city_name(world: World, city_id: str) -> str:
    return world.city(city_id).name


def webscape_request(world: World, scenario: Scenario) -> str:
    """``scenario.request`` with no record id in it (places by their site names)."""
    names = record_names(world)
    pattern = "|".join(re.escape(i) for i in sorted(names, key=len, reverse=True))
    ids = re.compile(rf"\b({pattern})\b")
    text = scenario.request

    def parenthesised(m: re.Match[str]) -> str:
        before, rid = m.group(1), m.group(2)
        name = names[rid]
        first = name.split(" main station")[0].split(",")[0]
        return before if first.lower() in before.lower()[-len(first) - 12 :] else (
            f"{before} (“{name}”)"
        )

    text = re.sub(rf"(\S[^()\n]*?)\s*\(({pattern})\)", parenthesised, text)
    text = ids.sub(lambda m: f"“{names[m.group(1)]}”", text)
    leftover = ids.search(text)
    if leftover:
        raise ValueError(f"{scenario.id}: id {leftover.group(1)} left in the webscape request")
    return text
