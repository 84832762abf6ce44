"""``-T agent=browse``: a scripted, text-only browsing reference agent (no LLM).

Why: the crawler yardstick reads the rendered files directly; this agent reaches every
fact only through the BrowserGym-style browser tools, the way a model must: from the home
page to the scenario's city pages, through the paginated listings to every hotel,
restaurant and attraction, expanding collapsed sections with ``click(bid)``, into rate,
policy and calendar pages, and through the transport index to each departure. It reads
the accessibility tree (so it sees text and CSS-generated labels: layout facts) but never
looks at an image: image-only facts get the crawler's optimistic guesses (0 travel
minutes, walk-in entries, no closures on drawn calendars, 0-priced charted rooms,
00:00/23:59 desk hours, no booking lead). It is therefore the text-only ceiling of a
perfect planner, and it should fail on image facts exactly as the HTML crawler does.
It then plans with the exact CP-SAT solver on what it read, using the scenario's formal
constraints (the planning half is perfect by construction, so every failure is
perception). Pages visited and steps go to the sample metadata (``browse``).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool

from environments.worldtravel.model import (
    MODES,
    WEEKDAYS,
    Attraction,
    City,
    Hotel,
    Link,
    Restaurant,
    World,
    parse_hhmm,
)
from environments.worldtravel.site.crawler import (
    UNKNOWN_CHECK_IN,
    UNKNOWN_CHECK_OUT,
    UNKNOWN_PRICE,
    crawler_plan,
    read_int,
    read_spans,
)
from environments.worldtravel.store import scenario_index, shipped_world
from harness.browser import browsergym_tools
from harness.inspect_compat import registry_info_name

_LINE = re.compile(r"^(\t*)(?:\[(\d+)\] )?(\S+)(?: '((?:[^'\\]|\\.)*)')?(.*)$")
_PROP = re.compile(r", (\w+)=(?:'((?:[^'\\]|\\.)*)'|(\S+?))(?=,|$)")


@dataclass
class Node:
    """One line of the accessibility-tree observation."""

    depth: int
    bid: str | None
    role: str
    name: str
    props: dict[str, str]


def parse_tree(text: str) -> list[Node]:
    """The observation's tree lines as nodes (header lines before the tree are skipped)."""
    body = text.split("# Accessibility tree (act on [bid]s)\n", 1)[-1]
    nodes = []
    for line in body.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        props = {k: q or b for k, q, b in _PROP.findall(m.group(5))}
        name = (m.group(4) or "").replace("\\'", "'").replace("\\\\", "\\")
        nodes.append(Node(len(m.group(1)), m.group(2), m.group(3), name, props))
    return nodes


@dataclass
class PageView:
    """Helpers over one observation."""

    url: str
    nodes: list[Node]

    def links(self) -> list[Node]:
        return [n for n in self.nodes if n.role == "link"]

    def link(self, name: str) -> Node | None:
        return next((n for n in self.links() if n.name == name), None)

    def terms(self) -> dict[str, str]:
        out, term = {}, None
        for n in self.nodes:
            if n.role == "term":
                term = n.name
            elif n.role == "definition" and term is not None:
                out[term] = n.name
                term = None
        return out

    def texts(self) -> list[str]:
        return [n.name for n in self.nodes if n.role == "StaticText"]

    def rows(self) -> list[list[Node]]:
        """Table rows: the cells/headers under each ``row`` line."""
        out: list[list[Node]] = []
        current: list[Node] | None = None
        depth = -1
        for n in self.nodes:
            if n.role == "row":
                current, depth = [], n.depth
                out.append(current)
            elif current is not None and n.depth == depth + 1 and n.role in (
                "cell", "columnheader"
            ):
                current.append(n)
            elif current is not None and n.depth <= depth:
                current = None
        return out


@dataclass
class Browser:
    """Calls the BrowserGym tools and keeps count of steps and pages."""

    tools: dict[str, Tool]
    steps: int = 0
    visited: set[str] = field(default_factory=set)
    actions: dict[str, int] = field(default_factory=dict)

    async def act(self, name: str, **args: Any) -> PageView:
        self.steps += 1
        self.actions[name] = self.actions.get(name, 0) + 1
        text = str(await self.tools[name](**args))
        url = text.split("\n", 1)[0].removeprefix("URL: ").strip()
        self.visited.add(url.split("#")[0])
        if "Last action error:" in text:
            raise RuntimeError(text.split("Last action error:", 1)[1].splitlines()[0])
        return PageView(url, parse_tree(text))

    async def goto(self, url: str) -> PageView:
        return await self.act("goto", url=url)

    async def click(self, node: Node) -> PageView:
        return await self.act("click", bid=node.bid)


class Reader:
    """Walks the site for one scenario and collects the records it can read."""

    def __init__(self, browser: Browser, cities: list[str]) -> None:
        self.b = browser
        self.want = set(cities)
        self.cities: list[City] = []
        self.hotels: list[Hotel] = []
        self.restaurants: list[Restaurant] = []
        self.attractions: list[Attraction] = []
        self.links: list[Link] = []
        self.names: dict[str, str] = {}

    async def run(self) -> None:
        home = await self.b.act("noop")
        for city_link in [n for n in home.links() if n.props.get("url", "").startswith("/city/")]:
            page = await self.b.goto(city_link.props["url"])
            terms = page.terms()
            if terms.get("City code") in self.want:
                self.names[terms["City code"]] = city_link.name
                await self.city(page, terms, city_link.name)
        if len(self.want) > 1:
            await self.transport()

    async def listing(self, start: str) -> list[str]:
        """Every detail URL of a listing, following its Next links."""
        page = await self.b.goto(start)
        urls: list[str] = []
        while True:
            urls += [n.props["url"] for n in page.links()
                         if re.match(r"^/(hotel|restaurant|attraction)/[0-9a-f]+\.html$",
                                     n.props.get("url", ""))]
            nxt = page.link("Next →")
            if nxt is None:
                break
            page = await self.b.click(nxt)
        return list(dict.fromkeys(urls))

    async def city(self, page: PageView, terms: dict[str, str], name: str) -> None:
        cid = terms["City code"]
        by_name = {n.name: n.props["url"] for n in page.links()}
        hotels = await self.listing(by_name["Hotels"])
        restaurants = await self.listing(by_name["Restaurants"])
        attractions = await self.listing(by_name["Attractions"])
        for url in hotels:
            self.hotels.append(await self.hotel(url, cid))
        for url in restaurants:
            self.restaurants.append(cast(Restaurant, await self.venue(url, cid, "restaurant")))
        for url in attractions:
            self.attractions.append(cast(Attraction, await self.venue(url, cid, "attraction")))
        station = terms["Main station"]
        ids = [h.id for h in self.hotels if h.city == cid]
        ids += [r.id for r in self.restaurants if r.city == cid]
        ids += [a.id for a in self.attractions if a.city == cid]
        nodes = [*ids, station]
        n = len(nodes)
        self.cities.append(City(
            id=cid, name=name, description="",
            size_km=0.0, price_level=1.0, transit_fare=read_int(terms["Transit fare"]),
            station=station, coords=[(0.0, 0.0)] * n, nodes=nodes,
            times={m: [[0] * n for _ in range(n)] for m in MODES},  # image-only: unseen
            taxi_fares=[[0] * n for _ in range(n)],
        ))

    async def hotel(self, url: str, cid: str) -> Hotel:
        page = await self.b.goto(url)
        t = page.terms()
        texts = page.texts()
        prices: dict[str, list[int]] = {}
        policy_url = None
        for link in page.links():
            target = link.props.get("url", "")
            if "/rates-" in target:
                room = target.rsplit("rates-", 1)[1].removesuffix(".html")
                rates = await self.b.goto(target)
                by_date = {}
                for row in rates.rows():
                    for cell in row:
                        bits = cell.name.split()
                        if len(bits) == 2 and bits[1].isdigit():
                            by_date[bits[0]] = int(bits[1])
                n_dates = shipped_world().n_dates
                dates = sorted(by_date)
                prices[room] = ([by_date[d] for d in dates] if len(dates) == n_dates
                                else [UNKNOWN_PRICE] * n_dates)
            elif target.endswith("/policy.html"):
                policy_url = target
        cancellation = ""
        if policy_url:
            policy = await self.b.goto(policy_url)
            words = policy.texts()
            if "Cancellation policy:" in words:
                cancellation = words[words.index("Cancellation policy:") + 1]
        check_in = parse_hhmm(t.get("Check-in from"))
        check_out = parse_hhmm(t.get("Check-out by"))
        return Hotel(
            id=t["ID"], city=cid, name="", rating=float(t["Guest rating"]),
            stars=read_int(t["Stars"]),
            location=0,
            check_in=UNKNOWN_CHECK_IN if check_in is None else check_in,
            check_out=UNKNOWN_CHECK_OUT if check_out is None else check_out,
            pets="No pets" not in texts, smoking="Smoking rooms" in texts,
            min_nights=read_int(t["Minimum stay"]), cancellation=cancellation, prices=prices,
        )

    async def venue(self, url: str, cid: str, kind: str) -> Restaurant | Attraction:
        page = await self.b.goto(url)
        t = page.terms()
        summaries = [n for n in page.nodes if n.role == "button" and "expanded" in n.props]
        hours_button = next((n for n in summaries if n.name == "Opening hours"), None)
        if hours_button is not None and hours_button.props["expanded"] == "False":
            page = await self.b.click(hours_button)
        rows = {r[0].name: r[1].name for r in page.rows() if len(r) == 2}
        hours = [read_spans(rows.get(d, "closed")) for d in WEEKDAYS]
        calendar = next(n.props["url"] for n in page.links() if n.name == "Calendar")
        closures = []
        cal = await self.b.goto(calendar)
        for row in cal.rows():
            for cell in row:
                bits = cell.name.split()
                if len(bits) == 2 and bits[1] == "closed":
                    closures.append(bits[0])
        if kind == "restaurant":
            meal = next((s for s in page.texts() if "meal takes" in s), "")
            return Restaurant(
                id=t["ID"], city=cid, name="", cuisine=t["Cuisine"], rating=float(t["Rating"]),
                price_band=len(t.get("Price band", "")), price=read_int(t["Price per person"]),
                location=0, hours=hours, meal_minutes=read_int(meal), reservation=False,
                seatings=[], closures=closures,  # seatings are a drawn grid: unseen
            )
        lead = t.get("Book ahead", "")
        return Attraction(
            id=t["ID"], city=cid, name="", category=t["Category"], rating=float(t["Rating"]),
            price=read_int(t["Ticket"]), location=0, hours=hours,
            visit_minutes=read_int(t["Visit length"]), timed_entry=[],  # a drawn grid: unseen
            booking_lead_days=read_int(lead) if re.search(r"\d", lead) else 0, closures=closures,
        )

    async def transport(self) -> None:
        index = await self.b.goto("/transport/index.html")
        names = [self.names[c] for c in sorted(self.want)]
        for link in index.links():
            ends = link.name.split(" → ")
            if len(ends) == 2 and set(ends) <= set(names):
                route = await self.b.goto(link.props["url"])
                for dep in route.links():
                    if dep.props.get("url", "").startswith("/link/"):
                        self.links.append(await self.departure(dep.props["url"]))

    async def departure(self, url: str) -> Link:
        page = await self.b.goto(url)
        t = page.terms()
        rows = page.rows()
        fares = [r for r in rows if len(r) == 3 and r[0].role == "cell"]
        runs = next((r for r in rows if r and r[0].role == "cell" and len(r) == 7), [])
        return Link(
            id=t["ID"], mode=t["Mode"], operator=t["Operator"], origin=t["From"],
            destination=t["To"], depart=parse_hhmm(t["Departs"]) or 0,
            arrive=parse_hhmm(t["Arrives"]) or 0,
            weekdays=[c.name == "runs" for c in runs] if runs else [True] * 7,
            prices={r[0].name: int(r[1].name) for r in fares},
            baggage={r[0].name: r[2].name == "included" for r in fares},
        )

    def world(self) -> World:
        w = shipped_world()
        where = {n: i for c in self.cities for i, n in enumerate(c.nodes)}

        def placed(rec: Any) -> Any:
            import dataclasses

            return dataclasses.replace(rec, location=where[rec.id])

        return World(-1, w.first_date, w.n_dates, self.cities,
                     [placed(h) for h in self.hotels], [placed(r) for r in self.restaurants],
                     [placed(a) for a in self.attractions], self.links)


@solver
def browse_agent() -> Solver:
    """Browse the site through the BrowserGym tools, then plan with the exact solver."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        tools = {registry_info_name(t).split("/")[-1]: t for t in browsergym_tools(False)}
        browser = Browser(tools)
        scenario = scenario_index()[str(state.sample_id)]
        reader = Reader(browser, list(scenario.cities))
        error = None
        plan = None
        try:
            await reader.run()
            plan = await asyncio.to_thread(crawler_plan, reader.world(), scenario)
        except Exception as exc:  # noqa: BLE001 - a failed browse delivers no plan, says why
            error = f"{type(exc).__name__}: {exc}"
        text = json.dumps(plan, separators=(",", ":")) if plan is not None else "no plan found"
        state.output = ModelOutput.from_content(model="browse", content=text)
        state.metadata["browse"] = {
            "steps": browser.steps,
            "pages_visited": len(browser.visited),
            "actions": dict(sorted(browser.actions.items())),
            "records_read": len(reader.hotels) + len(reader.restaurants)
            + len(reader.attractions) + len(reader.links),
            "error": error,
        }
        state.completed = True
        return state

    return solve
