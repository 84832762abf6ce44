"""Read-only queries over the world: what the agent's search/detail tools (and later the
rendered site's search pages) return. Results are plain dicts with times as ``HH:MM``;
searches return short summaries, details return the full record, so an agent has to ask
for the facts that matter (hours, timed entries, prices by date)."""

from __future__ import annotations

from typing import Any

from environments.worldtravel.model import (
    WEEKDAYS,
    Attraction,
    City,
    Hotel,
    Link,
    Restaurant,
    World,
    hhmm,
    open_intervals,
    plain,
    weekday,
)

MAX_RESULTS = 20


class QueryError(ValueError):
    """A bad query (unknown city/id, bad date): the message is shown to the agent."""


def _city(world: World, city: str) -> City:
    for c in world.cities:
        if city in (c.id, c.name) or city.lower() == c.name.lower():
            return c
    raise QueryError(
        f"unknown city {city!r}; cities: " + ", ".join(f"{c.id} ({c.name})" for c in world.cities)
    )


def _date(world: World, date: str | None) -> str | None:
    if date in (None, ""):
        return None
    if date not in world.dates():
        raise QueryError(f"date {date!r} outside {world.first_date}..{world.dates()[-1]}")
    return date


def _hours(rows: list[list[tuple[int, int]]]) -> dict[str, str]:
    return {
        WEEKDAYS[i]: (", ".join(f"{hhmm(a)}-{hhmm(b)}" for a, b in day) or "closed")
        for i, day in enumerate(rows)
    }


def list_cities(world: World) -> list[dict[str, Any]]:
    """Every city with its character and station id."""
    return [
        {
            "id": c.id,
            "name": c.name,
            "description": c.description,
            "station": c.station,
            "transit_fare": c.transit_fare,
            "size_km": c.size_km,
        }
        for c in world.cities
    ]


def search_hotels(
    world: World,
    city: str,
    date: str | None = None,
    room: str | None = None,
    max_price: int | None = None,
    min_rating: float | None = None,
) -> list[dict[str, Any]]:
    """Hotels of a city; with ``date`` the nightly prices of that date are shown."""
    c, day = _city(world, city), _date(world, date)
    out = []
    for h in world.hotels:
        if h.city != c.id or (room and room not in h.prices):
            continue
        if min_rating is not None and h.rating < min_rating:
            continue
        index = world.date_index(day) if day else None
        prices = {r: (p[index] if index is not None else min(p)) for r, p in h.prices.items()}
        if max_price is not None and min(prices.values()) > max_price:
            continue
        out.append(
            {
                "id": h.id,
                "name": h.name,
                "rating": h.rating,
                "stars": h.stars,
                ("prices" if day else "prices_from"): prices,
            }
        )
    return out[:MAX_RESULTS]


def _search_venues(
    venues: Any,
    city_id: str,
    day: Any,
    kind_field: str,
    kind: str | None,
    max_price: int | None,
    min_rating: float | None,
) -> list[Any]:
    """Venues of one city matching kind, price, rating and (with ``day``) open that day."""
    out = []
    for v in venues:
        if v.city != city_id or (kind and getattr(v, kind_field) != kind.lower()):
            continue
        if (max_price is not None and v.price > max_price) or (
            min_rating is not None and v.rating < min_rating
        ):
            continue
        if day and not open_intervals(v, day):
            continue
        out.append(v)
        if len(out) == MAX_RESULTS:
            break
    return out


def search_restaurants(
    world: World,
    city: str,
    cuisine: str | None = None,
    date: str | None = None,
    max_price: int | None = None,
    min_rating: float | None = None,
) -> list[dict[str, Any]]:
    """Restaurants of a city; with ``date`` only those open that day."""
    c, day = _city(world, city), _date(world, date)
    found = _search_venues(world.restaurants, c.id, day, "cuisine", cuisine, max_price,
                           min_rating)
    return [{"id": r.id, "name": r.name, "cuisine": r.cuisine, "rating": r.rating,
             "price_per_person": r.price} for r in found]


def search_attractions(
    world: World,
    city: str,
    category: str | None = None,
    date: str | None = None,
    max_price: int | None = None,
    min_rating: float | None = None,
) -> list[dict[str, Any]]:
    """Attractions of a city; with ``date`` only those open that day."""
    c, day = _city(world, city), _date(world, date)
    found = _search_venues(world.attractions, c.id, day, "category", category, max_price,
                           min_rating)
    return [{"id": a.id, "name": a.name, "category": a.category, "rating": a.rating,
             "ticket": a.price} for a in found]


def search_transport(
    world: World, origin: str, destination: str, date: str | None = None, mode: str | None = None
) -> list[dict[str, Any]]:
    """Inter-city departures (running on ``date`` when given)."""
    a, b, day = _city(world, origin), _city(world, destination), _date(world, date)
    out = []
    for x in world.links:
        if (x.origin, x.destination) != (a.id, b.id) or (mode and x.mode != mode):
            continue
        if day and not x.weekdays[weekday(day)]:
            continue
        out.append(
            {
                "id": x.id,
                "mode": x.mode,
                "depart": hhmm(x.depart),
                "arrive": hhmm(x.arrive),
                "prices": x.prices,
            }
        )
    return out


def details(world: World, item_id: str) -> dict[str, Any]:
    """The full record of a hotel, restaurant, attraction, link or city."""
    rec = world.get(item_id)
    if rec is None:
        raise QueryError(f"unknown id {item_id!r}")
    if isinstance(rec, City):
        return {k: v for k, v in plain(rec).items() if k not in ("times", "taxi_fares", "coords")}
    out: dict[str, Any] = plain(rec)
    if isinstance(rec, Attraction | Restaurant):
        out["hours"] = _hours(rec.hours)
        out.pop("location", None)
        key = "timed_entry" if isinstance(rec, Attraction) else "seatings"
        out[key] = [hhmm(t) for t in getattr(rec, key)]
    if isinstance(rec, Hotel):
        out.pop("location", None)
        out["check_in"], out["check_out"] = hhmm(rec.check_in), hhmm(rec.check_out)
        out["prices"] = {r: dict(zip(world.dates(), p, strict=True)) for r, p in rec.prices.items()}
    if isinstance(rec, Link):
        out["depart"], out["arrive"] = hhmm(rec.depart), hhmm(rec.arrive)
        out["weekdays"] = [WEEKDAYS[i] for i, on in enumerate(rec.weekdays) if on]
    if isinstance(rec, Restaurant):
        out["meal_minutes"] = rec.meal_minutes
    return out


def travel(world: World, origin: str, destination: str) -> dict[str, Any]:
    """Minutes and price by mode between two places of one city (ids or station ids)."""
    for c in world.cities:
        a, b = world.node(c.id, origin), world.node(c.id, destination)
        if a is not None and b is not None:
            return {
                m: {
                    "minutes": c.times[m][a][b],
                    "price": (
                        0
                        if m == "walk"
                        else c.transit_fare
                        if m == "transit"
                        else c.taxi_fares[a][b]
                    ),
                    "price_note": ("per person" if m == "transit" else "per ride"),
                }
                for m in ("walk", "transit", "taxi")
            }
    raise QueryError(f"{origin!r} and {destination!r} are not two places of one city")
