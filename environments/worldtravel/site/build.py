"""Write a rendered site to disk, and a per-process cache of it keyed by the world hash.

Layout of an output directory: ``public/`` holds what the server may serve (pages, CSS,
images); ``inventory.json`` (the fact inventory) and ``geometry.json`` (where each image
fact was drawn) sit beside it, never inside, so the agent cannot download the answer key.
Rendering happens once per process and world: the benchmark asks :func:`ensure_site`
for the directory in every sample.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from environments.worldtravel.model import World
from environments.worldtravel.site.facts import summary
from environments.worldtravel.site.render import SiteBuild, render_world, world_hash

PUBLIC = "public"
INVENTORY = "inventory.json"
GEOMETRY = "geometry.json"
SUMMARY = "summary.json"
CACHE_ENV = "WORLDTRAVEL_SITE_CACHE"


def write_site(world: World, out: Path) -> dict[str, Any]:
    """Render ``world`` into ``out`` (``public/`` + inventory); returns the summary."""
    build = render_world(world)
    write_files(build, out)
    result = summary(world, build)
    (out / SUMMARY).write_text(json.dumps(result), encoding="utf-8")
    return result


def write_files(build: SiteBuild, out: Path) -> None:
    """Write a rendered build: files under ``out/public``, the inventory beside it."""
    public = out / PUBLIC
    made: set[Path] = set()
    for path, data in build.files.items():
        target = public / path.lstrip("/")
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        target.write_bytes(data)
    (out / INVENTORY).write_text(
        json.dumps([asdict(f) for f in build.facts], separators=(",", ":")), encoding="utf-8"
    )
    marks = {path: [asdict(m) for m in found] for path, found in build.marks.items()}
    (out / GEOMETRY).write_text(json.dumps(marks, separators=(",", ":")), encoding="utf-8")


def cache_root() -> Path:
    """Where cached sites live (``$WORLDTRAVEL_SITE_CACHE`` or the temp dir)."""
    return Path(os.environ.get(CACHE_ENV) or Path(tempfile.gettempdir()) / "worldtravel-site")


_BUILT: dict[int, tuple[World, Path]] = {}


def ensure_site(world: World) -> Path:
    """Directory of the rendered site for ``world`` (rendered on first use, then reused).

    The directory name is the world hash (content + renderer version), so a changed world
    or renderer never reads a stale site; a finished render is moved into place
    atomically, so concurrent processes never see half a site.
    """
    known = _BUILT.get(id(world))
    if (known is not None and known[0] is world and known[1].parent == cache_root()
            and (known[1] / SUMMARY).exists()):
        return known[1]
    final = cache_root() / world_hash(world)
    _BUILT[id(world)] = (world, final)
    if (final / SUMMARY).exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".render-", dir=final.parent))
    try:
        write_site(world, staging)
        try:
            staging.rename(final)
        except OSError:  # another process won the race: use its copy
            shutil.rmtree(staging, ignore_errors=True)
    finally:
        if staging.exists() and staging != final:
            shutil.rmtree(staging, ignore_errors=True)
    return final


def public_dir(world: World) -> Path:
    """The servable ``public/`` directory of the cached site."""
    return ensure_site(world) / PUBLIC
