"""No response ever shows a person a bee the rules hide from them, over many random online games.

Until a game ends, each person may see their own hand, tap and pick, and what is public (stems,
revealed picks, landings, stems taken); never another seat's hand, nor another seat's tapped or
confirmed bee before the picks are revealed. After the end everything is published.

The test knows the truth: after every request that changes a game it asks each person for their
own view, so it knows every person's current hand, tap and pick. Every response (views, tables,
logs, the lobby, move results, seat/start/leave results) is then checked against it: a bee that
is another person's, and still hidden, must not appear in any field that carries a bee. The
shapes are checked too (one hand, the caller's; seats carry no bee; others' deal, taps and picks
null in the log). When a game is over, every log page each person was shown before the end, and
one Server-Sent Events stream per game, must equal the final log as redaction would show it to
that seat: the final log is the truth, bee players' hands included.

Every choice the test makes is seeded (random.Random; SWARM_LEAK_SEED picks another run), and a
failure names the table, the seed and the game id. The deals themselves come from the server's
fair-deal scheme, whose transcript includes the (random) game id, so a test cannot replay one:
read the failing game's log (it is kept for ever) to see its deal.
"""

from __future__ import annotations

import asyncio
import copy
import os
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.e2e.api_client import Api
from tests.e2e.test_online_streams import StreamFollower, following
from tests.e2e.test_streams import TIMEOUT, _serve

SEED = int(os.environ.get("SWARM_LEAK_SEED", "1729"))  # another seed explores other games
GAMES = int(os.environ.get("SWARM_LEAK_GAMES", "12"))  # `make leaks` runs more
# seconds: a bound, so a bug fails rather than hangs. 12 games take about 60 s on a quiet
# machine; at a load of 16 on 2 cores (a CI clone beside six busy helpers) they took over 156 s.
OVERALL = 120 + 25 * GAMES
UNTIMED = {"turn_seconds": 600, "choice_seconds": 600}

# Keys whose values (ints, or lists of ints) are bees. A dict inside resets the context, so a
# stem's number, a seat number or a count (`bees_taken`, a cost's `bees`) is never read as one.
BEE_KEYS = {"hand", "hands", "bee", "bees", "tapped", "confirmed", "taken", "takes", "stems"}
BEE_KEYS |= {"deck_order", "pile"}
NOT_BEES = {"costs"}  # StemCost.bees is a count
HIDDEN_UNTIL_THE_END = {"bee_tapped", "pick_confirmed"}
ONLY_AFTER_THE_END = {"deal_revealed"}
# Every field a seat (of a game view or a table) may have. A new one must carry no bee: add it
# here once it is clear it cannot show a hidden one.
SEAT_KEYS_WITHOUT_BEES = {"seat", "name", "kind", "stings", "bees_taken", "status", "player_id"}
# A seat's pile holds only bees that were revealed and flew onto a stem before it took them:
# public, never a hidden bee. (`bees_in` still checks them against every hidden hand.)
SEAT_KEYS_WITHOUT_BEES |= {"pile", "pile_stings"}
SEAT_KEYS_WITHOUT_BEES |= {"level"}  # a bee player's level: "heuristic" or "strong", never a bee


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[str]:
    """Real HTTP for every request: litestar's AsyncTestClient runs the app through a blocking
    portal, which would stall the stream follower's task until the game is over."""
    yield from _serve(database_url, heartbeat=60)


def bees_in(value: Any, bee_field: bool = False) -> set[int]:
    """Every bee a JSON document shows, in any field that carries bees."""
    found: set[int] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            if key not in NOT_BEES:
                found |= bees_in(inner, key in BEE_KEYS)
    elif isinstance(value, list):
        for inner in value:
            found |= bees_in(inner, bee_field)
    elif bee_field and isinstance(value, int) and not isinstance(value, bool):
        found.add(value)
    return found


def redacted(event: dict[str, Any], me: int) -> dict[str, Any]:
    """A final-log event as `me` must have seen it before the end (service.domain.views' rules)."""
    event = copy.deepcopy(event)
    data = event["data"]
    if event["type"] == "game_started":
        data["hands"] = [
            hand if seat == me else None for seat, hand in enumerate(data["hands"], start=1)
        ]
    elif event["type"] in HIDDEN_UNTIL_THE_END and data["seat"] != me:
        data["bee"] = None
        if event["type"] == "pick_confirmed":
            data["by_clock"] = None  # how the clock played says something of the hand
    return event


@dataclass
class Seen:
    """What one person holds, from their own view."""

    hand: list[int]
    tapped: int | None
    confirmed: int | None

    @property
    def bees(self) -> set[int]:
        return {*self.hand, *(b for b in (self.tapped, self.confirmed) if b is not None)}


@dataclass
class Game:
    game_id: str
    table_id: str
    seats: dict[int, Api]  # the people dealt in, by seat
    label: str
    truth: dict[int, Seen] = field(default_factory=dict)
    ended: bool = False
    choosing: int | None = None  # the seat whose too-low bee waits for a stem
    has_left: set[int] = field(default_factory=set)
    pages: list[tuple[int, list[dict[str, Any]]]] = field(default_factory=list)  # before the end

    def hidden_from(self, me: int) -> set[int]:
        return {bee for seat, seen in self.truth.items() if seat != me for bee in seen.bees}


class Checker:
    def __init__(self) -> None:
        self.checked = 0

    def view(self, game: Game, me: int, view: dict[str, Any], where: str) -> None:
        """A game view shown to seat `me` (getGame, submitMove, a table's `game`)."""
        self.checked += 1
        context = (game.label, where, me)
        assert view["game_id"] == game.game_id and view["you"] == me, context
        for seat in view["seats"]:
            assert set(seat) <= SEAT_KEYS_WITHOUT_BEES, (context, seat)
        if view["phase"] == "ended":
            return
        truth = game.truth.get(me)
        if truth is not None:
            assert view["hand"] == truth.hand, (context, view["hand"], truth.hand)
            assert (view["tapped"], view["confirmed"]) == (truth.tapped, truth.confirmed), context
        shown = bees_in(view)
        assert not shown & game.hidden_from(me), (context, shown & game.hidden_from(me), view)

    def events(self, game: Game, me: int, events: list[dict[str, Any]], where: str) -> None:
        """A listGameEvents page (or stream messages) shown to seat `me`."""
        self.checked += 1
        context = (game.label, where, me)
        over = any(e["type"] == "game_ended" for e in events)
        for event in events:
            data, kind = event["data"], event["type"]
            if over:
                if kind == "game_started":
                    assert all(hand is not None for hand in data["hands"]), (context, event)
                elif kind in HIDDEN_UNTIL_THE_END:
                    assert data["bee"] is not None, (context, event)
                continue
            assert kind not in ONLY_AFTER_THE_END, (context, event)
            if kind == "game_started":
                for seat, hand in enumerate(data["hands"], start=1):
                    assert (hand is None) == (seat != me), (context, seat, hand)
            elif kind in HIDDEN_UNTIL_THE_END:
                if data["seat"] == me:
                    assert data["bee"] is not None, (context, event)
                else:
                    assert data["bee"] is None and data.get("by_clock") is None, (context, event)
        if not over:
            shown = bees_in(events)
            assert not shown & game.hidden_from(me), (context, shown & game.hidden_from(me))
            game.pages.append((me, events))

    def table(self, game: Game | None, me: int | None, table: dict[str, Any], where: str) -> None:
        """A TableView (createTable, getTable, join/start/bees/leave/play again)."""
        self.checked += 1
        for seat in table["seats"]:
            assert set(seat) <= SEAT_KEYS_WITHOUT_BEES, (where, seat)
        if table["game"] is None:
            assert not bees_in({k: v for k, v in table.items() if k != "game"}), (where, table)
            return
        assert game is not None and me is not None, (where, table)
        assert not bees_in({k: v for k, v in table.items() if k != "game"}), (where, table)
        self.view(game, me, table["game"], where)

    def lobby(self, page: dict[str, Any]) -> None:
        self.checked += 1
        assert not bees_in(page), page
        for entry in page["tables"]:
            assert not set(entry) & BEE_KEYS, entry


class Driver:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.check = Checker()
        self.anon = Api(client)  # type: ignore[arg-type]
        self.counts: dict[str, int] = {}

    async def ok(self, response: httpx.Response, where: str) -> dict[str, Any]:
        assert response.status_code in (200, 201), (where, response.status_code, response.text)
        body: dict[str, Any] = response.json()
        return body

    async def refresh(self, game: Game) -> None:
        """Each person's own view: the truth. Checked against the truth it makes up."""
        views = {}
        for seat, person in game.seats.items():
            views[seat] = await self.ok(
                await self.client.get(f"/games/{game.game_id}", headers=person.headers), "getGame"
            )
        game.ended = any(v["phase"] == "ended" for v in views.values())
        choices = {v["choice"]["seat"] for v in views.values() if v["choice"] is not None}
        assert len(choices) <= 1, (game.label, choices)
        game.choosing = choices.pop() if choices else None
        assert all((v["phase"] == "ended") == game.ended for v in views.values()), game.label
        game.truth = {
            seat: Seen(view["hand"], view["tapped"], view["confirmed"])
            for seat, view in views.items()
        }
        for seat, view in views.items():
            self.check.view(game, seat, view, "getGame")

    async def log(self, game: Game, seat: int) -> list[dict[str, Any]]:
        page = await self.ok(
            await self.client.get(
                f"/games/{game.game_id}/events",
                params={"limit": 1000},
                headers=game.seats[seat].headers,
            ),
            "listGameEvents",
        )
        events: list[dict[str, Any]] = page["events"]
        assert [e["version"] for e in events] == list(range(1, len(events) + 1)), game.label
        assert len(events) == page["game_version"], game.label
        self.check.events(game, seat, events, "listGameEvents")
        return events

    async def observe(self, rng: random.Random, game: Game) -> None:
        """What else a person might ask for at this moment."""
        seat = rng.choice(list(game.seats))
        person = game.seats[seat]
        table = await self.ok(
            await self.client.get(f"/tables/{game.table_id}", headers=person.headers), "getTable"
        )
        self.check.table(game, seat, table, "getTable")
        await self.log(game, rng.choice(list(game.seats)))
        if rng.random() < 0.1:
            lobby = await self.ok(
                await self.client.get("/tables", params={"limit": 50}, headers=person.headers),
                "listTables",
            )
            self.check.lobby(lobby)

    async def seat_people(self, rng: random.Random, label: str) -> Game:
        """A new table: 2 to 5 people; it fills and starts, or the host starts, or bees fill."""
        people_count = rng.randint(2, 5)
        people = [await self.anon.guest(f"Person {i + 1}") for i in range(people_count)]
        how = rng.choice(["full", "start", "bees"])
        capacity = people_count if how == "full" else rng.randint(people_count + 1, 8)
        host = people[0]
        table = await self.ok(
            await self.client.post(
                "/tables", json={"seats": capacity, **UNTIMED}, headers=host.headers
            ),
            "createTable",
        )
        tid = table["table_id"]
        self.check.table(None, None, table, "createTable")
        for person in people[1:]:
            table = await self.ok(await person.table_action(tid, "seats"), "joinTable")
            if table["game"] is None:
                self.check.table(None, None, table, "joinTable")
        if how != "full":
            action = "start" if how == "start" else "bees"
            table = await self.ok(await host.table_action(tid, action), action)
            self.counts[action] = self.counts.get(action, 0) + 1
        assert table["status"] == "playing" and table["game"] is not None, (label, table)
        seats = {i + 1: person for i, person in enumerate(people)}
        gid = table["game"]["game_id"]
        game = Game(gid, tid, seats, f"{label}, game {gid}")
        await self.refresh(game)  # the truth, before checking the response that dealt it
        self.check.table(game, table["you"], table, "deal")
        return game

    async def act(self, rng: random.Random, game: Game) -> tuple[str, int, httpx.Response]:
        """One random thing a person does now: what, their seat, and the raw response."""
        playing = [seat for seat in game.seats if seat not in game.has_left]
        if rng.random() < 0.03:
            seat = rng.choice(playing)
            game.has_left.add(seat)
            return "leaveTable", seat, await game.seats[seat].table_action(game.table_id, "leave")
        if game.choosing is not None:
            seat = game.choosing
            assert seat in playing, (game.label, seat)
            stem = rng.randint(1, 4)  # any stem, not only the cheapest
            response = await game.seats[seat].move(game.game_id, type="take_stem", stem=stem)
            return "take_stem", seat, response
        pickers = [s for s in playing if game.truth[s].confirmed is None and game.truth[s].hand]
        assert pickers, (game.label, game.truth)
        seat = rng.choice(pickers)
        person, seen = game.seats[seat], game.truth[seat]
        roll = rng.random()
        if roll < 0.45:
            bee = rng.choice(seen.hand)
            return "tap", seat, await person.move(game.game_id, type="tap", bee=bee)
        if roll < 0.6 and seen.tapped is not None:
            return "confirm", seat, await person.move(game.game_id, type="confirm")
        bee = rng.choice(seen.hand)
        return "confirm", seat, await person.move(game.game_id, type="confirm", bee=bee)

    async def play(self, rng: random.Random, game: Game, followers: list[StreamFollower]) -> None:
        """Random moves until the game ends, checking every response; then the log and one
        person's stream against the final log."""
        me = rng.choice(list(game.seats))
        follower = StreamFollower(
            self.client,
            f"/games/{game.game_id}/stream",
            game.seats[me].headers,
            after=0,
            name=f"{game.label} stream of seat {me}",
        )
        followers.append(follower)
        end_began = 0.0
        while not game.ended:
            await self.observe(rng, game)
            began = time.monotonic()
            what, seat, response = await self.act(rng, game)
            self.counts[what] = self.counts.get(what, 0) + 1
            body = await self.ok(response, what)
            await self.refresh(game)
            if game.ended:
                end_began = began
            if what == "leaveTable":
                assert body["you"] is None, (game.label, body)
                self.check.table(game, seat, body, what)
            else:
                self.check.view(game, seat, body, what)

        # After the end: everything is published, to everyone, the same.
        logs = [await self.log(game, seat) for seat in game.seats]
        final = logs[0]
        assert all(log == final for log in logs), game.label
        assert any(e["type"] == "game_ended" for e in final), game.label
        for seat, events in game.pages:
            for event in events:
                assert event == redacted(final[event["version"] - 1], seat), (game.label, event)

        await follower.finish(within=10)
        assert follower.versions == list(range(1, len(final) + 1)), follower.name
        before_the_end = []
        for message, arrived in zip(follower.received, follower.arrived, strict=True):
            assert message.id is not None
            truth = final[message.id - 1]
            assert message.event == truth["type"], follower.name
            if arrived < end_began:
                assert message.data == redacted(truth, me), (follower.name, message)
                before_the_end.append(message.data)
            else:  # sent around the end: either is right, nothing else
                assert message.data in (redacted(truth, me), truth), (follower.name, message)
        if before_the_end:
            self.check.events(game, me, before_the_end, "streamGameEvents")
        self.counts["streamed"] = self.counts.get("streamed", 0) + len(before_the_end)

    async def next_game(self, rng: random.Random, game: Game, number: int) -> Game | None:
        """Play again with everyone still at the table, sometimes."""
        staying = [game.seats[s] for s in game.seats if s not in game.has_left]
        if len(staying) < 2 or rng.random() < 0.5:
            return None
        asker = rng.choice(staying)
        table = await self.ok(await asker.table_action(game.table_id, "games"), "playAgain")
        seats: dict[int, Api] = {}
        for person in staying:
            at = await self.ok(
                await self.client.get(f"/tables/{game.table_id}", headers=person.headers),
                "getTable",
            )
            seats[at["you"]] = person
        gid = table["game"]["game_id"]
        label = f"{game.label.partition(', game ')[0]}, game #{number} {gid}"
        again = Game(gid, game.table_id, seats, label)
        assert again.game_id != game.game_id and table["games"][-1] == again.game_id
        await self.refresh(again)
        self.check.table(again, table["you"], table, "playAgain")
        return again


async def test_no_response_shows_anyone_a_bee_the_rules_hide(
    server: str,
) -> None:
    async with (
        asyncio.timeout(OVERALL),
        httpx.AsyncClient(base_url=server, timeout=TIMEOUT) as client,
        following() as followers,
    ):
        driver = Driver(client)
        played = tables = 0
        while played < GAMES:
            tables += 1
            rng = random.Random(SEED * 1000 + tables)
            game: Game | None = await driver.seat_people(rng, f"table {tables} (seed {SEED})")
            number = 1
            while game is not None and played < GAMES:
                await driver.play(rng, game, followers)
                played += 1
                number += 1
                game = await driver.next_game(rng, game, number)
                if game is not None:
                    driver.counts["playAgain"] = driver.counts.get("playAgain", 0) + 1

    # The random games went where they should, so the checks had something to check.
    counts = driver.counts
    for what in ("tap", "confirm", "take_stem", "leaveTable", "bees", "streamed"):
        assert counts.get(what, 0) > 0, counts
    assert driver.check.checked > 500, driver.check.checked


def test_the_checks_catch_a_leak() -> None:
    """The checker is not vacuous: each kind of leak it is meant to catch fails it."""
    game = Game("g", "t", {}, "self-test")
    game.truth = {1: Seen([3, 9], None, None), 2: Seen([5, 40], 40, None)}
    checker = Checker()
    view: dict[str, Any] = {
        "game_id": "g",
        "you": 1,
        "phase": "picking",
        "hand": [3, 9],
        "tapped": None,
        "confirmed": None,
        "seats": [{"seat": 1, "name": "A", "kind": "person", "stings": 0, "bees_taken": 0}],
        "stems": [{"stem": 1, "bees": [1], "stings": 1, "sixth_bee": False}],
        "choice": {"seat": 2, "bee": 2, "costs": [{"stem": 1, "bees": 5, "stings": 40}]},
        "last_picks": [],
        "forecast": [{"bee": 3, "stem": 1, "takes": [], "takes_stings": 5}],
    }
    checker.view(game, 1, view, "clean")  # counts and stem numbers are not bees
    leaks = [
        {**view, "stems": [{"stem": 1, "bees": [5], "stings": 1, "sixth_bee": False}]},
        {**view, "seats": [{**view["seats"][0], "tapped": 40}]},
        {**view, "hand": [3, 9, 40]},
        {**view, "last_picks": [{"seat": 2, "bee": 40}]},
    ]
    for leak in leaks:
        with pytest.raises(AssertionError):
            checker.view(game, 1, leak, "leak")
    started = {"version": 1, "type": "game_started", "data": {"hands": [[3, 9], [5, 40]]}}
    tapped = {"version": 2, "type": "bee_tapped", "data": {"seat": 2, "bee": 40}}
    confirmed: dict[str, Any] = {
        "version": 2,
        "type": "pick_confirmed",
        "data": {"seat": 2, "bee": None},
    }
    for log in (
        [started],
        [tapped],
        [{**confirmed, "data": {**confirmed["data"], "by_clock": "x"}}],
    ):
        with pytest.raises(AssertionError):
            checker.events(game, 1, log, "leak")
    assert redacted(started, 1)["data"]["hands"] == [[3, 9], None]
    assert redacted(tapped, 1)["data"]["bee"] is None
