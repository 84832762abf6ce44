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
- ``image``: painted into a PNG (check-in/out notices, some timed-entry and seating
  boards, some booking-lead notices): only vision recovers it.

Which venue gets an image is a stable hash of its id, so the same world always renders
the same bytes. Every link is root-absolute (``/hotel/AVA-H00.html``), so the site works
behind any static server on any port.
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
from environments.worldtravel.site.images import text_board

RENDER_VERSION = "1"
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


@dataclass
class SiteBuild:
    """Rendered files (path -> bytes) and the fact inventory."""

    files: dict[str, bytes] = field(default_factory=dict)
    facts: list[Fact] = field(default_factory=list)

    def pages(self) -> list[str]:
        """Paths of the HTML content pages (the ``/go/`` redirect stubs are not counted)."""
        return [p for p in self.files if p.endswith(".html") and not p.startswith("/go/")]


def world_hash(world: World) -> str:
    """Stable hash of the world's content and the renderer version (cache key)."""
    from environments.worldtravel.store import dumps

    text = dumps(world.to_record()) + RENDER_VERSION
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def picked(item_id: str, salt: str, modulo: int) -> bool:
    """Deterministic 1-in-``modulo`` choice by id (which facts become images)."""
    digest = hashlib.md5(f"{salt}:{item_id}".encode()).digest()
    return digest[0] % modulo == 0


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

    def fact(self, key: str, page: str, presentation: str, asset: str | None = None) -> None:
        self.out.facts.append(Fact(key, page, presentation, asset))

    def image(self, path: str, title: str, lines: list[str]) -> str:
        self.out.files[path] = text_board(title, lines)
        return path

    def weeks(self, cell: Any) -> list[list[Any]]:
        """Calendar rows (Mon..Sun) of ``cell(date)`` values, padded with None."""
        pad = weekday(self.dates[0])
        cells: list[Any] = [None] * pad + [cell(d) for d in self.dates]
        cells += [None] * (-len(cells) % 7)
        return [cells[i : i + 7] for i in range(0, len(cells), 7)]

    # ------------------------------------------------------------------ pages
    def render(self) -> SiteBuild:
        w = self.w
        css = self.env.get_template("site.css").render(c=self.cls)
        self.out.files["/static/site.css"] = css.encode()
        self.page("/index.html", "index.html", "Wayfarer: five cities", cities=w.cities)
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
        self.goto_pages()
        return self.out

    def simple_pages(self) -> None:
        c = self.cls
        legend = (
            "<p>Calendars: <span class='{open}'>date</span> · <span class='{closed}'>date</span>"
            "</p><p>Timetables: <span class='{run}'></span> · <span class='{norun}'></span></p>"
            "<p>Transit is a flat fare per ride; taxis are priced per trip; walking is free."
            " Rooms are priced per night of arrival.</p>"
        ).format(**c)
        self.page(
            "/policies.html",
            "simple.html",
            "Booking policies and legend",
            body=_markup(legend),
        )

    def city(self, city: Any) -> None:
        cid = city.id
        crumbs = [("/index.html", "Home")]
        self.page(
            f"/city/{cid}.html",
            "city.html",
            city.name,
            city=city,
            nodes=city.nodes,
            dates=self.dates,
            crumbs=crumbs,
        )
        self.fact(f"{cid}.station", f"/city/{cid}.html", "text")
        self.fact(f"{cid}.transit_fare", f"/city/{cid}.html", "text")
        crumbs = [*crumbs, (f"/city/{cid}.html", city.name)]
        for i, origin in enumerate(city.nodes):
            rows = [
                {
                    "id": dest,
                    "href": self.href(dest),
                    "walk": city.times["walk"][i][j],
                    "transit": city.times["transit"][i][j],
                    "taxi": city.times["taxi"][i][j],
                    "fare": city.taxi_fares[i][j],
                }
                for j, dest in enumerate(city.nodes)
            ]
            path = f"/city/{cid}/travel/{origin}.html"
            self.page(
                path,
                "travel.html",
                f"Getting around from {origin}",
                origin=origin,
                fare=city.transit_fare,
                rows=rows,
                crumbs=crumbs,
            )
            self.fact(f"{cid}.travel.{origin}", path, "text")
        hotels = [h for h in self.w.hotels if h.city == cid]
        for k, date in enumerate(self.dates):
            rows = [
                {"id": h.id, "prices": [h.prices[r][k] if r in h.prices else "—" for r in ROOMS]}
                for h in hotels
            ]
            self.page(
                f"/city/{cid}/nights/{date}.html",
                "nights.html",
                f"{city.name} hotel rates, {date}",
                date=date,
                weekday=WEEKDAYS[weekday(date)],
                rooms=ROOMS,
                rows=rows,
                crumbs=crumbs,
                prev=f"/city/{cid}/nights/{self.dates[k - 1]}.html" if k else None,
                next=f"/city/{cid}/nights/{self.dates[k + 1]}.html"
                if k + 1 < len(self.dates)
                else None,
            )
        self.listings(city, crumbs)

    def href(self, item_id: str) -> str:
        rec = self.w.get(item_id)
        if isinstance(rec, Hotel):
            return f"/hotel/{item_id}.html"
        if isinstance(rec, Restaurant):
            return f"/restaurant/{item_id}.html"
        if isinstance(rec, Attraction):
            return f"/attraction/{item_id}.html"
        return f"/city/{item_id.split('-')[0]}.html"

    # ------------------------------------------------------------------ listings
    def listings(self, city: Any, crumbs: list[tuple[str, str]]) -> None:
        cid = city.id
        hotels = [h for h in self.w.hotels if h.city == cid]
        base = f"/city/{cid}/hotels"
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
                            "href": f"/hotel/{h.id}.html",
                            "name": f"{h.name} ({h.id})",
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
            base = f"/city/{cid}/{kind}"
            for opt in ("any", *options):
                for sort in ("rating", "price"):
                    chosen: list[Any] = [
                        v for v in venues if opt == "any" or getattr(v, attr) == opt
                    ]
                    chosen.sort(key=lambda v: (-v.rating if sort == "rating" else v.price, v.id))
                    single = "restaurant" if kind == "restaurants" else "attraction"
                    rows = [
                        {
                            "href": f"/{single}/{v.id}.html",
                            "name": f"{v.name} ({v.id})",
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
        path = f"/hotel/{h.id}.html"
        crumbs = [("/index.html", "Home"), (f"/city/{h.city}.html", h.city)]
        image = None
        if picked(h.id, "checkin", 3):
            image = self.image(
                f"/img/{h.id}-desk.png",
                "Front desk",
                [f"Check-in from {hhmm(h.check_in)}", f"Check-out by {hhmm(h.check_out)}"],
            )
        c = self.cls
        self.page(
            path,
            "hotel.html",
            h.name,
            h=h,
            rooms=sorted(h.prices),
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
            self.fact(f"{h.id}.{key}", path, "image" if image else "text", image)
        for key in ("pets", "smoking"):
            self.fact(f"{h.id}.{key}", path, "layout")
        crumbs = [*crumbs, (path, h.name)]
        policy = f"/hotel/{h.id}/policy.html"
        self.page(policy, "hotel_policy.html", f"{h.name}: house rules", h=h, crumbs=crumbs)
        self.fact(f"{h.id}.cancellation", policy, "text")
        index = {d: i for i, d in enumerate(self.dates)}
        for room, prices in sorted(h.prices.items()):
            rates = f"/hotel/{h.id}/rates-{room}.html"
            self.page(
                rates,
                "rates.html",
                f"{h.name}: {room} room rates",
                room=room,
                capacity=ROOM_CAPACITY[room],
                weekdays=WEEKDAYS,
                crumbs=crumbs,
                weeks=self.weeks(lambda d, p=prices: {"date": d, "price": p[index[d]]}),
            )
            self.fact(f"{h.id}.prices.{room}", rates, "text")

    def venue(self, v: Restaurant | Attraction, kind: str) -> None:
        path = f"/{kind}/{v.id}.html"
        calendar = f"/{kind}/{v.id}/calendar.html"
        crumbs = [("/index.html", "Home"), (f"/city/{v.city}.html", v.city)]
        hours = [(WEEKDAYS[i], spans_text(v.hours[i])) for i in range(7)]
        slots: list[int] = []
        slot_label = None
        if isinstance(v, Restaurant) and v.reservation:
            slots, slot_label = v.seatings, "Seatings (reservation required)"
        elif isinstance(v, Attraction) and v.timed_entry:
            slots, slot_label = v.timed_entry, "Timed entry"
        slot_image = None
        if slots and picked(v.id, "slots", 2):
            times = [hhmm(t) for t in slots]
            lines = [" · ".join(times[i : i + 5]) for i in range(0, len(times), 5)]
            slot_image = self.image(f"/img/{v.id}-slots.png", slot_label or "", lines)
        lead, lead_image = None, None
        if isinstance(v, Attraction):
            if v.booking_lead_days and picked(v.id, "lead", 2):
                lead_image = self.image(
                    f"/img/{v.id}-lead.png", "Booking notice", [lead_text(v.booking_lead_days)]
                )
            else:
                lead = lead_text(v.booking_lead_days)
        self.page(
            path,
            "venue.html",
            v.name,
            v=v,
            kind=kind,
            hours=hours,
            calendar=calendar,
            slots=[hhmm(t) for t in slots],
            slot_label=slot_label,
            slot_image=slot_image,
            lead_text=lead,
            lead_image=lead_image,
            crumbs=crumbs,
        )
        keys = ["rating", "price", "hours"]
        if isinstance(v, Restaurant):
            keys += ["cuisine", "meal_minutes"]
            slot_key = "seatings"
        else:
            keys += ["category", "visit_minutes"]
            slot_key = "timed_entry"
            self.fact(
                f"{v.id}.booking_lead_days", path, "image" if lead_image else "text", lead_image
            )
        for key in keys:
            self.fact(f"{v.id}.{key}", path, "text")
        self.fact(f"{v.id}.{slot_key}", path, "image" if slot_image else "text", slot_image)
        c = self.cls
        closed = set(v.closures)
        self.page(
            calendar,
            "calendar.html",
            f"{v.name}: calendar",
            name=v.name,
            back=path,
            weekdays=WEEKDAYS,
            open_class=c["open"],
            closed_class=c["closed"],
            crumbs=[*crumbs, (path, v.name)],
            weeks=self.weeks(lambda d: {"date": d, "cls": c["closed" if d in closed else "open"]}),
        )
        self.fact(f"{v.id}.closures", calendar, "layout")

    # ------------------------------------------------------------------ transport
    def transport(self) -> None:
        c = self.cls
        pairs = sorted({(x.origin, x.destination) for x in self.w.links})
        body = (
            "<ul class='cols'>"
            + "".join(f"<li><a href='/route/{o}-{d}.html'>{o} → {d}</a></li>" for o, d in pairs)
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
                    "depart": hhmm(x.depart),
                    "arrive": hhmm(x.arrive),
                    "mode": x.mode,
                    "days": [c["run" if r else "norun"] for r in x.weekdays],
                }
                for x in links
            ]
            route = f"/route/{o}-{d}.html"
            self.page(
                route,
                "route.html",
                f"{o} to {d}",
                origin=o,
                destination=d,
                rows=rows,
                weekdays=WEEKDAYS,
                dates=self.dates,
                crumbs=crumbs,
            )
            for k, date in enumerate(self.dates):
                wd = weekday(date)
                day_rows = [
                    {
                        "id": x.id,
                        "depart": hhmm(x.depart),
                        "arrive": hhmm(x.arrive),
                        "economy": x.prices.get("economy", "—"),
                        "business": x.prices.get("business", "—"),
                        "cls": c["run" if x.weekdays[wd] else "norun"],
                    }
                    for x in links
                ]
                stem = f"/route/{o}-{d}"
                self.page(
                    f"{stem}/{date}.html",
                    "route_date.html",
                    f"{o} to {d} on {date}",
                    origin=o,
                    destination=d,
                    rows=day_rows,
                    crumbs=[*crumbs, (route, f"{o}-{d}")],
                    prev=f"{stem}/{self.dates[k - 1]}.html" if k else None,
                    next=f"{stem}/{self.dates[k + 1]}.html" if k + 1 < len(self.dates) else None,
                )
            for x in links:
                path = f"/link/{x.id}.html"
                self.page(
                    path,
                    "link.html",
                    f"{x.mode.capitalize()} {x.id}",
                    l=x,
                    depart=hhmm(x.depart),
                    arrive=hhmm(x.arrive),
                    fares=[
                        (k, x.prices[k], "included" if x.baggage.get(k) else "extra")
                        for k in sorted(x.prices)
                    ],
                    days=[
                        (WEEKDAYS[i], c["run" if r else "norun"]) for i, r in enumerate(x.weekdays)
                    ],
                    crumbs=[*crumbs, (route, f"{o}-{d}")],
                )
                for key in ("route", "mode", "depart", "arrive", "prices"):
                    self.fact(f"{x.id}.{key}", path, "text")
                self.fact(f"{x.id}.weekdays", path, "layout")

    def goto_pages(self) -> None:
        """``/go/<id>.html`` redirects, the target of the header's Go-to-ID box."""
        ids = [
            *(c.id for c in self.w.cities),
            *(h.id for h in self.w.hotels),
            *(r.id for r in self.w.restaurants),
            *(a.id for a in self.w.attractions),
            *(x.id for x in self.w.links),
        ]
        for item_id in ids:
            rec = self.w.get(item_id)
            target = f"/link/{item_id}.html" if isinstance(rec, Link) else self.href(item_id)
            self.out.files[f"/go/{item_id}.html"] = (
                f'<!doctype html><meta http-equiv="refresh" content="0; url={target}">'
                f'<title>{item_id}</title><a href="{target}">{item_id}</a>'
            ).encode()


def _markup(text: str) -> Any:
    from markupsafe import Markup

    return Markup(text)


def render_world(world: World) -> SiteBuild:
    """Render every page, stylesheet and image of ``world`` in memory."""
    return _Renderer(world).render()
