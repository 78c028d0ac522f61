"""streamGameEvents (Server-Sent Events) against real uvicorn servers: order, redaction,
resumption, and NOTIFY fan-out across two app instances on one database.

The stream servers use a long heartbeat (60 s), so an event arriving within seconds can only
have come through the LISTEN/NOTIFY wake-up, not the heartbeat's safety-net re-read.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from service.api.app import create_app
from tests.live_server import serve

PROMPT = 5.0  # seconds an event may take to reach a follower
TIMEOUT = httpx.Timeout(10.0)


def _serve(database_url: str, heartbeat: float) -> Iterator[str]:
    app = create_app(database_url, stream_heartbeat=heartbeat)
    yield from serve(app, timeout_graceful_shutdown=2)


@pytest.fixture(scope="module")
def server_a(database_url: str) -> Iterator[str]:
    yield from _serve(database_url, heartbeat=60)


@pytest.fixture(scope="module")
def server_b(database_url: str) -> Iterator[str]:
    yield from _serve(database_url, heartbeat=60)


@pytest.fixture(scope="module")
def server_fast(database_url: str) -> Iterator[str]:
    yield from _serve(database_url, heartbeat=0.2)


@dataclass
class Message:
    id: int | None = None
    event: str | None = None
    data: Any = None
    comments: list[str] = field(default_factory=list)


async def sse_messages(response: httpx.Response) -> AsyncIterator[Message]:
    """Parse a text/event-stream body (enough of the spec for these tests)."""
    current = Message()
    data_lines: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data_lines:
                current.data = json.loads("\n".join(data_lines))
            yield current
            current, data_lines = Message(), []
        elif line.startswith(":"):
            current.comments.append(line[1:].strip())
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "id":
                current.id = int(value)
            elif name == "event":
                current.event = value
            elif name == "data":
                data_lines.append(value)


class Player:
    def __init__(self, client: httpx.AsyncClient, token: str) -> None:
        self.client = client
        self.headers = {"Authorization": f"Bearer {token}"}

    @classmethod
    async def guest(cls, client: httpx.AsyncClient, name: str = "Ada") -> Player:
        response = await client.post("/guests", json={"name": name})
        assert response.status_code == 201, response.text
        return cls(client, response.json()["token"])

    async def solo_game(self) -> dict[str, Any]:
        response = await self.client.post("/solo-tables", json={}, headers=self.headers)
        assert response.status_code == 201, response.text
        view: dict[str, Any] = response.json()["game"]
        return view

    async def next_move(self, view: dict[str, Any]) -> dict[str, Any]:
        """Confirm the lowest bee, or take the cheapest stem when too low."""
        if view["phase"] == "choosing":
            move = {"type": "take_stem", "stem": view["choice"]["cheapest"]}
        else:
            move = {"type": "confirm", "bee": view["hand"][0]}
        response = await self.client.post(
            f"/games/{view['game_id']}/moves",
            json={**move, "move_id": f"m{view['version']}"},
            headers=self.headers,
        )
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    async def events(self, game_id: str, after: int) -> list[dict[str, Any]]:
        response = await self.client.get(
            f"/games/{game_id}/events", params={"after": after}, headers=self.headers
        )
        assert response.status_code == 200, response.text
        events: list[dict[str, Any]] = response.json()["events"]
        return events


class Follower:
    """Reads a stream in a background task; `received` grows as messages arrive."""

    def __init__(
        self, client: httpx.AsyncClient, game_id: str, headers: dict[str, str], after: int = 0
    ) -> None:
        self.received: list[Message] = []
        self.closed = asyncio.Event()
        self._task = asyncio.create_task(self._run(client, game_id, headers, after))

    async def _run(
        self, client: httpx.AsyncClient, game_id: str, headers: dict[str, str], after: int
    ) -> None:
        try:
            async with client.stream(
                "GET", f"/games/{game_id}/stream", params={"after": after}, headers=headers
            ) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                async for message in sse_messages(response):
                    if message.id is not None:
                        self.received.append(message)
        finally:
            self.closed.set()

    @property
    def last_version(self) -> int:
        return (self.received[-1].id or 0) if self.received else 0

    async def wait_for(self, version: int) -> None:
        deadline = time.monotonic() + PROMPT
        while self.last_version < version:
            if self._task.done():
                self._task.result()  # raise the reader's error, if any
                raise AssertionError(f"stream closed at {self.last_version}, wanted {version}")
            assert time.monotonic() < deadline, f"no event {version} within {PROMPT}s"
            await asyncio.sleep(0.01)

    async def finish(self) -> None:
        await asyncio.wait_for(self._task, PROMPT)


async def follow_a_whole_game(player_base: str, follower_base: str) -> None:
    async with (
        httpx.AsyncClient(base_url=player_base, timeout=TIMEOUT) as pc,
        httpx.AsyncClient(base_url=follower_base, timeout=TIMEOUT) as fc,
    ):
        ada = await Player.guest(pc)
        view = await ada.solo_game()
        game_id = view["game_id"]
        follower = Follower(fc, game_id, ada.headers)
        # What listGameEvents shows at each step, taken once the follower has caught up, so
        # both saw the game at the same moment (redaction depends on whether it has ended).
        expected: list[dict[str, Any]] = []
        await follower.wait_for(view["version"])
        expected += await ada.events(game_id, after=0)
        while view["phase"] != "ended":
            before = view["version"]
            view = await ada.next_move(view)
            await follower.wait_for(view["version"])
            expected += await ada.events(game_id, after=before)
        await follower.finish()  # the stream ends by itself after game_ended

    versions = [m.id for m in follower.received]
    assert versions == list(range(1, view["version"] + 1))
    assert [m.event for m in follower.received] == [e["type"] for e in expected]
    assert [m.data for m in follower.received] == expected
    # The deal is published in the same append as the end: the stream closes after both.
    assert [m.event for m in follower.received[-2:]] == ["game_ended", "deal_revealed"]
    # Redaction while the game ran: the deal showed only the caller's own hand.
    assert follower.received[0].event == "deal_committed"
    started = follower.received[1]
    assert started.event == "game_started"
    hands = started.data["data"]["hands"]
    assert hands[0] is not None and all(h is None for h in hands[1:]), hands


async def test_follower_receives_a_whole_solo_game_in_order(server_a: str) -> None:
    await follow_a_whole_game(server_a, server_a)


async def test_notify_fans_out_across_app_instances(server_a: str, server_b: str) -> None:
    """The player moves through instance A; the follower streams from instance B."""
    await follow_a_whole_game(server_a, server_b)


async def test_reconnect_with_last_event_id_continues_at_the_next_version(
    server_a: str, server_b: str
) -> None:
    async with (
        httpx.AsyncClient(base_url=server_a, timeout=TIMEOUT) as pc,
        httpx.AsyncClient(base_url=server_b, timeout=TIMEOUT) as fc,
    ):
        ada = await Player.guest(pc)
        view = await ada.solo_game()
        game_id = view["game_id"]
        for _ in range(2):
            view = await ada.next_move(view)
        first: list[Message] = []
        async with fc.stream("GET", f"/games/{game_id}/stream", headers=ada.headers) as response:
            async for message in sse_messages(response):
                first.append(message)
                if len(first) == 3:
                    break
        assert [m.id for m in first] == [1, 2, 3]

        # Moves happen while disconnected and after reconnecting.
        view = await ada.next_move(view)
        resumed = Follower(fc, game_id, {**ada.headers, "Last-Event-ID": str(first[-1].id)})
        while view["phase"] != "ended":
            view = await ada.next_move(view)
        await resumed.finish()

    seen = [m.id for m in first + resumed.received]
    assert seen == list(range(1, view["version"] + 1))


async def test_after_query_starts_after_that_version(server_a: str) -> None:
    async with httpx.AsyncClient(base_url=server_a, timeout=TIMEOUT) as client:
        ada = await Player.guest(client)
        view = await ada.solo_game()
        while view["phase"] != "ended":
            view = await ada.next_move(view)
        follower = Follower(client, view["game_id"], ada.headers, after=3)
        await follower.finish()
        assert [m.id for m in follower.received] == list(range(4, view["version"] + 1))
        # Once the game has ended the stream shows what listGameEvents shows: everything.
        assert [m.data for m in follower.received] == await ada.events(view["game_id"], 3)


async def test_heartbeat_comments_while_nothing_happens(server_fast: str) -> None:
    async with httpx.AsyncClient(base_url=server_fast, timeout=TIMEOUT) as client:
        ada = await Player.guest(client)
        view = await ada.solo_game()
        heartbeats = 0
        async with asyncio.timeout(PROMPT):
            async with client.stream(
                "GET",
                f"/games/{view['game_id']}/stream",
                params={"after": view["version"]},
                headers=ada.headers,
            ) as response:
                async for message in sse_messages(response):
                    assert message.id is None and message.comments == ["heartbeat"]
                    heartbeats += 1
                    if heartbeats == 2:
                        break
        assert heartbeats == 2


async def test_stream_refuses_strangers(server_a: str) -> None:
    async with httpx.AsyncClient(base_url=server_a, timeout=TIMEOUT) as client:
        ada = await Player.guest(client)
        game_id = (await ada.solo_game())["game_id"]
        url = f"/games/{game_id}/stream"

        response = await client.get(url)
        assert response.status_code == 401
        assert response.headers["content-type"].startswith("application/problem+json")

        bob = await Player.guest(client, "Bob")
        response = await client.get(url, headers=bob.headers)
        assert response.status_code == 403
        assert response.headers["content-type"].startswith("application/problem+json")

        response = await client.get(
            "/games/00000000-0000-4000-8000-000000000000/stream", headers=ada.headers
        )
        assert response.status_code == 404
