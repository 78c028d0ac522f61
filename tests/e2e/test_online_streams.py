"""Online tables followed live over Server-Sent Events, across two app instances on one database.

Both servers use a long heartbeat (60 s, from `test_streams`), so an event that reaches a
follower within seconds can only have come through the LISTEN/NOTIFY wake-up of the instance
it follows, whichever instance recorded it.

Every test runs under one overall timeout, and every wait has its own, so a bug fails, never
hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.api_client import Api, play_online_to_the_end
from tests.e2e.test_streams import TIMEOUT, Message, _serve, sse_messages

PROMPT = 5.0  # seconds an event may take to reach a follower
OVERALL = 30.0  # seconds a whole test may take
UNTIMED = {"turn_seconds": 600, "choice_seconds": 600}  # no clock runs out during a test
HIDDEN_UNTIL_THE_END = {"bee_tapped", "pick_confirmed"}
# Table events of the fair deal (docs/fairness.md): each next game is prepared (its commitment
# published) before it is dealt, and people may send seeds. The checks below are about seats
# and games, so they look at the other events ("core"), and at every version being there.
FAIR_DEAL_BOOKKEEPING = {"game_prepared", "seed_contributed"}


@pytest.fixture(scope="module")
def instance_a(database_url: str) -> Iterator[str]:
    yield from _serve(database_url, heartbeat=60)


@pytest.fixture(scope="module")
def instance_b(database_url: str) -> Iterator[str]:
    yield from _serve(database_url, heartbeat=60)


class StreamFollower:
    """Reads one SSE stream (a game's or a table's) in a background task; `received` grows as
    messages with an id arrive, and `arrived` holds when each did (time.monotonic())."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        path: str,
        headers: dict[str, str],
        *,
        after: int | None = None,
        name: str = "",
    ) -> None:
        self.name = name or path
        self.received: list[Message] = []
        self.arrived: list[float] = []
        params = {"after": after} if after is not None else {}
        self._task = asyncio.create_task(self._run(client, path, headers, params))

    async def _run(
        self, client: httpx.AsyncClient, path: str, headers: dict[str, str], params: Any
    ) -> None:
        # No read deadline: a table's stream is quiet while its game is played (heartbeats come
        # every 60 s here), and the test's own OVERALL timeout bounds the wait.
        quiet_ok = httpx.Timeout(10.0, read=None)
        async with client.stream(
            "GET", path, params=params, headers=headers, timeout=quiet_ok
        ) as response:
            assert response.status_code == 200, (self.name, response.status_code)
            assert response.headers["content-type"].startswith("text/event-stream")
            async for message in sse_messages(response):
                if message.id is not None:
                    self.received.append(message)
                    self.arrived.append(time.monotonic())

    @property
    def last_version(self) -> int:
        return (self.received[-1].id or 0) if self.received else 0

    @property
    def versions(self) -> list[int | None]:
        return [m.id for m in self.received]

    @property
    def types(self) -> list[str | None]:
        return [m.event for m in self.received]

    @property
    def core(self) -> list[Message]:
        return [m for m in self.received if m.event not in FAIR_DEAL_BOOKKEEPING]

    @property
    def core_types(self) -> list[str | None]:
        return [m.event for m in self.core]

    async def wait_for_core(self, count: int, within: float = PROMPT) -> list[Message]:
        """Wait for the `count`-th table event that is not fair-deal bookkeeping."""
        deadline = time.monotonic() + within
        while len(self.core) < count:
            self._check_alive(f"core event #{count}")
            assert time.monotonic() < deadline, (
                f"{self.name}: no core event #{count} within {within}s: {self.types}"
            )
            await asyncio.sleep(0.005)
        return self.core

    def _check_alive(self, wanted: object) -> None:
        if self._task.done():
            if not self._task.cancelled():
                self._task.result()  # raise the reader's error, if any
            raise AssertionError(f"{self.name}: stream closed at {self.last_version}, {wanted=}")

    async def wait_for(self, version: int, within: float = PROMPT) -> None:
        deadline = time.monotonic() + within
        while self.last_version < version:
            self._check_alive(version)
            assert time.monotonic() < deadline, (
                f"{self.name}: no event {version} within {within}s (at {self.last_version})"
            )
            await asyncio.sleep(0.005)

    async def wait_for_type(self, event_type: str, within: float = PROMPT) -> Message:
        deadline = time.monotonic() + within
        while True:
            for message in self.received:
                if message.event == event_type:
                    return message
            self._check_alive(event_type)
            assert time.monotonic() < deadline, f"{self.name}: no {event_type} within {within}s"
            await asyncio.sleep(0.005)

    async def finish(self, within: float = PROMPT) -> None:
        """Wait for the server to end the stream (after game_ended / table_closed)."""
        await asyncio.wait_for(asyncio.shield(self._task), within)

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task


@contextlib.asynccontextmanager
async def following() -> AsyncIterator[list[StreamFollower]]:
    """Followers registered in the yielded list are stopped however the block ends."""
    followers: list[StreamFollower] = []
    try:
        yield followers
    finally:
        for follower in followers:
            await follower.stop()


def assert_redacted_for(message: Message, me: int) -> None:
    """A game event delivered before the end shows `me` no other seat's hidden bee."""
    data = message.data["data"]
    if message.event == "game_started":
        for seat, hand in enumerate(data["hands"], start=1):
            assert (hand is None) == (seat != me), (me, seat, hand)
    elif message.event in HIDDEN_UNTIL_THE_END:
        if data["seat"] == me:
            assert data["bee"] is not None, (me, message)
        else:
            assert data["bee"] is None and data.get("by_clock") is None, (me, message)


def assert_published(message: Message) -> None:
    """After the end everything is shown, to everyone."""
    data = message.data["data"]
    if message.event == "game_started":
        assert all(hand is not None for hand in data["hands"]), message
    elif message.event in HIDDEN_UNTIL_THE_END:
        assert data["bee"] is not None, message


async def test_four_people_on_two_instances_play_a_game_followed_everywhere(
    instance_a: str, instance_b: str
) -> None:
    rng = random.Random(20240611)
    async with (
        asyncio.timeout(OVERALL),
        httpx.AsyncClient(base_url=instance_a, timeout=TIMEOUT) as ca,
        httpx.AsyncClient(base_url=instance_b, timeout=TIMEOUT) as cb,
        following() as followers,
    ):
        homes = [ca, cb, ca, cb]  # person i moves through instance A or B, alternating
        names = ["Hana", "Bob", "Cat", "Dan"]
        people = [
            await Api(home).guest(name)  # type: ignore[arg-type]
            for home, name in zip(homes, names, strict=True)
        ]
        host = people[0]
        table = await host.create_table(seats=4, **UNTIMED)
        tid = table["table_id"]
        table_followers = [
            StreamFollower(client, f"/tables/{tid}/stream", host.headers, name=f"table@{label}")
            for client, label in ((ca, "A"), (cb, "B"))
        ]
        followers += table_followers
        for follower in table_followers:
            await follower.wait_for_core(1)

        # Three people join through alternating instances; the fourth fills the table.
        joined: dict[str, Any] = {}
        for count, person in enumerate(people[1:], start=2):
            joined = await person.ok_table_action(tid, "seats")
            for follower in table_followers:
                await follower.wait_for_core(count)
        assert joined["status"] == "playing" and joined["you"] == 4
        game = joined["game"]
        gid = game["game_id"]
        for follower in table_followers:
            opened = await follower.wait_for_type("game_opened")
            assert opened.data["data"]["game_id"] == gid

        # Each person follows the game on both instances: eight streams.
        game_followers: dict[int, list[StreamFollower]] = {
            seat: [
                StreamFollower(
                    client, f"/games/{gid}/stream", person.headers, name=f"seat{seat}@{label}"
                )
                for client, label in ((ca, "A"), (cb, "B"))
            ]
            for seat, person in enumerate(people, start=1)
        }
        followers += [f for pair in game_followers.values() for f in pair]
        # What listGameEvents shows each person at each step, taken once every follower has
        # caught up, so both saw the game at the same moment (redaction depends on the end).
        expected: dict[int, list[dict[str, Any]]] = {seat: [] for seat in game_followers}
        synced = 0

        async def sync(version: int) -> None:
            nonlocal synced
            for pair in game_followers.values():
                for follower in pair:
                    await follower.wait_for(version)
            for seat, person in enumerate(people, start=1):
                page = await person.events(gid, after=synced)
                expected[seat] += page["events"]
            synced = version

        await sync(game["version"])
        before_the_end = synced
        view = game
        moves = taps = 0
        while view["phase"] != "ended":
            progressed = False
            for person in people:
                view = await person.game(gid)
                if view["phase"] == "ended":
                    break
                before = view["version"]
                if view["phase"] == "choosing" and view["choice"]["yours"]:
                    view = await person.ok_move(
                        gid, type="take_stem", stem=view["choice"]["cheapest"]
                    )
                elif view["phase"] == "picking" and view["confirmed"] is None:
                    if rng.random() < 0.5:
                        tapped = await person.ok_move(gid, type="tap", bee=rng.choice(view["hand"]))
                        assert tapped["tapped"] is not None
                        await sync(tapped["version"])
                        taps += 1
                        before = tapped["version"]
                    view = await person.ok_move(gid, type="confirm", bee=rng.choice(view["hand"]))
                else:
                    continue
                before_the_end = before
                await sync(view["version"])
                moves += 1
                progressed = True
            assert progressed or view["phase"] == "ended", view
        assert taps > 0 and moves > 10

        # Every stream ends by itself after game_ended.
        for pair in game_followers.values():
            for follower in pair:
                await follower.finish()
        final_log = (await host.events(gid))["events"]
        assert len(final_log) == view["version"]
        assert "game_ended" in [e["type"] for e in final_log[before_the_end:]]
        for seat, pair in game_followers.items():
            for follower in pair:
                assert follower.versions == list(range(1, view["version"] + 1)), follower.name
                assert follower.types == [e["type"] for e in final_log], follower.name
                assert [m.data for m in follower.received] == expected[seat], follower.name
                for message in follower.received:
                    assert message.id is not None
                    if message.id <= before_the_end:
                        assert_redacted_for(message, seat)
                    else:
                        assert_published(message)
                assert [m.data for m in follower.received[before_the_end:]] == (
                    final_log[before_the_end:]
                )
        # Others' taps really were in the log, hidden from each follower until the end.
        assert any(e["type"] == "bee_tapped" and e["version"] <= before_the_end for e in final_log)

        # The table saw the game finish; then everyone leaves and the table closes.
        for follower in table_followers:
            finished = await follower.wait_for_type("game_finished")
            assert finished.data["data"]["game_id"] == gid
        for person in people:
            await person.ok_table_action(tid, "leave")
        for follower in table_followers:
            await follower.finish()
        expected_table = [
            "table_opened",
            *["seat_taken"] * 3,
            "game_opened",
            "game_finished",
            *["seat_freed", "host_changed"] * 3,
            "seat_freed",
            "table_closed",
        ]
        a, b = table_followers
        assert a.core_types == expected_table
        assert a.versions == list(range(1, len(a.received) + 1))
        assert [m.data for m in a.received] == [m.data for m in b.received]


async def test_a_table_stream_shows_seats_host_and_games_as_they_happen_and_resumes(
    instance_a: str, instance_b: str
) -> None:
    async with (
        asyncio.timeout(OVERALL),
        httpx.AsyncClient(base_url=instance_a, timeout=TIMEOUT) as ca,
        httpx.AsyncClient(base_url=instance_b, timeout=TIMEOUT) as cb,
        following() as followers,
    ):
        hana = await Api(ca).guest("Hana")  # type: ignore[arg-type]
        bob = await Api(ca).guest("Bob")  # type: ignore[arg-type]
        cat = await Api(ca).guest("Cat")  # type: ignore[arg-type]
        dan = await Api(cb).guest("Dan")  # type: ignore[arg-type]
        table = await hana.create_table(seats=4, **UNTIMED)
        tid = table["table_id"]
        path = f"/tables/{tid}/stream"
        # Dan sits nowhere: anyone may follow an online table. He follows on instance B.
        watch = StreamFollower(cb, path, dan.headers, name="dan@B")
        followers.append(watch)
        core = await watch.wait_for_core(1)
        assert core[0].event == "table_opened" and core[0].id == 1
        assert core[0].data["data"]["host"] == table["host"]

        await bob.ok_table_action(tid, "seats")
        await watch.wait_for_core(2)
        await cat.ok_table_action(tid, "seats")
        core = await watch.wait_for_core(3)
        seats = [m.data["data"] for m in core[1:3]]
        assert [m.event for m in core[1:3]] == ["seat_taken", "seat_taken"]
        assert [s["name"] for s in seats] == ["Bob", "Cat"]
        assert all(s["kind"] == "person" and s["player_id"] for s in seats)

        left = await hana.ok_table_action(tid, "leave")
        core = await watch.wait_for_core(5)
        assert [m.event for m in core[3:5]] == ["seat_freed", "host_changed"]
        assert core[4].data["data"]["host"] == left["host"] != table["host"]

        started = await bob.ok_table_action(tid, "start")
        gid = started["game"]["game_id"]
        opened = (await watch.wait_for_core(6))[5]
        assert opened.event == "game_opened"
        first = {"type": "game_opened", "game_id": gid, "number": 1, "follows": None}
        assert opened.data["data"] == first
        assert opened.data["type"] == "game_opened" and opened.data["version"] == opened.id
        assert started["games"] == [gid]
        assert watch.versions == list(range(1, len(watch.received) + 1))
        assert watch.received[-1] is opened  # nothing after it yet

        # Disconnect after game_opened; the game is played meanwhile.
        await watch.stop()
        seen = opened.id
        assert seen is not None
        bob_b = Api(cb, bob.token)  # type: ignore[arg-type]
        cat_a = Api(ca, cat.token)  # type: ignore[arg-type]
        final = await play_online_to_the_end({1: bob_b, 2: cat_a}, gid)
        assert final["phase"] == "ended"

        # Resume on the other instance with Last-Event-ID (it wins over ?after=).
        resumed = StreamFollower(
            ca, path, {**dan.headers, "Last-Event-ID": str(seen)}, after=1, name="dan@A"
        )
        followers.append(resumed)
        finished = (await resumed.wait_for_core(1))[0]
        assert finished.event == "game_finished" and finished.data["data"]["game_id"] == gid
        assert resumed.received[0].id == seen + 1  # exactly after, nothing repeated
        await bob.ok_table_action(tid, "leave")
        await resumed.wait_for_core(3)
        await cat.ok_table_action(tid, "leave")
        await resumed.finish()  # ends by itself after table_closed
        assert resumed.versions == list(range(seen + 1, seen + 1 + len(resumed.received)))
        assert resumed.core_types == [
            "game_finished",
            "seat_freed",
            "host_changed",
            "seat_freed",
            "table_closed",
        ]

        # A stream opened after the table closed replays what is left and ends at once.
        after = resumed.versions[-3]
        assert after is not None
        tail = StreamFollower(cb, path, dan.headers, after=after, name="tail@B")
        followers.append(tail)
        await tail.finish()
        assert [m.data for m in tail.received] == [m.data for m in resumed.received[-2:]]


async def test_a_spectator_follows_the_table_to_the_game_played_again(
    instance_a: str, instance_b: str
) -> None:
    """Issue 43, item 5: Play again takes the spectators along. Sue watches Hana and Bob's game
    through instance B; when Bob plays again through instance A, the table's stream says which
    game the new one follows, and Sue watches that one too."""
    async with (
        asyncio.timeout(OVERALL),
        httpx.AsyncClient(base_url=instance_a, timeout=TIMEOUT) as ca,
        httpx.AsyncClient(base_url=instance_b, timeout=TIMEOUT) as cb,
        following() as followers,
    ):
        hana = await Api(ca).guest("Hana")  # type: ignore[arg-type]
        bob = await Api(ca).guest("Bob")  # type: ignore[arg-type]
        sue = await Api(cb).guest("Sue")  # type: ignore[arg-type]
        tid = (await hana.create_table(seats=2, **UNTIMED))["table_id"]
        started = await bob.ok_table_action(tid, "seats")  # the table is full: dealt at once
        gid = started["game"]["game_id"]
        assert (await sue.game(gid))["you"] is None  # a spectator
        watched = StreamFollower(cb, f"/games/{gid}/stream", sue.headers, name="sue@game")
        table = StreamFollower(cb, f"/tables/{tid}/stream", sue.headers, name="sue@table")
        followers += [watched, table]
        first = await table.wait_for_type("game_opened")
        assert first.data["data"] == {
            "type": "game_opened",
            "game_id": gid,
            "number": 1,
            "follows": None,
        }

        await play_online_to_the_end({1: hana, 2: bob}, gid)
        await watched.finish()  # the watched game's stream ends with it
        assert watched.types[-2:] == ["game_ended", "deal_revealed"]

        again = await bob.ok_table_action(tid, "games")
        new = again["game"]["game_id"]
        assert new != gid and again["games"] == [gid, new]
        deadline = time.monotonic() + PROMPT
        while True:  # the second game_opened, through the other instance's wake-up
            opened = [m for m in table.received if m.event == "game_opened"]
            if len(opened) == 2:
                break
            assert time.monotonic() < deadline, table.types
            await asyncio.sleep(0.005)
        assert opened[1].data["data"] == {
            "type": "game_opened",
            "game_id": new,
            "number": 2,
            "follows": gid,
        }
        # Sue follows it as she followed the first: a spectator, every hand hidden.
        view = await sue.game(new)
        assert view["you"] is None and view["phase"] == "picking" and view["hand"] == []
        next_game = StreamFollower(cb, f"/games/{new}/stream", sue.headers, name="sue@next")
        followers.append(next_game)
        started_msg = await next_game.wait_for_type("game_started")
        assert all(hand is None for hand in started_msg.data["data"]["hands"])
