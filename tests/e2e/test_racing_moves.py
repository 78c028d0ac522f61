"""Simultaneous picks (seed §3: everyone picks at the same time), raced for real: eight people
at one table on two app instances on one database, each turn all of them tapping and confirming
within the same 50 ms, with the turn clock running on both instances.

Every move must be applied, or refused for a rule with that rule's code; never refused because
someone else's move was appended first (`conflict`), and the game's log holds each move once.
`SWARM_RACE_GAMES` sets how many games are raced (`make race` runs enough for over 1,000 moves;
`make test` a few hundred)."""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from service.api.app import create_app
from service.store.pool import Pool
from tests.live_server import serve

GAMES = int(os.environ.get("SWARM_RACE_GAMES", "2"))
PEOPLE = 8
WINDOW = 0.05  # seconds: every person's moves of a turn are sent within this window
CLOCK = {"turn_seconds": 30, "choice_seconds": 30}  # running, but never the one who plays
RULE_CODES_ALLOWED = {"not-your-decision", "wrong-phase", "already-confirmed"}


def _instance(database_url: str) -> Iterator[str]:
    yield from serve(create_app(database_url), timeout_graceful_shutdown=2)


@pytest.fixture(scope="module")
def instance_a(database_url: str) -> Iterator[str]:
    yield from _instance(database_url)


@pytest.fixture(scope="module")
def instance_b(database_url: str) -> Iterator[str]:
    yield from _instance(database_url)


class Person:
    def __init__(self, http: httpx.AsyncClient, base: str, token: str) -> None:
        self.http, self.base = http, base
        self.headers = {"authorization": f"Bearer {token}"}

    async def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return await self.http.post(self.base + path, json=body, headers=self.headers)

    async def get(self, path: str) -> dict[str, Any]:
        response = await self.http.get(self.base + path, headers=self.headers)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


async def _people(http: httpx.AsyncClient, bases: list[str]) -> list[Person]:
    people = []
    for n in range(PEOPLE):
        base = bases[n % len(bases)]  # odd seats on one instance, even seats on the other
        response = await http.post(f"{base}/guests", json={"name": f"Racer {n + 1}"})
        assert response.status_code == 201, response.text
        people.append(Person(http, base, response.json()["token"]))
    return people


class Tally:
    def __init__(self) -> None:
        self.statuses: Counter[int] = Counter()
        self.codes: Counter[str] = Counter()
        self.moves = 0
        self.move_ids: dict[str, set[str]] = {}  # game id -> every move id applied there

    def record(self, game_id: str, move_id: str, response: httpx.Response) -> None:
        self.moves += 1
        self.statuses[response.status_code] += 1
        if response.status_code == 200:
            self.move_ids.setdefault(game_id, set()).add(move_id)
        else:
            assert response.headers["content-type"].startswith("application/problem+json")
            self.codes[response.json().get("code", "")] += 1


async def _at(moment: float) -> None:
    await asyncio.sleep(max(0.0, moment - time.monotonic()))


async def _race_turn(people: list[Person], game_id: str, tally: Tally, rng: random.Random) -> None:
    """Every person still picking taps a bee and confirms one, all within WINDOW seconds."""
    views = await asyncio.gather(*(p.get(f"/games/{game_id}") for p in people))
    start = time.monotonic() + 0.05

    async def moves(person: Person, view: dict[str, Any]) -> None:
        if view["phase"] != "picking" or view["confirmed"] is not None:
            return
        tap, confirm = rng.choice(view["hand"]), rng.choice(view["hand"])
        for kind, bee in (("tap", tap), ("confirm", confirm)):
            await _at(start + rng.uniform(0, WINDOW))
            move_id = uuid.uuid4().hex
            body = {"type": kind, "bee": bee, "move_id": move_id}
            tally.record(game_id, move_id, await person.post(f"/games/{game_id}/moves", body))

    await asyncio.gather(*(moves(p, v) for p, v in zip(people, views, strict=True)))


async def _choose_if_asked(people: list[Person], game_id: str, tally: Tally) -> None:
    for person in people:
        view = await person.get(f"/games/{game_id}")
        if view["phase"] == "choosing" and view["choice"]["yours"]:
            move_id = uuid.uuid4().hex
            body = {"type": "take_stem", "stem": view["choice"]["cheapest"], "move_id": move_id}
            tally.record(game_id, move_id, await person.post(f"/games/{game_id}/moves", body))


async def _game(people: list[Person], tally: Tally, rng: random.Random) -> str:
    host, *others = people
    opened = await host.post("/tables", {"seats": PEOPLE, **CLOCK})
    assert opened.status_code == 201, opened.text
    table_id = opened.json()["table_id"]
    # Everyone joins at once, too: a free seat is never refused for a race.
    joined = await asyncio.gather(*(p.post(f"/tables/{table_id}/seats", {}) for p in others))
    assert [r.status_code for r in joined] == [200] * len(others), [r.text for r in joined]
    game_id: str = (await host.get(f"/tables/{table_id}"))["games"][-1]
    for _ in range(40):  # 10 turns, and any too-low choices between them
        view = await host.get(f"/games/{game_id}")
        if view["phase"] == "ended":
            return game_id
        await _race_turn(people, game_id, tally, rng)
        await _choose_if_asked(people, game_id, tally)
    raise AssertionError(f"game {game_id} did not end")


_COMMANDS_IN_LOG = """
select metadata->>'command_id' as command_id, min(version) as first, max(version) as last,
       count(*) as events
  from events where stream = $1 and metadata->>'actor' <> 'clock'
 group by 1
"""
_CONFIRMS_BY_SEAT = """
select (data->>'seat')::int as seat, count(*) from events
 where stream = $1 and type = 'pick_confirmed' group by 1
"""


async def _assert_each_move_once(pool: Pool, game_id: str, applied: set[str]) -> None:
    """Every applied move is in the log once: one contiguous run of events per move id, none
    for a move that was refused, and one confirmed pick per seat and turn."""
    rows = await pool.fetch(_COMMANDS_IN_LOG, f"game-{game_id}")
    logged = {r["command_id"].partition(":")[2]: r for r in rows if r["command_id"]}
    assert set(logged) == applied
    runs = sorted((r["first"], r["last"]) for r in logged.values())
    assert all(a_last < b_first for (_, a_last), (b_first, _) in itertools.pairwise(runs))
    confirms = {
        r["seat"]: r["count"] for r in await pool.fetch(_CONFIRMS_BY_SEAT, f"game-{game_id}")
    }
    assert confirms == dict.fromkeys(range(1, PEOPLE + 1), 10)


async def test_racing_moves_on_two_instances_are_never_refused_for_a_race(
    instance_a: str, instance_b: str, pool: Pool
) -> None:
    tally = Tally()
    rng = random.Random(20261201)
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as http:
        people = await _people(http, [instance_a, instance_b])
        # Each game hosted by the next person: one host may keep at most 5 tables open.
        games = [
            await _game(people[i % len(people) :] + people[: i % len(people)], tally, rng)
            for i in range(GAMES)
        ]
    for game_id in games:
        await _assert_each_move_once(pool, game_id, tally.move_ids.get(game_id, set()))
    print(
        f"\nracing moves: {tally.moves} over {GAMES} games,",
        f"statuses {dict(tally.statuses)}, problem codes {dict(tally.codes)}",
    )
    assert tally.codes["conflict"] == 0, tally.codes
    assert set(tally.codes) <= RULE_CODES_ALLOWED, tally.codes
    assert tally.moves >= 150 * GAMES
