"""Issue 28, point 1: past capacity a request is refused before it costs anything.

The app with room for one request at a time (`max_in_flight=1`). A move is admitted and held
inside (the test holds its game's turn, as a slow database would); meanwhile every other
request that needs a place is refused with 503 `overloaded` and `Retry-After`, and changes
nothing; health checks and streams do not need a place. Once the held move finishes, the
refused move, sent again, is applied once. No timing is asserted: the held move holds its
place for as long as the test wants.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import asyncpg
import httpx
import pytest

from service.api.app import create_app
from service.settings import Settings
from tests.live_server import serve


@pytest.fixture
def busy_server(database_url: str) -> Iterator[tuple[Any, str]]:
    # A long lock timeout: the test holds a lock the held move waits for.
    settings = Settings.from_env().with_(
        max_in_flight=1, rate_limit=0, run_clock=False, db_lock_timeout="60s"
    )
    app = create_app(database_url, settings=settings)
    yield from ((app, base) for base in serve(app))


class Person:
    def __init__(self, http: httpx.AsyncClient, token: str) -> None:
        self.http = http
        self.headers = {"Authorization": f"Bearer {token}"}

    @classmethod
    async def sign_up(cls, http: httpx.AsyncClient, name: str) -> Person:
        answer = await http.post("/guests", json={"name": name})
        assert answer.status_code == 201, answer.text
        return cls(http, answer.json()["token"])

    async def solo_game(self) -> str:
        answer = await self.http.post("/solo-tables", json={"players": 2}, headers=self.headers)
        assert answer.status_code == 201, answer.text
        game_id: str = answer.json()["game"]["game_id"]
        return game_id

    async def view(self, game_id: str) -> dict[str, Any]:
        answer = await self.http.get(f"/games/{game_id}", headers=self.headers)
        assert answer.status_code == 200, answer.text
        view: dict[str, Any] = answer.json()
        return view

    def tap(self, game_id: str, bee: int, move_id: str) -> Any:
        return self.http.post(
            f"/games/{game_id}/moves",
            json={"type": "tap", "bee": bee, "move_id": move_id},
            headers=self.headers,
        )


async def test_past_capacity_requests_are_shed_before_any_work(
    busy_server: tuple[Any, str], database_url: str
) -> None:
    app, base = busy_server
    edge = app.asgi_handler
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        ada = await Person.sign_up(http, "Ada")
        bo = await Person.sign_up(http, "Bo")
        held_game, other_game = await ada.solo_game(), await bo.solo_game()
        before = await bo.view(other_game)
        bee = (await ada.view(held_game))["hand"][0]

        # Hold the database the way a slow one would: every write waits for this lock.
        db = await asyncpg.connect(database_url)
        lock = db.transaction()
        await lock.start()
        await db.execute("lock table processed_commands in exclusive mode")
        try:
            held = asyncio.ensure_future(ada.tap(held_game, bee, "held"))
            for _ in range(1000):  # until the held move has the one place (and waits inside)
                if edge.admission.active == 1:
                    break
                await asyncio.sleep(0.01)
            assert edge.admission.active == 1

            refused_move_id = uuid.uuid4().hex
            shed = await asyncio.gather(
                bo.tap(other_game, before["hand"][0], refused_move_id),
                http.get(f"/games/{other_game}", headers=bo.headers),
                http.post("/guests", json={"name": "Cy"}),
                http.post("/tables", json={"seats": 2}, headers=bo.headers),
            )
            for response in shed:
                assert response.status_code == 503, response.text
                assert response.headers["content-type"] == "application/problem+json"
                assert response.json()["code"] == "overloaded"
                assert int(response.headers["retry-after"]) >= 1
            assert shed[2].headers["retry-after"] == "2"  # sign-ups and new tables: later

            # No place needed: health checks, and streams (an open stream is never shed).
            assert (await http.get("/health/live")).status_code == 200
            async with http.stream(
                "GET", f"/games/{other_game}/stream", headers=bo.headers
            ) as stream:
                assert stream.status_code == 200
            assert not held.done()
        finally:
            await lock.rollback()
            await db.close()

        answer = await held
        assert answer.status_code == 200, answer.text
        assert edge.admission.active == 0

        # The shed requests changed nothing: the game is where it was, Bo sits at one table,
        # and the refused move, sent again, is applied once.
        assert (await bo.view(other_game))["version"] == before["version"]
        mine = (await http.get("/me/games", headers=bo.headers)).json()
        assert len(mine["tables"]) == 1, mine
        again = await bo.tap(other_game, before["hand"][0], refused_move_id)
        assert again.status_code == 200, again.text
        assert again.json()["version"] > before["version"]
        repeat = await bo.tap(other_game, before["hand"][0], refused_move_id)
        assert repeat.status_code == 200, repeat.text
        assert repeat.json()["version"] == again.json()["version"]
