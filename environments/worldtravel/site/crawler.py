"""HTML-only crawler: rebuild the world from the site's markup, without CSS or images.

Why: the Webscape benchmark claims that some constraint-relevant facts can only be
recovered by rendering the site (layout) or by looking at it (images). This crawler is the
measurement of that claim: it walks every page reachable from ``/index.html``, reads
tables, definition lists, collapsed tabs and footnotes, and never evaluates CSS or looks
at a PNG. What it cannot read it fills with an optimistic guess:

- closures (calendar cells, layout-only) -> none; running days of departures
  (layout-only) -> every day; pets/smoking badges (layout-only) -> pets allowed,
  non-smoking;
- check-in/out times painted in an image -> 00:00 / 23:59; timed-entry or seating
  grids painted in an image -> walk in any time; booking lead in an image -> none;
  closure calendars drawn as images -> no closures; room rates drawn as a price chart ->
  0 per night; door-to-door travel maps (every city, every origin) -> 0 minutes by any
  mode and a taxi fare of 0.

URLs carry slugs, not ids: the crawler reads each record's id from its page ("ID",
"City code") and finds a hotel's rate and policy pages through the hotel page's links.

Planning on the rebuilt world with the exact solver then shows how often these guesses
break a plan in the real world (the crawler's feasibility in the README).
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from environments.worldtravel.model import (
    MODES,
    WEEKDAYS,
    Attraction,
    City,
    Hotel,
    Link,
    Restaurant,
    World,
    add_days,
    parse_hhmm,
)

UNKNOWN_CHECK_IN = 0
UNKNOWN_CHECK_OUT = 23 * 60 + 59
UNKNOWN_PRICE = 0


@dataclasses.dataclass(frozen=True)
class Guesses:
    """What the crawler assumes for the numbers it cannot read (the travel maps and the
    charted room rates); the other unknowns keep their optimistic guesses."""

    travel_minutes: int
    taxi_fare: int
    room_price: int


OPTIMISTIC = Guesses(travel_minutes=0, taxi_fare=0, room_price=UNKNOWN_PRICE)
"""Every unread trip instant and free, every charted room free (the default)."""
PESSIMISTIC = Guesses(travel_minutes=90, taxi_fare=300, room_price=100_000)
"""Every unread trip 90 minutes by any mode with a taxi fare of 300, every charted room
priced out of any budget: a scraper that plans only on what it could read."""


class _Page(HTMLParser):
    """Collects the structured parts of one page: h1, dl pairs, tables, tagged text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.pairs: dict[str, str] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self.tagged: dict[str, str] = {}
        self.footnotes: list[str] = []
        self.summaries: list[str] = []
        self.links: list[str] = []
        self._stack: list[tuple[str, str]] = []
        self._text: list[str] = []
        self._dt = ""
        self._table: list[list[str]] | None = None
        self._row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("a", "link") and a.get("href", "").startswith("/"):
            self.links.append(a["href"].split("#")[0])
        if tag == "table":
            self._table = []
            self.tables[a.get("class", "") or f"table{len(self.tables)}"] = self._table
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        if tag in ("h1", "dt", "dd", "td", "th", "b", "p", "summary"):
            self._stack.append((tag, a.get("class", "")))
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
        if not self._stack or self._stack[-1][0] != tag:
            return
        _, cls = self._stack.pop()
        text = " ".join("".join(self._text).split())
        if tag == "h1":
            self.title = text
        elif tag == "dt":
            self._dt = text
        elif tag == "dd":
            self.pairs[self._dt] = text
        elif tag in ("td", "th") and self._row is not None:
            self._row.append(text)
        elif tag == "b" and cls:
            self.tagged[cls] = text
        elif tag == "p" and "footnote" in cls:
            self.footnotes.append(text)
        elif tag == "summary":
            self.summaries.append(text)

    def handle_data(self, data: str) -> None:
        self._text.append(data)


def parse_page(html: str) -> _Page:
    """Parse one page's HTML."""
    page = _Page()
    page.feed(html)
    page.close()
    return page


def crawl(public: Path, start: str = "/index.html") -> dict[str, _Page]:
    """Every HTML page reachable from ``start`` under ``public``, parsed (BFS)."""
    pages: dict[str, _Page] = {}
    queue, seen = deque([start]), {start}
    while queue:
        path = queue.popleft()
        file = public / path.lstrip("/")
        if not path.endswith(".html") or not file.is_file():
            continue
        page = parse_page(file.read_text(encoding="utf-8"))
        pages[path] = page
        for target in page.links:
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return pages


def read_int(text: str) -> int:
    """The first integer in a cell's text (a clear error when there is none)."""
    found = re.search(r"-?\d+", text)
    if not found:
        raise ValueError(f"no number in {text!r}")
    return int(found.group())


def read_spans(text: str) -> list[tuple[int, int]]:
    """Opening spans from a cell such as ``09:00–12:00, 14:00–18:00`` (``closed``: none)."""
    if text.strip() == "closed":
        return []
    out = []
    for part in text.split(","):
        a, b = part.strip().split("–")
        out.append((parse_hhmm(a) or 0, parse_hhmm(b) or 0))
    return out


def _hours(page: _Page) -> list[list[tuple[int, int]]]:
    rows = {r[0]: r[1] for r in page.tables.get("hours", []) if len(r) == 2}
    return [read_spans(rows.get(d, "closed")) for d in WEEKDAYS]


def _slots(page: _Page) -> list[int] | None:
    """Slot times from the slots table; None when the slots are only in an image."""
    rows = page.tables.get("slots")
    if not rows:
        return None
    return [t for t in (parse_hhmm(c) for c in rows[0]) if t is not None]


def rebuild_world(
    public: Path, first_date: str, n_dates: int, seed: int = -1, guesses: Guesses = OPTIMISTIC
) -> World:
    """The world as the HTML reveals it (``guesses`` for the travel maps and charted
    room rates, optimistic guesses for the rest, where it does not)."""
    pages = crawl(public)
    dates = [add_days(first_date, i) for i in range(n_dates)]
    city_pages, hotels, restaurants, attractions, links = [], [], [], [], []
    for path, page in sorted(pages.items()):
        parts = path.strip("/").split("/")
        if len(parts) != 2:
            continue
        if parts[0] == "city":
            city_pages.append(page)
        elif parts[0] == "hotel":
            hotels.append(_hotel(pages, page, dates, guesses.room_price))
        elif parts[0] == "restaurant":
            restaurants.append(_restaurant(page))
        elif parts[0] == "attraction":
            attractions.append(_attraction(page))
        elif parts[0] == "link":
            links.append(_link(page))
    cities = sorted((_city(p, guesses, hotels, restaurants, attractions) for p in city_pages),
                    key=lambda c: c.id)
    # locations are matrix positions in each city's node order
    where = {n: i for c in cities for i, n in enumerate(c.nodes)}
    hotels = sorted((_relocate(h, where) for h in hotels), key=lambda r: r.id)
    restaurants = sorted((_relocate(r, where) for r in restaurants), key=lambda r: r.id)
    attractions = sorted((_relocate(a, where) for a in attractions), key=lambda r: r.id)
    links.sort(key=lambda r: r.id)
    return World(seed, first_date, n_dates, cities, hotels, restaurants, attractions, links)


def _relocate(rec: Any, where: dict[str, int]) -> Any:
    return dataclasses.replace(rec, location=where[rec.id])


def _city(page: _Page, guesses: Guesses, *groups: list[Any]) -> City:
    """A city from its page; every travel time and taxi fare is image-only: guessed
    (0 within a place itself)."""
    cid = page.pairs["City code"]
    station = page.pairs["Main station"]
    nodes = [r.id for group in groups for r in group if r.city == cid] + [station]
    return City(
        id=cid,
        name=page.title,
        description="",
        size_km=0.0,
        price_level=1.0,
        transit_fare=read_int(page.pairs["Transit fare"]),
        station=station,
        coords=[(0.0, 0.0)] * len(nodes),
        nodes=nodes,
        times={m: _square(len(nodes), guesses.travel_minutes) for m in MODES},
        taxi_fares=_square(len(nodes), guesses.taxi_fare),
    )


def _square(n: int, value: int) -> list[list[int]]:
    """An n x n matrix of ``value`` off the diagonal and 0 on it."""
    return [[0 if i == j else value for j in range(n)] for i in range(n)]


def _hotel(pages: dict[str, _Page], page: _Page, dates: list[str], unknown: int) -> Hotel:
    hid = page.pairs["ID"]
    prices: dict[str, list[int]] = {}
    for path in [p for p in page.links if "/rates-" in p]:
        room = path.rsplit("rates-", 1)[1].removesuffix(".html")
        by_date = {}
        for row in pages[path].tables.get("calendar rates", []):
            for cell in row:
                bits = cell.split()
                if len(bits) == 2 and bits[0] in dates:
                    by_date[bits[0]] = int(bits[1])
        # a price chart (image) leaves the table empty: guess (optimistic: free)
        prices[room] = [by_date.get(d, unknown) for d in dates]
    policy = next((pages[p] for p in page.links if p.endswith("/policy.html")), None)
    check_in = parse_hhmm(page.pairs.get("Check-in from"))
    check_out = parse_hhmm(page.pairs.get("Check-out by"))
    return Hotel(
        id=hid,
        city=hid.split("-")[0],
        name=page.title,
        rating=float(page.pairs["Guest rating"]),
        stars=read_int(page.pairs["Stars"]),
        location=0,
        check_in=UNKNOWN_CHECK_IN if check_in is None else check_in,
        check_out=UNKNOWN_CHECK_OUT if check_out is None else check_out,
        pets=True,
        smoking=False,
        min_nights=read_int(page.pairs["Minimum stay"]),
        cancellation=policy.tagged.get("cancel", "") if policy else "",
        prices=prices,
    )


def _restaurant(page: _Page) -> Restaurant:
    rid = page.pairs["ID"]
    meal = next((f for f in page.footnotes if "meal takes" in f), "")
    reservation = any("reservation required" in s for s in page.summaries)
    seatings = _slots(page) if reservation else []
    return Restaurant(
        id=rid,
        city=rid.split("-")[0],
        name=page.title,
        cuisine=page.pairs["Cuisine"],
        rating=float(page.pairs["Rating"]),
        price_band=len(page.pairs.get("Price band", "")),
        price=read_int(page.pairs["Price per person"]),
        location=0,
        hours=_hours(page),
        meal_minutes=read_int(meal),
        reservation=reservation and seatings is not None,
        seatings=seatings or [],
        closures=[],
    )


def _attraction(page: _Page) -> Attraction:
    aid = page.pairs["ID"]
    lead = page.pairs.get("Book ahead", "")
    timed = _slots(page) if any(s == "Timed entry" for s in page.summaries) else []
    return Attraction(
        id=aid,
        city=aid.split("-")[0],
        name=page.title,
        category=page.pairs["Category"],
        rating=float(page.pairs["Rating"]),
        price=read_int(page.pairs["Ticket"]),
        location=0,
        hours=_hours(page),
        visit_minutes=read_int(page.pairs["Visit length"]),
        timed_entry=timed or [],
        booking_lead_days=read_int(lead) if re.search(r"\d", lead) else 0,
        closures=[],
    )


def _link(page: _Page) -> Link:
    lid = page.pairs["ID"]
    fares = [r for r in page.tables.get("fares", [])[1:] if len(r) == 3]
    return Link(
        id=lid,
        mode=page.pairs["Mode"],
        operator=page.pairs["Operator"],
        origin=page.pairs["From"],
        destination=page.pairs["To"],
        depart=parse_hhmm(page.pairs["Departs"]) or 0,
        arrive=parse_hhmm(page.pairs["Arrives"]) or 0,
        weekdays=[True] * 7,
        prices={r[0]: int(r[1]) for r in fares},
        baggage={r[0]: r[2] == "included" for r in fares},
    )


def crawler_plan(crawled: World, scenario: Any) -> dict[str, Any] | None:
    """The exact solver's cheapest plan on the crawled world (None when it finds none).

    When the crawled world admits no plan (an optimistic guess can still exclude every
    hotel), the constraints that hinge on layout-only facts (``hotel_rules``) are dropped
    and the solve is retried, as a scraper with no better information would.
    """
    from environments.worldtravel.solver import solve

    result = solve(crawled, scenario)
    if result.plan is None:
        relaxed = [c for c in scenario.constraints if c.kind != "hotel_rules"]
        result = solve(crawled, scenario, relaxed)
    return result.plan
