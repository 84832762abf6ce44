"""Seeded generator of the five-city world.

Why generated: no data of the original benchmark is public, and a generated world is
internally consistent by construction (travel times derive from coordinates, prices from a
city's price level), reproducible byte for byte from a seed, and free to redistribute.
Each city has its own character (size, transit speed, taxi rates, price level), so the
same request is easy in one city and tight in another.
"""

from __future__ import annotations

import math

import numpy as np

from environments.worldtravel.model import (
    CATEGORIES,
    CUISINES,
    LINK_MODES,
    MODES,
    ROOMS,
    Attraction,
    City,
    Hotel,
    Interval,
    Link,
    Restaurant,
    World,
    add_days,
    weekday,
)

FIRST_DATE = "2026-06-01"
N_DATES = 35
N_HOTELS = 8
N_RESTAURANTS = 16
N_ATTRACTIONS = 16

# id, name, size (km across), transit km/h, transit wait, taxi base, taxi per km, price level
CITY_SPECS: tuple[tuple[str, str, float, float, int, int, float, float, str], ...] = (
    ("AVA", "Avalon", 12.0, 28.0, 8, 4, 1.8, 1.3, "a sprawling capital with a fast metro"),
    ("BRI", "Brisa", 5.0, 16.0, 6, 3, 1.2, 0.9, "a compact harbour town of trams"),
    ("COR", "Corvo", 8.0, 20.0, 10, 5, 2.2, 1.5, "an expensive old city with slow buses"),
    ("DUN", "Dunmere", 6.0, 18.0, 7, 2, 1.0, 0.7, "a cheap university town"),
    ("EST", "Estoria", 10.0, 24.0, 9, 4, 1.6, 1.1, "a river city spread over two banks"),
)
WALK_KMH = 4.8
TAXI_KMH = 26.0
ROUTE_FACTOR = 1.3  # street distance / straight-line distance


def _round5(minutes: float) -> int:
    return int(5 * round(minutes / 5))


def _rating(rng: np.random.Generator) -> float:
    return float(round(min(5.0, max(2.5, rng.normal(4.0, 0.45))), 1))


def _name(rng: np.random.Generator, stems: tuple[str, ...], suffix: str) -> str:
    return f"{stems[int(rng.integers(len(stems)))]} {suffix}"


_STEMS = (
    "Aurora",
    "Birch",
    "Cedar",
    "Delta",
    "Ember",
    "Falcon",
    "Garnet",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Linden",
    "Marble",
    "Nova",
    "Olive",
    "Pioneer",
    "Quill",
    "Rowan",
    "Saffron",
    "Tidal",
    "Umber",
    "Violet",
    "Willow",
    "Zephyr",
)


def _hotels(
    rng: np.random.Generator, cid: str, level: float, locs: range, dates: list[str]
) -> list[Hotel]:
    hotels = []
    for k, loc in enumerate(locs):
        stars = int(rng.integers(2, 6))
        base = (35 + 28 * stars) * level * rng.uniform(0.85, 1.2)
        offered = [
            r for r in ROOMS if rng.random() < (0.85 if r != "suite" else 0.2 + 0.15 * stars)
        ]
        offered = offered or ["double"]
        weekend = rng.uniform(1.1, 1.4)
        prices: dict[str, list[int]] = {}
        for room in offered:
            mult = {"single": 0.8, "double": 1.0, "suite": 1.9}[room]
            noise = rng.uniform(0.92, 1.08, size=len(dates))
            prices[room] = [
                int(round(base * mult * (weekend if weekday(d) in (4, 5) else 1.0) * noise[i]))
                for i, d in enumerate(dates)
            ]
        hotels.append(
            Hotel(
                id=f"{cid}-H{k:02d}",
                city=cid,
                name=_name(rng, _STEMS, "Hotel"),
                rating=_rating(rng),
                stars=stars,
                location=loc,
                check_in=int(rng.choice([14 * 60, 15 * 60, 16 * 60, 17 * 60])),
                check_out=int(rng.choice([10 * 60, 11 * 60, 12 * 60])),
                pets=bool(rng.random() < 0.4),
                smoking=bool(rng.random() < 0.25),
                min_nights=int(rng.choice([1, 1, 1, 2])),
                cancellation=str(rng.choice(["free", "non-refundable"])),
                prices=prices,
            )
        )
    return hotels


def _closures(rng: np.random.Generator, dates: list[str], p: float) -> list[str]:
    return sorted(d for d in dates if rng.random() < p)


def _restaurants(
    rng: np.random.Generator, cid: str, level: float, locs: range, dates: list[str]
) -> list[Restaurant]:
    out = []
    for k, loc in enumerate(locs):
        band = int(rng.integers(1, 5))
        split = rng.random() < 0.6
        lunch_open = _round5(rng.uniform(11 * 60, 12 * 60 + 30))
        if split:
            services: list[Interval] = [
                (lunch_open, _round5(rng.uniform(14 * 60 + 30, 16 * 60))),
                (
                    _round5(rng.uniform(17 * 60 + 30, 19 * 60)),
                    _round5(rng.uniform(22 * 60, 23 * 60 + 30)),
                ),
            ]
        else:
            services = [(lunch_open, _round5(rng.uniform(21 * 60, 23 * 60 + 30)))]
        closed_day = int(rng.integers(7)) if rng.random() < 0.6 else -1
        hours = [[] if wd == closed_day else list(services) for wd in range(7)]
        reservation = bool(rng.random() < 0.35)
        seatings: list[int] = []
        if reservation:
            for a, b in services:
                seatings += list(range(a + 30, b - 60, int(rng.choice([30, 45, 60]))))
        out.append(
            Restaurant(
                id=f"{cid}-R{k:02d}",
                city=cid,
                name=_name(rng, _STEMS, "Kitchen"),
                cuisine=str(CUISINES[int(rng.integers(len(CUISINES)))]),
                rating=_rating(rng),
                price_band=band,
                price=int(round((8 + 14 * band) * level * rng.uniform(0.85, 1.2))),
                location=loc,
                hours=hours,
                meal_minutes=int(rng.choice([45, 60, 60, 75, 90])),
                reservation=reservation,
                seatings=sorted(set(seatings)),
                closures=_closures(rng, dates, 0.03),
            )
        )
    return out


def _attractions(
    rng: np.random.Generator, cid: str, level: float, locs: range, dates: list[str]
) -> list[Attraction]:
    out = []
    for k, loc in enumerate(locs):
        category = str(
            CATEGORIES[k % len(CATEGORIES)]
            if k < len(CATEGORIES)
            else CATEGORIES[int(rng.integers(len(CATEGORIES)))]
        )
        if category == "park":
            hours_one: Interval = (
                _round5(rng.uniform(6 * 60, 8 * 60)),
                _round5(rng.uniform(19 * 60, 22 * 60)),
            )
            price = 0 if rng.random() < 0.7 else int(round(5 * level))
        elif category == "market":
            hours_one = (
                _round5(rng.uniform(7 * 60, 9 * 60)),
                _round5(rng.uniform(13 * 60, 18 * 60)),
            )
            price = 0
        else:
            hours_one = (
                _round5(rng.uniform(9 * 60, 11 * 60)),
                _round5(rng.uniform(16 * 60 + 30, 20 * 60)),
            )
            price = int(round(rng.uniform(8, 35) * level))
        closed_day = (
            int(rng.integers(7))
            if (category in ("museum", "gallery") or rng.random() < 0.3)
            else -1
        )
        hours = [[] if wd == closed_day else [hours_one] for wd in range(7)]
        visit = int(rng.choice([45, 60, 90, 120, 150, 180]))
        timed: list[int] = []
        if category in ("museum", "tour", "gallery", "landmark") and rng.random() < 0.5:
            step = int(rng.choice([30, 60, 90]))
            timed = list(range(hours_one[0], hours_one[1] - visit + 1, step))
        out.append(
            Attraction(
                id=f"{cid}-A{k:02d}",
                city=cid,
                name=_name(rng, _STEMS, category.title()),
                category=category,
                rating=_rating(rng),
                price=price,
                location=loc,
                hours=hours,
                visit_minutes=visit,
                timed_entry=timed,
                booking_lead_days=int(rng.choice([0, 0, 1, 2, 3])) if timed else 0,
                closures=_closures(rng, dates, 0.04),
            )
        )
    return out


def _city(
    rng: np.random.Generator,
    spec: tuple[str, str, float, float, int, int, float, float, str],
    dates: list[str],
) -> tuple[City, list[Hotel], list[Restaurant], list[Attraction]]:
    cid, name, size, transit_kmh, wait, taxi_base, taxi_km, level, description = spec
    n = N_HOTELS + N_RESTAURANTS + N_ATTRACTIONS + 1
    # a dense centre and a looser periphery
    radius = size / 2 * np.sqrt(rng.uniform(0, 1, size=n))
    angle = rng.uniform(0, 2 * math.pi, size=n)
    xy = np.round(np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1), 2)
    xy[-1] = (0.0, 0.0)  # the central station
    hotels = _hotels(rng, cid, level, range(0, N_HOTELS), dates)
    r0 = N_HOTELS
    restaurants = _restaurants(rng, cid, level, range(r0, r0 + N_RESTAURANTS), dates)
    a0 = r0 + N_RESTAURANTS
    attractions = _attractions(rng, cid, level, range(a0, a0 + N_ATTRACTIONS), dates)
    station = f"{cid}-ST"
    nodes = [h.id for h in hotels] + [r.id for r in restaurants] + [a.id for a in attractions]
    nodes.append(station)
    km = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1)) * ROUTE_FACTOR
    off = km > 0
    walk = np.where(off, np.ceil(km / WALK_KMH * 60), 0)
    transit = np.where(off, wait + np.ceil(km / transit_kmh * 60) + 4, 0)
    taxi = np.where(off, 3 + np.ceil(km / TAXI_KMH * 60), 0)
    fares = np.where(off, np.round(taxi_base + taxi_km * km * level + 2), 0)
    times = {m: t.astype(int).tolist() for m, t in zip(MODES, (walk, transit, taxi), strict=True)}
    city = City(
        id=cid,
        name=name,
        description=description,
        size_km=size,
        price_level=level,
        transit_fare=int(round(2 * level + 0.5)),
        station=station,
        coords=[(float(x), float(y)) for x, y in xy],
        nodes=nodes,
        times=times,
        taxi_fares=fares.astype(int).tolist(),
    )
    return city, hotels, restaurants, attractions


def _links(rng: np.random.Generator, cities: list[City]) -> list[Link]:
    pos = {c.id: (i % 3, i // 3) for i, c in enumerate(cities)}  # a rough map, 120 km cells
    links = []
    for a in cities:
        for b in cities:
            if a.id == b.id:
                continue
            (ax, ay), (bx, by) = pos[a.id], pos[b.id]
            km = 120 * math.hypot(ax - bx, ay - by) + 60
            for mode in LINK_MODES:
                if mode == "flight" and km < 170:
                    continue
                speed, fixed, per_km = {
                    "flight": (500, 50, 0.35),
                    "train": (110, 10, 0.22),
                    "bus": (70, 10, 0.1),
                }[mode]
                duration = _round5(fixed + km / speed * 60)
                departures = sorted(
                    {
                        _round5(rng.uniform(6 * 60, 23 * 60 - duration))
                        for _ in range(int(rng.integers(3, 6)))
                    }
                )
                base = fixed * 0.3 + per_km * km
                for dep in departures:
                    days = [bool(rng.random() < 0.9) for _ in range(7)]
                    days[int(rng.integers(7))] = True
                    eco = int(round(base * rng.uniform(0.8, 1.3)))
                    links.append(
                        Link(
                            id=f"{mode[:2].upper()}-{a.id}-{b.id}-{dep // 60:02d}{dep % 60:02d}",
                            mode=mode,
                            operator=f"{_STEMS[int(rng.integers(len(_STEMS)))]} {mode.title()}s",
                            origin=a.id,
                            destination=b.id,
                            depart=dep,
                            arrive=dep + duration,
                            weekdays=days,
                            prices={"economy": eco, "business": int(round(eco * 2.2))},
                            baggage={"economy": mode != "flight", "business": True},
                        )
                    )
    return links


def generate_world(seed: int = 0) -> World:
    """The world for ``seed``: same seed, same world, field for field."""
    rng = np.random.default_rng([seed, 7919])
    dates = [add_days(FIRST_DATE, i) for i in range(N_DATES)]
    cities, hotels, restaurants, attractions = [], [], [], []
    for spec in CITY_SPECS:
        city, h, r, a = _city(rng, spec, dates)
        cities.append(city)
        hotels += h
        restaurants += r
        attractions += a
    return World(
        seed=seed,
        first_date=FIRST_DATE,
        n_dates=N_DATES,
        cities=cities,
        hotels=hotels,
        restaurants=restaurants,
        attractions=attractions,
        links=_links(rng, cities),
    )
