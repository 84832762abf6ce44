"""Search and detail tools over the world: the only way the agent learns the facts.

Each tool is a plain function call into ``environments.worldtravel.queries`` (no
subprocess), returning JSON text; bad queries come back as tool errors the model can read.
The tools are stateless, so the number of calls is read from the transcript by the scorer.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.tool import Tool, ToolError, tool

from environments.worldtravel import queries
from environments.worldtravel.model import World
from environments.worldtravel.store import shipped_world

TOOL_NAMES = (
    "list_cities",
    "search_hotels",
    "search_restaurants",
    "search_attractions",
    "search_transport",
    "get_details",
    "travel_options",
)


def _run(fn: Any, *args: Any, **kwargs: Any) -> str:
    try:
        return json.dumps(fn(*args, **kwargs), separators=(",", ":"))
    except queries.QueryError as exc:
        raise ToolError(str(exc)) from exc


@tool
def list_cities(world: World | None = None) -> Tool:
    w = world or shipped_world()

    async def execute() -> str:
        """List the cities with their ids, stations and transit fares.

        Returns:
            JSON list of cities.
        """
        return _run(queries.list_cities, w)

    return execute


@tool
def search_hotels(world: World | None = None) -> Tool:
    w = world or shipped_world()

    async def execute(
        city: str, date: str = "", room: str = "", max_price: int = 0, min_rating: float = 0.0
    ) -> str:
        """Search hotels in a city.

        Args:
            city: City id or name.
            date: Optional ISO date (YYYY-MM-DD): show that night's prices.
            room: Optional room type (single, double, suite).
            max_price: Optional maximum nightly price (0 = any).
            min_rating: Optional minimum rating (0 = any).

        Returns:
            JSON list of hotel summaries; use get_details for rules and times.
        """
        return _run(
            queries.search_hotels,
            w,
            city,
            date or None,
            room or None,
            max_price or None,
            min_rating or None,
        )

    return execute


@tool
def search_restaurants(world: World | None = None) -> Tool:
    w = world or shipped_world()

    async def execute(
        city: str, cuisine: str = "", date: str = "", max_price: int = 0, min_rating: float = 0.0
    ) -> str:
        """Search restaurants in a city.

        Args:
            city: City id or name.
            cuisine: Optional cuisine (italian, japanese, local, indian, vegetarian,
                seafood, french, mexican).
            date: Optional ISO date: only restaurants open that day.
            max_price: Optional maximum price per person (0 = any).
            min_rating: Optional minimum rating (0 = any).

        Returns:
            JSON list of restaurant summaries; use get_details for hours and seatings.
        """
        return _run(
            queries.search_restaurants,
            w,
            city,
            cuisine or None,
            date or None,
            max_price or None,
            min_rating or None,
        )

    return execute


@tool
def search_attractions(world: World | None = None) -> Tool:
    w = world or shipped_world()

    async def execute(
        city: str, category: str = "", date: str = "", max_price: int = 0, min_rating: float = 0.0
    ) -> str:
        """Search attractions in a city.

        Args:
            city: City id or name.
            category: Optional category (museum, park, landmark, gallery, tour, market).
            date: Optional ISO date: only attractions open that day.
            max_price: Optional maximum ticket price (0 = any).
            min_rating: Optional minimum rating (0 = any).

        Returns:
            JSON list of attraction summaries; use get_details for hours and entries.
        """
        return _run(
            queries.search_attractions,
            w,
            city,
            category or None,
            date or None,
            max_price or None,
            min_rating or None,
        )

    return execute


@tool
def search_transport(world: World | None = None) -> Tool:
    w = world or shipped_world()

    async def execute(origin: str, destination: str, date: str = "", mode: str = "") -> str:
        """Search inter-city departures (flights, trains, buses).

        Args:
            origin: Origin city id or name.
            destination: Destination city id or name.
            date: Optional ISO date: only departures running that day.
            mode: Optional mode (flight, train, bus).

        Returns:
            JSON list of departures with times and fares per class.
        """
        return _run(queries.search_transport, w, origin, destination, date or None, mode or None)

    return execute


@tool
def get_details(world: World | None = None) -> Tool:
    w = world or shipped_world()

    async def execute(id: str) -> str:
        """Full details of a hotel, restaurant, attraction, link or city.

        Args:
            id: The item id (e.g. AVA-H03, AVA-R07, AVA-A05, TR-AVA-BRI-1400, AVA).

        Returns:
            JSON record: opening hours per weekday, closures, durations, timed entries or
            seatings, prices (hotels: per date), rules.
        """
        return _run(queries.details, w, id)

    return execute


@tool
def travel_options(world: World | None = None) -> Tool:
    w = world or shipped_world()

    async def execute(origin: str, destination: str) -> str:
        """Travel time and price between two places in the same city, by mode.

        Args:
            origin: Place id (hotel, restaurant, attraction or station such as AVA-ST).
            destination: Place id in the same city.

        Returns:
            JSON {walk|transit|taxi: {minutes, price}}.
        """
        return _run(queries.travel, w, origin, destination)

    return execute


def world_tools(world: World | None = None) -> list[Tool]:
    """Every search/detail tool, bound to ``world`` (default: the shipped world)."""
    return [
        list_cities(world),
        search_hotels(world),
        search_restaurants(world),
        search_attractions(world),
        search_transport(world),
        get_details(world),
        travel_options(world),
    ]
