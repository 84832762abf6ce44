"""Image facts: legible from their pixels (decoded at the renderer's boxes), absent from the
HTML, deterministic; the modality inventory; request and URLs that give no ids away."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from environments.worldtravel.model import World
from environments.worldtravel.site import SiteBuild, render_world
from environments.worldtravel.site.facts import modality_counts
from environments.worldtravel.site.glyphs import GLYPHS, Canvas, decode_png, read_text
from environments.worldtravel.site.legibility import IllegibleError, decode_fact
from environments.worldtravel.site.render import display_names
from environments.worldtravel.site.request import webscape_request
from environments.worldtravel.store import shipped_scenarios, shipped_world

MEDIA = {"travel_map", "calendar", "price_chart", "slot_grid", "notice"}


@pytest.fixture(scope="module")
def build() -> SiteBuild:
    return render_world(shipped_world())


def truth(world: World, key: str) -> Any:
    """The world's value of a fact, in the decoder's terms."""
    rec_id, field = key.split(".", 1)
    if field.startswith("travel."):
        city = world.city(rec_id)
        i = city.nodes.index(field.split(".", 1)[1])
        return {
            n: (city.times["walk"][i][j], city.times["transit"][i][j], city.times["taxi"][i][j],
                city.taxi_fares[i][j])
            for j, n in enumerate(city.nodes)
        }
    rec = world.get(rec_id)
    if field.startswith("prices."):
        return rec.prices[field.split(".")[1]]  # type: ignore[union-attr]
    value = getattr(rec, field)
    return sorted(value) if isinstance(value, list) else value


@pytest.mark.slow
def test_every_image_fact_decodes_to_the_world_value(build: SiteBuild) -> None:
    world = shipped_world()
    image = [f for f in build.facts if f.presentation == "image"]
    assert {f.medium for f in image} == MEDIA  # every kind is exercised
    wrong = [f.key for f in image if decode_fact(build, f) != truth(world, f.key)]
    assert wrong == []
    closed = [f for f in image if f.medium == "calendar" and truth(world, f.key)]
    assert closed  # some drawn calendars do carry closures (not only empty ones)


def test_a_changed_pixel_region_is_caught(build: SiteBuild) -> None:
    fact = next(f for f in build.facts if f.medium == "notice")
    assert fact.asset is not None
    px = decode_png(build.files[fact.asset]).copy()
    mark = next(m for m in build.marks[fact.asset] if m.key == fact.key)
    x0, y0, x1, y1 = mark.boxes[0]
    px[y0:y1, x0:x1] = (0, 0, 0)  # ink the whole first glyph box: no glyph looks like that
    with pytest.raises(ValueError):
        read_text(px, mark.boxes)
    chart = next(f for f in build.facts if f.medium == "price_chart")
    assert chart.asset is not None
    bars = [m for m in build.marks[chart.asset] if m.kind == "bar"]
    from PIL import Image

    img = decode_png(build.files[chart.asset]).copy()
    x0, y0, x1, y1 = bars[0].boxes[0]
    img[y1 - 30 : y1, x0:x1] = (252, 250, 244)  # cut the bar: it no longer matches its label
    import io

    out = io.BytesIO()
    Image.fromarray(img).save(out, format="PNG")
    broken = SiteBuild(files={**build.files, chart.asset: out.getvalue()}, facts=build.facts,
                       marks=build.marks)
    with pytest.raises(IllegibleError):
        decode_fact(broken, chart)


def test_glyph_font_round_trips_every_character() -> None:
    text = "".join(GLYPHS)
    canvas = Canvas(20 + 12 * len(text), 40)
    boxes = canvas.text(10, 10, text, (0, 0, 0))
    assert read_text(canvas.px, boxes) == text.upper()
    assert Canvas(10, 10).png() == Canvas(10, 10).png()


def test_image_facts_have_no_text_equivalent(build: SiteBuild) -> None:
    world = shipped_world()
    for fact in build.facts:
        if fact.presentation != "image":
            continue
        html = build.files[fact.page].decode().split("<main>")[1]
        rec_id, field = fact.key.split(".", 1)
        if fact.medium == "travel_map":
            assert "<table" not in html and "Walk min" not in html
        elif fact.medium == "calendar":
            assert 'class="calendar"' not in html
        elif fact.medium == "price_chart":
            prices = world.get(rec_id).prices[field.split(".")[1]]  # type: ignore[union-attr]
            assert 'class="calendar rates"' not in html
            assert not any(f'class="price">{p}<' in html for p in prices)
        elif fact.medium == "slot_grid":
            assert 'class="slots"' not in html
        elif field in ("check_in", "check_out"):
            assert "Check-in from" not in html and "Check-out by" not in html
        elif field == "booking_lead_days":
            assert "Book ahead" not in html and "days ahead" not in html
        alt = re.findall(r'alt="([^"]*)"', html)
        assert alt and not any(re.search(r"\d", a) for a in alt)  # alt text names, never tells
    # charted hotels' prices do not leak through the per-night rate pages either
    charted = {f.key.split(".")[0] for f in build.facts if f.medium == "price_chart"}
    night = next(p for p in build.files if "/nights/" in p)
    page = build.files[night].decode()
    pages = {f.key.split(".")[0]: f.page for f in build.facts if f.key.endswith(".rating")}
    seen = 0
    for hid in charted:
        href = f'href="{pages[hid]}"'
        if href in page:
            row = page.split(href, 1)[1].split("</tr>")[0]
            assert re.findall(r"<td>(\d+)</td>", row) == [] and "chart" in row
            seen += 1
    assert seen


def test_modality_inventory_counts(build: SiteBuild) -> None:
    counts = modality_counts(build)
    assert counts["text"] + counts["layout"] + counts["image"] == counts["total"]
    assert counts["total"] == len(build.facts)
    by = counts["by_medium"]
    assert set(by) == {"html", "css"} | MEDIA
    assert by["html"] == counts["text"] and by["css"] == counts["layout"]
    assert sum(by[m] for m in MEDIA) == counts["image"]
    world = shipped_world()
    assert by["travel_map"] == sum(len(c.nodes) for c in world.cities)
    slots = sum(bool(r.reservation and r.seatings) for r in world.restaurants)
    slots += sum(bool(a.timed_entry) for a in world.attractions)
    assert by["slot_grid"] == slots
    assert counts["image"] / counts["total"] > 0.10


@pytest.mark.slow
def test_images_are_deterministic(build: SiteBuild) -> None:
    again = render_world(shipped_world())
    pngs = [p for p in build.files if p.endswith(".png")]
    assert len(pngs) > 300
    assert all(again.files[p] == build.files[p] for p in pngs)
    assert np.asarray(decode_png(build.files[pngs[0]])).shape[2] == 3


def test_urls_do_not_carry_record_ids(build: SiteBuild) -> None:
    world = shipped_world()
    ids = [r.id for g in (world.hotels, world.restaurants, world.attractions, world.links)
           for r in g] + [c.id for c in world.cities] + [c.station for c in world.cities]
    paths = "\n".join(build.files)
    assert not [i for i in ids if i in paths]
    assert "Go to ID" not in build.files["/index.html"].decode()
    assert not any(p.startswith("/go/") for p in build.files)
    # the slugs depend on the world: another world (another hash) gets other URLs
    import dataclasses

    other = dataclasses.replace(world, seed=world.seed + 1)
    other_paths = set(render_world_paths(other))
    detail = {p for p in build.files if p.startswith("/hotel/")}
    assert detail and not (detail & other_paths)


def render_world_paths(world: World) -> list[str]:
    from environments.worldtravel.site.render import slug, world_hash

    token = world_hash(world)
    return [f"/hotel/{slug(token, h.id)}.html" for h in world.hotels]


def test_webscape_request_names_places_and_gives_no_ids() -> None:
    world = shipped_world()
    ids = {r.id for g in (world.hotels, world.restaurants, world.attractions, world.links)
           for r in g} | {c.station for c in world.cities}
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(i) for i in sorted(ids)) + r")\b")
    names = display_names(world)
    referenced = 0
    for scenario in shipped_scenarios():
        text = webscape_request(world, scenario)
        assert not pattern.search(text), (scenario.id, pattern.search(text))
        for c in scenario.constraints:
            for value in c.params.values():
                if isinstance(value, str) and value in names and value in ids:
                    assert names[value] in text
                    referenced += 1
    assert referenced > 50  # the named-venue constraints were really rephrased
