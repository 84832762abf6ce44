"""Render the WorldTravel world as a static web site (Jinja2 templates, CSS, Pillow images).

Why a site at all: the Webscape benchmark asks the agent to recover the executable
constraints from rendered pages, not from tool JSON. The pages are built so that layout
carries meaning, in three tiers that the fact inventory records for every checker fact:

- ``text``: in the HTML text (tables, definition lists, collapsed ``<details>`` tabs,
  footnotes): a scraper recovers it;
- ``layout``: meaning lives only in the rendered style: calendar closures, running days
  of departures and hotel pet/smoking badges are cells or spans whose class name is an
  opaque per-world token and whose label ("closed", "runs", "Pets allowed") is CSS
  generated content. A browser (screenshot or accessibility tree) shows it; the raw HTML
  does not say it;
- ``image``: painted into a PNG with no text equivalent (see :mod:`.images`): every
  city's door-to-door travel matrix (a map with a drawn matrix), every timed-entry and
  seating board (a positional grid), half of the closure calendars, half of the hotels'
  room-rate series (price-by-date bar charts), some check-in/out and booking-lead
  notices: only vision recovers it.

Navigation must be searched: URLs carry a per-world slug (a hash of the world and the
record id), never the id, and there is no jump box; records are found through the city
pages, the filtered and paginated listings and the links between pages. Which record gets
an image is a stable hash of its id, so the same world always renders the same bytes.
Every link is root-absolute, so the site works behind any static server on any port.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from environments.worldtravel.model import (
    CATEGORIES,
    CUISINES,
    ROOMS,
    WEEKDAYS,
    Attraction,
    Hotel,
    Link,
    Restaurant,
    World,
    hhmm,
    weekday,
)
from environments.worldtravel.scenario import ROOM_CAPACITY
from environments.worldtravel.site import images
from environments.worldtravel.site.glyphs import Mark

RENDER_VERSION = "2"
PER_PAGE = 4
RATING_FLOORS = ("0", "4.0", "4.5")
TEMPLATES = Path(__file__).parent / "templates"
PRESENTATIONS = ("text", "layout", "image")


@dataclass
class Fact:
    """One checker-relevant fact: where it is shown and how (text, layout or image)."""

    key: str
    page: str
    presentation: str
    asset: str | None = None
    medium: str = "html"  # html, css (layout) or the image kind (see images.py)


@dataclass
class SiteBuild:
    """Rendered files (path -> bytes) and the fact inventory."""

    files: dict[str, bytes] = field(default_factory=dict)
    facts: list[Fact] = field(default_factory=list)
    marks: dict[str, list[Mark]] = field(default_factory=dict)  # image path -> drawn parts

    def pages(self) -> list[str]:
        """Paths of the HTML pages."""
        return [p for p in self.files if p.endswith(".html")]


def world_hash(world: World) -> str:
    """Stable hash of the world's content and the renderer version (cache key)."""
    from environments.worldtravel.store import dumps

    text = dumps(world.to_record()) + RENDER_VERSION
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def picked(item_id: str, salt: str, modulo: int) -> bool:
    """Deterministic 1-in-``modulo`` choice by id (which facts become images)."""
    digest = hashlib.md5(f"{salt}:{item_id}".encode()).digest()
    return digest[0] % modulo == 0


def slug(token: str, item_id: str) -> str:
    """The URL slug of a record: a hash of the world token and the id (not guessable)."""
    return hashlib.sha1(f"{token}/{item_id}".encode()).hexdigest()[:10]


def display_names(world: World) -> dict[str, str]:
    """Record id -> the name the site shows, unique per city and kind.

    Generated names repeat ("Delta Market" twice in Brisa); the request names places
    instead of giving ids, so repeats get a district suffix in id order ("Delta Market,
    North Quay") that the site shows everywhere the name appears.
    """
    districts = ("Old Town", "North Quay", "Hillside", "Riverside", "East Gate", "Westend")
    names: dict[str, str] = {c.id: c.name for c in world.cities}
    groups: tuple[list[Any], ...] = (world.hotels, world.restaurants, world.attractions)
    for group in groups:
        seen: dict[tuple[str, str], int] = {}
        for rec in sorted(group, key=lambda r: r.id):
            n = seen.get((rec.city, rec.name), 0)
            seen[(rec.city, rec.name)] = n + 1
            names[rec.id] = rec.name if n == 0 else f"{rec.name}, {districts[(n - 1) % 6]}"
    return names


def state_classes(token: str) -> dict[str, str]:
    """Opaque CSS class names for the layout-only states, derived from the world hash."""
    names = ("open", "closed", "run", "norun", "pets_yes", "pets_no", "smoke_yes", "smoke_no")
    return {n: "k" + hashlib.sha1(f"{token}:{n}".encode()).hexdigest()[:6] for n in names}


def spans_text(intervals: list[tuple[int, int]]) -> str:
    """Opening intervals as ``10:25–16:45, 17:55–23:25`` (``closed`` when none)."""
    if not intervals:
        return "closed"
    return ", ".join(f"{hhmm(a)}–{hhmm(b)}" for a, b in intervals)


def lead_text(days: int) -> str:
    """Booking lead as shown on the page."""
    return "no advance booking needed" if days == 0 else f"book at least {days} days ahead"


class _Renderer:
    def __init__(self, world: World) -> None:
        self.w = world
        self.token = world_hash(world)
        self.cls = state_classes(self.token)
        self.names = display_names(world)
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(TEMPLATES)),
            autoescape=jinja2.select_autoescape(["html"]),
            undefined=jinja2.StrictUndefined,
        )
        self.dates = world.dates()
        self.out = SiteBuild()

    # ------------------------------------------------------------------ helpers
    def page(self, path: str, template: str, title: str, **ctx: Any) -> None:
        ctx.setdefault("crumbs", [])
        html = self.env.get_template(template).render(title=title, **ctx)
        self.out.files[path] = html.encode()

    def fact(
        self,
        key: str,
        page: str,
        presentation: str,
        asset: str | None = None,
        medium: str | None = None,
    ) -> None:
        if medium is None:
            medium = {"text": "html", "layout": "css"}.get(presentation, "image")
        self.out.facts.append(Fact(key, page, presentation, asset, medium))

    def image(self, name: str, drawn: images.Drawn) -> str:
        """Store a drawn image under a slug path; returns the path."""
        path = f"/img/{slug(self.token, name)}.png"
        self.out.files[path] = drawn.png
        self.out.marks[path] = drawn.marks
        return path

    def s(self, item_id: str) -> str:
        return slug(self.token, item_id)

    def weeks(self, cell: Any) -> list[list[Any]]:
        """Calendar rows (Mon..Sun) of ``cell(date)`` values, padded with None."""
        pad = weekday(self.dates[0])
        cells: list[Any] = [None] * pad + [cell(d) for d in self.dates]
        cells += [None] * (-len(cells) % 7)
        return [cells[i : i + 7] for i in range(0, len(cells), 7)]

    # ------------------------------------------------------------------ urls
    def city_url(self, cid: str) -> str:
        return f"/city/{self.s(cid)}.html"

    def href(self, item_id: str) -> str:
        rec = self.w.get(item_id)
        if isinstance(rec, Hotel):
            return f"/hotel/{self.s(item_id)}.html"
        if isinstance(rec, Restaurant):
            return f"/restaurant/{self.s(item_id)}.html"
        if isinstance(rec, Attraction):
            return f"/attraction/{self.s(item_id)}.html"
        if isinstance(rec, Link):
            return f"/link/{self.s(item_id)}.html"
        return self.city_url(item_id.split("-")[0])

    def route_url(self, o: str, d: str) -> str:
        return f"/route/{self.s(o + '>' + d)}.html"

    # ------------------------------------------------------------------ pages
    def render(self) -> SiteBuild:
        w = self.w
        css = self.env.get_template("site.css").render(c=self.cls)
        self.out.files["/static/site.css"] = css.encode()
        cities = [{"href": self.city_url(c.id), "name": c.name, "description": c.description}
                  for c in w.cities]
        self.page("/index.html", "index.html", "Wayfarer: five cities", cities=cities)
        self.simple_pages()
        for city in w.cities:
            self.city(city)
        for h in w.hotels:
            self.hotel(h)
        for r in w.restaurants:
            self.venue(r, "restaurant")
        for a in w.attractions:
            self.venue(a, "attraction")
        self.transport()
        return self.out

    def simple_pages(self) -> None:
        c = self.cls
        legend = (
            "<p>Calendars: <span class='{open}'>date</span> · <span class='{closed}'>date</span>"
            "</p><p>Timetables: <span class='{run}'></span> · <span class='{norun}'></span></p>"
            "<p>Transit is a flat fare per ride; taxis are priced per trip; walking is free."
            " Rooms are priced per night of arrival. Travel maps give door-to-door minutes by"
            " mode and the taxi fare; entry grids mark bookable start times.</p>"
        ).format(**c)
        self.page(
            "/policies.html",
            "simple.html",
            "Booking policies and legend",
            body=_markup(legend),
        )

    def city(self, city: Any) -> None:
        cid = city.id
        base = f"/city/{self.s(cid)}"
        crumbs = [("/index.html", "Home")]
        self.page(
            f"{base}.html",
            "city.html",
            city.name,
            city=city,
            base=base,
            travel=[(f"{base}/travel/{self.s(n)}.html", self.place_label(n)) for n in city.nodes],
            dates=self.dates,
            crumbs=crumbs,
        )
        self.fact(f"{cid}.station", f"{base}.html", "text")
        self.fact(f"{cid}.transit_fare", f"{base}.html", "text")
        crumbs = [*crumbs, (f"{base}.html", city.name)]
        for i, origin in enumerate(city.nodes):
            key = f"{cid}.travel.{origin}"
            rows = [
                (
                    dest,
                    {
                        "walk": city.times["walk"][i][j],
                        "transit": city.times["transit"][i][j],
                        "taxi": city.times["taxi"][i][j],
                        "fare": city.taxi_fares[i][j],
                    },
                )
                for j, dest in enumerate(city.nodes)
            ]
            asset = self.image(
                key,
                images.travel_map(key, f"FROM {origin}", list(city.coords), i, rows),
            )
            path = f"{base}/travel/{self.s(origin)}.html"
            self.page(
                path,
                "travel.html",
                f"Getting around from {self.place_label(origin)}",
                origin=origin,
                fare=city.transit_fare,
                image=asset,
                places=[(self.href(d), self.place_label(d), d) for d in city.nodes],
                crumbs=crumbs,
            )
            self.fact(key, path, "image", asset, "travel_map")
        hotels = [h for h in self.w.hotels if h.city == cid]
        for k, date in enumerate(self.dates):
            night_rows = [
                {
                    "href": self.href(h.id),
                    "name": self.names[h.id],
                    "prices": [
                        ("chart" if charted(h.id) else h.prices[r][k]) if r in h.prices else "—"
                        for r in ROOMS
                    ],
                }
                for h in hotels
            ]
            self.page(
                f"{base}/nights/{date}.html",
                "nights.html",
                f"{city.name} hotel rates, {date}",
                date=date,
                weekday=WEEKDAYS[weekday(date)],
                rooms=ROOMS,
                rows=night_rows,
                crumbs=crumbs,
                prev=f"{base}/nights/{self.dates[k - 1]}.html" if k else None,
                next=f"{base}/nights/{self.dates[k + 1]}.html"
                if k + 1 < len(self.dates)
                else None,
            )
        self.listings(city, crumbs)

    def place_label(self, node: str) -> str:
        """A travel-table place: the record's display name (the station by its city)."""
        if node.endswith("-ST"):
            return f"{self.names[node.split('-')[0]]} main station"
        return self.names.get(node, node)

    # ------------------------------------------------------------------ listings
    def listings(self, city: Any, crumbs: list[tuple[str, str]]) -> None:
        cid = city.id
        hotels = [h for h in self.w.hotels if h.city == cid]
        base = f"/city/{self.s(cid)}/hotels"
        for room in ("any", *ROOMS):
            for floor in RATING_FLOORS:
                for sort in ("rating", "price"):
                    items = [
                        h
                        for h in hotels
                        if h.rating >= float(floor) and (room == "any" or room in h.prices)
                    ]

                    def cheapest(h: Hotel, room: str = room) -> int:
                        rooms = list(h.prices) if room == "any" else [room]
                        return min(min(h.prices[r]) for r in rooms)

                    items.sort(key=lambda h: (-h.rating if sort == "rating" else cheapest(h), h.id))
                    rows = [
                        {
                            "href": self.href(h.id),
                            "name": self.names[h.id],
                            "cells": [h.stars, h.rating, f"from {cheapest(h)}"],
                        }
                        for h in items
                    ]
                    filters = [
                        {
                            "label": "Room",
                            "options": [
                                (f"{base}/{o}-{floor}-{sort}-p1.html", o, o == room)
                                for o in ("any", *ROOMS)
                            ],
                        },
                        {
                            "label": "Rating at least",
                            "options": [
                                (f"{base}/{room}-{o}-{sort}-p1.html", o, o == floor)
                                for o in RATING_FLOORS
                            ],
                        },
                        {
                            "label": "Sort",
                            "options": [
                                (f"{base}/{room}-{floor}-{o}-p1.html", o, o == sort)
                                for o in ("rating", "price")
                            ],
                        },
                    ]
                    self.paginate(
                        f"{base}/{room}-{floor}-{sort}",
                        f"{city.name} hotels",
                        rows,
                        ["Hotel", "Stars", "Rating", f"Nightly ({room} room)"],
                        filters,
                        crumbs,
                    )
        for kind, options, attr in (
            ("restaurants", CUISINES, "cuisine"),
            ("attractions", CATEGORIES, "category"),
        ):
            venues: list[Any] = [
                v
                for v in (self.w.restaurants if kind == "restaurants" else self.w.attractions)
                if v.city == cid
            ]
            base = f"/city/{self.s(cid)}/{kind}"
            for opt in ("any", *options):
                for sort in ("rating", "price"):
                    chosen: list[Any] = [
                        v for v in venues if opt == "any" or getattr(v, attr) == opt
                    ]
                    chosen.sort(key=lambda v: (-v.rating if sort == "rating" else v.price, v.id))
                    single = "restaurant" if kind == "restaurants" else "attraction"
                    rows = [
                        {
                            "href": self.href(v.id),
                            "name": self.names[v.id],
                            "cells": [getattr(v, attr), v.price, v.rating],
                        }
                        for v in chosen
                    ]
                    filters = [
                        {
                            "label": attr.capitalize(),
                            "options": [
                                (f"{base}/{o}-{sort}-p1.html", o, o == opt)
                                for o in ("any", *options)
                            ],
                        },
                        {
                            "label": "Sort",
                            "options": [
                                (f"{base}/{opt}-{o}-p1.html", o, o == sort)
                                for o in ("rating", "price")
                            ],
                        },
                    ]
                    self.paginate(
                        f"{base}/{opt}-{sort}",
                        f"{city.name} {kind}",
                        rows,
                        [single.capitalize(), attr.capitalize(), "Price", "Rating"],
                        filters,
                        crumbs,
                    )

    def paginate(
        self,
        stem: str,
        title: str,
        rows: list[dict[str, Any]],
        header: list[str],
        filters: list[dict[str, Any]],
        crumbs: list[tuple[str, str]],
    ) -> None:
        pages = max(1, math.ceil(len(rows) / PER_PAGE))
        for n in range(1, pages + 1):
            self.page(
                f"{stem}-p{n}.html",
                "listing.html",
                title,
                rows=rows[(n - 1) * PER_PAGE : n * PER_PAGE],
                header=header,
                filters=filters,
                total=len(rows),
                page=n,
                pages=pages,
                prev=f"{stem}-p{n - 1}.html" if n > 1 else None,
                next=f"{stem}-p{n + 1}.html" if n < pages else None,
                crumbs=crumbs,
            )

    # ------------------------------------------------------------------ details
    def hotel(self, h: Hotel) -> None:
        path = self.href(h.id)
        stem = path.removesuffix(".html")
        name = self.names[h.id]
        city_url = self.city_url(h.city)
        crumbs = [("/index.html", "Home"), (city_url, self.names[h.city])]
        image = None
        if picked(h.id, "checkin", 3):
            key = f"{h.id}.check_in"
            drawn = images.notice(
                key,
                "FRONT DESK",
                [("check_in", "CHECK-IN FROM", hhmm(h.check_in)),
                 ("check_out", "CHECK-OUT BY", hhmm(h.check_out))],
            )
            for m in drawn.marks:
                m.key = f"{h.id}.{m.part}"
            image = self.image(key, drawn)
        c = self.cls
        travel = f"/city/{self.s(h.city)}/travel/{self.s(h.id)}.html"
        self.page(
            path,
            "hotel.html",
            name,
            h=h,
            rooms=[(f"{stem}/rates-{r}.html", r) for r in sorted(h.prices)],
            policy=f"{stem}/policy.html",
            travel=travel,
            check_in=hhmm(h.check_in),
            check_out=hhmm(h.check_out),
            checkin_image=image,
            pets_class=c["pets_yes" if h.pets else "pets_no"],
            smoking_class=c["smoke_yes" if h.smoking else "smoke_no"],
            crumbs=crumbs,
        )
        for key in ("rating", "min_nights"):
            self.fact(f"{h.id}.{key}", path, "text")
        for key in ("check_in", "check_out"):
            self.fact(f"{h.id}.{key}", path, "image" if image else "text", image,
                      "notice" if image else None)
        for key in ("pets", "smoking"):
            self.fact(f"{h.id}.{key}", path, "layout")
        crumbs = [*crumbs, (path, name)]
        policy = f"{stem}/policy.html"
        self.page(policy, "hotel_policy.html", f"{name}: house rules", h=h, back=path,
                  crumbs=crumbs)
        self.fact(f"{h.id}.cancellation", policy, "text")
        index = {d: i for i, d in enumerate(self.dates)}
        chart = charted(h.id)
        for room, prices in sorted(h.prices.items()):
            rates = f"{stem}/rates-{room}.html"
            key = f"{h.id}.prices.{room}"
            asset = None
            if chart:
                asset = self.image(
                    key,
                    images.price_chart(key, f"{room} ROOM PER NIGHT", self.dates,
                                       weekday(self.dates[0]), prices),
                )
            self.page(
                rates,
                "rates.html",
                f"{name}: {room} room rates",
                room=room,
                capacity=ROOM_CAPACITY[room],
                weekdays=WEEKDAYS,
                chart=asset,
                crumbs=crumbs,
                weeks=self.weeks(lambda d, p=prices: {"date": d, "price": p[index[d]]}),
            )
            self.fact(key, rates, "image" if asset else "text", asset,
                      "price_chart" if asset else None)

    def venue(self, v: Restaurant | Attraction, kind: str) -> None:
        path = self.href(v.id)
        stem = path.removesuffix(".html")
        name = self.names[v.id]
        calendar = f"{stem}/calendar.html"
        city_url = self.city_url(v.city)
        crumbs = [("/index.html", "Home"), (city_url, self.names[v.city])]
        hours = [(WEEKDAYS[i], spans_text(v.hours[i])) for i in range(7)]
        slots: list[int] = []
        slot_label = None
        if isinstance(v, Restaurant) and v.reservation:
            slots, slot_label, slot_key = v.seatings, "Seatings (reservation required)", "seatings"
        elif isinstance(v, Attraction) and v.timed_entry:
            slots, slot_label, slot_key = v.timed_entry, "Timed entry", "timed_entry"
        else:
            slot_key = "seatings" if isinstance(v, Restaurant) else "timed_entry"
        slot_image = None
        if slots:
            key = f"{v.id}.{slot_key}"
            title = "SEATINGS" if slot_key == "seatings" else "TIMED ENTRY"
            slot_image = self.image(key, images.slot_grid(key, title, slots))
        lead, lead_image = None, None
        if isinstance(v, Attraction):
            if v.booking_lead_days and picked(v.id, "lead", 2):
                key = f"{v.id}.booking_lead_days"
                lead_image = self.image(
                    key,
                    images.notice(key, "BOOKING NOTICE",
                                  [("days", "BOOK AHEAD DAYS:", str(v.booking_lead_days))]),
                )
            else:
                lead = lead_text(v.booking_lead_days)
        self.page(
            path,
            "venue.html",
            name,
            v=v,
            kind=kind,
            hours=hours,
            calendar=calendar,
            travel=f"/city/{self.s(v.city)}/travel/{self.s(v.id)}.html",
            slot_label=slot_label,
            slot_image=slot_image,
            lead_text=lead,
            lead_image=lead_image,
            crumbs=crumbs,
        )
        keys = ["rating", "price", "hours"]
        if isinstance(v, Restaurant):
            keys += ["cuisine", "meal_minutes"]
        else:
            keys += ["category", "visit_minutes"]
            self.fact(
                f"{v.id}.booking_lead_days", path, "image" if lead_image else "text", lead_image,
                "notice" if lead_image else None,
            )
        for key in keys:
            self.fact(f"{v.id}.{key}", path, "text")
        self.fact(f"{v.id}.{slot_key}", path, "image" if slot_image else "text", slot_image,
                  "slot_grid" if slot_image else None)
        c = self.cls
        closed = set(v.closures)
        cal_image = None
        if picked(v.id, "calendar", 2):
            key = f"{v.id}.closures"
            cal_image = self.image(
                key,
                images.calendar(key, "OPENING CALENDAR", self.dates, weekday(self.dates[0]),
                                closed),
            )
        self.page(
            calendar,
            "calendar.html",
            f"{name}: calendar",
            name=name,
            back=path,
            weekdays=WEEKDAYS,
            open_class=c["open"],
            closed_class=c["closed"],
            image=cal_image,
            crumbs=[*crumbs, (path, name)],
            weeks=self.weeks(lambda d: {"date": d, "cls": c["closed" if d in closed else "open"]}),
        )
        self.fact(f"{v.id}.closures", calendar, "image" if cal_image else "layout", cal_image,
                  "calendar" if cal_image else None)

    # ------------------------------------------------------------------ transport
    def transport(self) -> None:
        c = self.cls
        pairs = sorted({(x.origin, x.destination) for x in self.w.links})
        body = (
            "<ul class='cols'>"
            + "".join(
                f"<li><a href='{self.route_url(o, d)}'>{self.names[o]} → {self.names[d]}</a></li>"
                for o, d in pairs
            )
            + "</ul>"
        )
        self.page(
            "/transport/index.html",
            "simple.html",
            "Inter-city timetables",
            body=_markup(body),
            crumbs=[("/index.html", "Home")],
        )
        crumbs = [("/index.html", "Home"), ("/transport/index.html", "Transport")]
        for o, d in pairs:
            links = sorted(
                (x for x in self.w.links if (x.origin, x.destination) == (o, d)),
                key=lambda x: (x.depart, x.id),
            )
            rows = [
                {
                    "id": x.id,
                    "href": self.href(x.id),
                    "depart": hhmm(x.depart),
                    "arrive": hhmm(x.arrive),
                    "mode": x.mode,
                    "days": [c["run" if r else "norun"] for r in x.weekdays],
                }
                for x in links
            ]
            route = self.route_url(o, d)
            stem = route.removesuffix(".html")
            title = f"{self.names[o]} to {self.names[d]}"
            self.page(
                route,
                "route.html",
                title,
                rows=rows,
                weekdays=WEEKDAYS,
                dates=[(f"{stem}/{date}.html", date) for date in self.dates],
                crumbs=crumbs,
            )
            for k, date in enumerate(self.dates):
                wd = weekday(date)
                day_rows = [
                    {
                        "id": x.id,
                        "href": self.href(x.id),
                        "depart": hhmm(x.depart),
                        "arrive": hhmm(x.arrive),
                        "economy": x.prices.get("economy", "—"),
                        "business": x.prices.get("business", "—"),
                        "cls": c["run" if x.weekdays[wd] else "norun"],
                    }
                    for x in links
                ]
                self.page(
                    f"{stem}/{date}.html",
                    "route_date.html",
                    f"{title} on {date}",
                    route=route,
                    rows=day_rows,
                    crumbs=[*crumbs, (route, title)],
                    prev=f"{stem}/{self.dates[k - 1]}.html" if k else None,
                    next=f"{stem}/{self.dates[k + 1]}.html" if k + 1 < len(self.dates) else None,
                )
            for x in links:
                path = self.href(x.id)
                self.page(
                    path,
                    "link.html",
                    f"{x.mode.capitalize()} {x.id}",
                    l=x,
                    origin=self.names[x.origin],
                    destination=self.names[x.destination],
                    depart=hhmm(x.depart),
                    arrive=hhmm(x.arrive),
                    fares=[
                        (k, x.prices[k], "included" if x.baggage.get(k) else "extra")
                        for k in sorted(x.prices)
                    ],
                    days=[
                        (WEEKDAYS[i], c["run" if r else "norun"]) for i, r in enumerate(x.weekdays)
                    ],
                    route=route,
                    crumbs=[*crumbs, (route, title)],
                )
                for key in ("route", "mode", "depart", "arrive", "prices"):
                    self.fact(f"{x.id}.{key}", path, "text")
                self.fact(f"{x.id}.weekdays", path, "layout")


def charted(hotel_id: str) -> bool:
    """Whether a hotel's room rates are shown only as price-by-date bar charts."""
    return picked(hotel_id, "chart", 2)


def _markup(text: str) -> Any:
    from markupsafe import Markup

    return Markup(text)


def render_world(world: World) -> SiteBuild:
    """Render every page, stylesheet and image of ``world`` in memory."""
    return _Renderer(world).render()
