"""WorldTravel-Webscape site: the WorldTravel world rendered as a static web site.

``render_world`` builds pages, CSS and images in memory with a fact inventory (where every
checker-relevant fact is shown, and whether as text, layout or image); ``write_site`` and
``ensure_site`` put it on disk (the latter cached per world hash); ``crawl_world`` is the
HTML-only crawler that rebuilds as much of the world as the markup reveals. Pure domain
code: no Inspect imports.
"""

from environments.worldtravel.site.build import ensure_site, public_dir, write_site
from environments.worldtravel.site.facts import expected_facts, reachable, summary, unreachable
from environments.worldtravel.site.render import Fact, SiteBuild, render_world, world_hash

__all__ = [
    "Fact",
    "SiteBuild",
    "ensure_site",
    "expected_facts",
    "public_dir",
    "reachable",
    "render_world",
    "summary",
    "unreachable",
    "world_hash",
    "write_site",
]
