"""Typed records of the WorldTravel world: plain data, JSON in and out.

Why plain frozen dataclasses of ints, strings and lists: the same records feed the CP-SAT
oracle, the checker, the agent's search tools and (in a later issue) a rendered web site,
so nothing here knows about any of them. Times are minutes after midnight (``int``);
dates are ISO strings; prices are whole currency units.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

MODES: tuple[str, ...] = ("walk", "transit", "taxi")
ROOMS: tuple[str, ...] = ("single", "double", "suite")
WEEKDAYS: tuple[str, ...] = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
CUISINES: tuple[str, ...] = (
    "italian",
    "japanese",
    "local",
    "indian",
    "vegetarian",
    "seafood",
    "french",
    "mexican",
)
CATEGORIES: tuple[str, ...] = ("museum", "park", "landmark", "gallery", "tour", "market")
LINK_MODES: tuple[str, ...] = ("flight", "train", "bus")
FARE_CLASSES: tuple[str, ...] = ("economy", "business")

Interval = tuple[int, int]


def hhmm(minutes: int) -> str:
    """Minutes after midnight as ``HH:MM``."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def parse_hhmm(text: object) -> int | None:
    """``HH:MM`` -> minutes after midnight; None for anything else (never raises)."""
    if not isinstance(text, str):
        return None
    parts = text.strip().split(":")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    h, m = int(parts[0]), int(parts[1])
    if 0 <= h <= 23 and 0 <= m <= 59:
        return h * 60 + m
    return None


def weekday(date: str) -> int:
    """Weekday index (0 = Monday) of an ISO date."""
    return dt.date.fromisoformat(date).weekday()


def add_days(date: str, days: int) -> str:
    """ISO date ``days`` after ``date``."""
    return (dt.date.fromisoformat(date) + dt.timedelta(days=days)).isoformat()


@dataclass(frozen=True)
class Hotel:
    """A hotel: rooms priced per night and date, check-in/out times and house rules."""

    id: str
    city: str
    name: str
    rating: float
    stars: int
    location: int
    check_in: int
    check_out: int
    pets: bool
    smoking: bool
    min_nights: int
    cancellation: str
    prices: dict[str, list[int]]  # room type -> nightly price per calendar date


@dataclass(frozen=True)
class Restaurant:
    """A restaurant: services per weekday, price per person, optional fixed seatings."""

    id: str
    city: str
    name: str
    cuisine: str
    rating: float
    price_band: int
    price: int
    location: int
    hours: list[list[Interval]]  # per weekday (0 = Mon): open intervals; [] = closed
    meal_minutes: int
    reservation: bool
    seatings: list[int]  # allowed start times when ``reservation`` (else [])
    closures: list[str]  # ISO dates closed


@dataclass(frozen=True)
class Attraction:
    """A sight: hours per weekday, visit length, ticket, timed entries, booking lead."""

    id: str
    city: str
    name: str
    category: str
    rating: float
    price: int
    location: int
    hours: list[list[Interval]]
    visit_minutes: int
    timed_entry: list[int]  # allowed entry times ([] = walk in)
    booking_lead_days: int
    closures: list[str]


@dataclass(frozen=True)
class Link:
    """One scheduled inter-city departure (same timetable every running weekday)."""

    id: str
    mode: str
    operator: str
    origin: str
    destination: str
    depart: int
    arrive: int
    weekdays: list[bool]
    prices: dict[str, int]  # fare class -> price per person
    baggage: dict[str, bool]  # fare class -> checked bag included


@dataclass(frozen=True)
class City:
    """A city: its character, station, and the intra-city travel matrices by mode.

    ``nodes`` lists the location ids (hotels, restaurants, attractions, station) in matrix
    order; ``times[mode][i][j]`` is minutes and ``taxi_fares[i][j]`` the taxi price from
    node i to node j; transit costs a flat ``transit_fare`` per person per ride.
    """

    id: str
    name: str
    description: str
    size_km: float
    price_level: float
    transit_fare: int
    station: str
    coords: list[tuple[float, float]]
    nodes: list[str]
    times: dict[str, list[list[int]]]
    taxi_fares: list[list[int]]


@dataclass(frozen=True)
class World:
    """The whole generated world (what the site renders and the tools query)."""

    seed: int
    first_date: str
    n_dates: int
    cities: list[City]
    hotels: list[Hotel]
    restaurants: list[Restaurant]
    attractions: list[Attraction]
    links: list[Link]
    _index: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def dates(self) -> list[str]:
        """Every calendar date the world has prices for."""
        return [add_days(self.first_date, i) for i in range(self.n_dates)]

    def date_index(self, date: str) -> int:
        """Position of ``date`` in the calendar (raises KeyError outside it)."""
        index = self._lookup()["dates"]
        return int(index[date])

    def get(self, item_id: str) -> Hotel | Restaurant | Attraction | Link | City | None:
        """Any record by id (None when unknown)."""
        found = self._lookup()["ids"].get(item_id)
        return found if found is not None else None

    def city(self, city_id: str) -> City:
        """A city by id."""
        return self._lookup()["cities"][city_id]  # type: ignore[no-any-return]

    def node(self, city_id: str, item_id: str) -> int | None:
        """Matrix index of a location id in its city (None when not a location there)."""
        return self._lookup()["nodes"][city_id].get(item_id)  # type: ignore[no-any-return]

    def _lookup(self) -> dict[str, Any]:
        if not self._index:
            ids: dict[str, Any] = {}
            for group in (self.hotels, self.restaurants, self.attractions, self.links, self.cities):
                for rec in group:
                    ids[rec.id] = rec
            self._index["ids"] = ids
            self._index["cities"] = {c.id: c for c in self.cities}
            self._index["nodes"] = {
                c.id: {n: i for i, n in enumerate(c.nodes)} for c in self.cities
            }
            self._index["dates"] = {d: i for i, d in enumerate(self.dates())}
        return self._index

    def to_record(self) -> dict[str, Any]:
        """JSON-ready dict (the lookup cache is left out)."""
        record = {
            f.name: _plain(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if not f.name.startswith("_")
        }
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> World:
        """Inverse of :meth:`to_record`."""

        def tuples(rows: list[list[Any]]) -> list[list[Interval]]:
            return [[(int(a), int(b)) for a, b in day] for day in rows]

        return cls(
            seed=int(record["seed"]),
            first_date=record["first_date"],
            n_dates=int(record["n_dates"]),
            cities=[
                City(**{**c, "coords": [tuple(p) for p in c["coords"]]}) for c in record["cities"]
            ],
            hotels=[Hotel(**h) for h in record["hotels"]],
            restaurants=[
                Restaurant(**{**r, "hours": tuples(r["hours"])}) for r in record["restaurants"]
            ],
            attractions=[
                Attraction(**{**a, "hours": tuples(a["hours"])}) for a in record["attractions"]
            ],
            links=[Link(**x) for x in record["links"]],
        )


Venue = Restaurant | Attraction


def open_intervals(venue: Venue, date: str) -> list[Interval]:
    """The venue's open intervals on ``date`` ([] when closed that day)."""
    if date in venue.closures:
        return []
    return list(venue.hours[weekday(date)])


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """Dataclasses/tuples -> JSON-ready dicts and lists (public for other modules)."""
    return _plain(value)
