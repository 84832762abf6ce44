"""The Webscape site renderer: size, reachability, tiers of presentation, caching, CLI."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from environments.worldtravel.site import (
    SiteBuild,
    ensure_site,
    expected_facts,
    render_world,
    summary,
    unreachable,
    world_hash,
)
from environments.worldtravel.site.__main__ import main
from environments.worldtravel.site.build import CACHE_ENV, INVENTORY, PUBLIC
from environments.worldtravel.store import shipped_world


@pytest.fixture(scope="module")
def build() -> SiteBuild:
    return render_world(shipped_world())


@pytest.mark.slow
def test_summary_meets_the_acceptance_numbers(build: SiteBuild) -> None:
    result = summary(shipped_world(), build)
    assert result["pages"] >= 2000
    assert result["unreachable_facts"] == 0
    assert result["image_only_facts"] > 0 and result["layout_only_facts"] > 0
    assert {f.key for f in build.facts} == expected_facts(shipped_world())


def test_dropping_a_link_makes_facts_unreachable(build: SiteBuild) -> None:
    files = dict(build.files)
    # the route index is the only way into the timetables and departure pages
    files["/index.html"] = files["/index.html"].replace(b"/transport/index.html", b"/nowhere")
    for path, data in files.items():
        if path.endswith(".html") and path != "/transport/index.html":
            files[path] = data.replace(b'href="/transport/index.html"', b'href="/x"')
    broken = SiteBuild(files=files, facts=build.facts)
    lost = unreachable(broken)
    assert lost and all(f.key.split(".")[0].count("-") >= 2 for f in lost)  # link ids


def test_missing_fact_counts_as_unreachable(build: SiteBuild) -> None:
    partial = SiteBuild(files=build.files, facts=build.facts[1:])
    assert summary(shipped_world(), partial)["unreachable_facts"] == 1


@pytest.mark.slow
def test_rendering_is_deterministic(build: SiteBuild) -> None:
    again = render_world(shipped_world())
    assert again.files.keys() == build.files.keys()
    assert all(again.files[k] == v for k, v in build.files.items())


@pytest.mark.slow
def test_image_only_facts_are_not_in_the_html(build: SiteBuild) -> None:
    world = shipped_world()
    images = [f for f in build.facts if f.presentation == "image"]
    assert images
    for fact in images:
        assert fact.asset is not None
        png = Image.open(io.BytesIO(build.files[fact.asset]))
        assert png.format == "PNG" and png.width > 100 and len(set(png.getdata())) > 2
        rec_id, field = fact.key.split(".", 1)
        html = build.files[fact.page].decode()
        rec = world.get(rec_id)
        if field in ("check_in", "check_out"):
            assert "Check-in from" not in html and "Check-out by" not in html
        elif field in ("seatings", "timed_entry"):
            assert 'class="slots"' not in html and getattr(rec, field)
        elif field == "booking_lead_days":
            assert "Book ahead" not in html and "days ahead" not in html


def test_layout_only_facts_live_in_css_not_html(build: SiteBuild) -> None:
    world = shipped_world()
    fact = next(
        f for f in build.facts
        if f.key.endswith(".closures") and f.presentation == "layout"
        and world.get(f.key.split(".")[0]).closures  # type: ignore[union-attr]
    )
    venue = world.get(fact.key.split(".")[0])
    assert venue is not None and not isinstance(venue, type(world.hotels[0]))
    html = build.files[fact.page].decode()
    assert "closed" not in html.split("<main>")[1]
    css = build.files["/static/site.css"].decode()
    closed_class = re.search(r"\.(k[0-9a-f]{6})::after \{ content: \" closed\"", css)
    assert closed_class is not None
    for date in venue.closures:  # type: ignore[union-attr]
        assert f'<td class="{closed_class.group(1)}">{date}</td>' in html
    hotel_page = next(f.page for f in build.facts if f.key == f"{world.hotels[0].id}.pets")
    hotel_html = build.files[hotel_page].decode()
    assert "Pets allowed" not in hotel_html and "No pets" not in hotel_html


def test_world_hash_tracks_content() -> None:
    world = shipped_world()
    changed = dataclasses.replace(
        world, hotels=[dataclasses.replace(world.hotels[0], rating=1.0), *world.hotels[1:]]
    )
    assert world_hash(changed) != world_hash(world)


@pytest.mark.slow
def test_ensure_site_renders_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    first = ensure_site(shipped_world())
    assert first.parent == tmp_path and (first / PUBLIC / "index.html").is_file()
    stamp = (first / PUBLIC / "index.html").stat().st_mtime_ns
    assert ensure_site(shipped_world()) == first
    assert (first / PUBLIC / "index.html").stat().st_mtime_ns == stamp
    assert not (first / PUBLIC / INVENTORY).exists()  # the answer key is never served


@pytest.mark.slow
def test_cli_prints_the_summary_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--out", str(tmp_path), "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert list(line) == [
        "pages", "images", "text_facts", "image_only_facts", "layout_only_facts",
        "facts_by_medium", "unreachable_facts",
    ]
    assert line["unreachable_facts"] == 0
    assert len(list((tmp_path / PUBLIC).rglob("*.html"))) == line["pages"]
    assert len(list((tmp_path / PUBLIC).rglob("*.png"))) == line["images"]
    assert (tmp_path / "geometry.json").is_file()
    assert not (tmp_path / PUBLIC / "geometry.json").exists()


def test_environment_does_not_import_inspect() -> None:
    code = (
        "import sys, environments.worldtravel.site, environments.worldtravel.site.crawler;"
        "print('inspect_ai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
