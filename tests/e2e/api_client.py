"""A small client for the HTTP API, so tests read as a player's actions (cosmicpython's habit)."""

from __future__ import annotations

import itertools
from typing import Any

from litestar.testing import AsyncTestClient

_move_ids = itertools.count(1)


def first_of(log: dict[str, Any], event_type: str) -> dict[str, Any]:
    """The first event of a type in a listGameEvents page."""
    event: dict[str, Any] = next(e for e in log["events"] if e["type"] == event_type)
    return event


def without_server_time(view: dict[str, Any]) -> dict[str, Any]:
    """A view minus the server's clock, which differs between two answers of the same state."""
    return {key: value for key, value in view.items() if key != "server_time"}


class Api:
    def __init__(self, client: AsyncTestClient[Any], token: str | None = None) -> None:
        self.client = client
        self.token = token

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def guest(self, name: str = "Ada") -> Api:
        response = await self.client.post("/guests", json={"name": name})
        assert response.status_code == 201, response.text
        return Api(self.client, response.json()["token"])

    async def solo_table(self, players: int = 4) -> dict[str, Any]:
        response = await self.client.post(
            "/solo-tables", json={"players": players}, headers=self.headers
        )
        assert response.status_code == 201, response.text
        body: dict[str, Any] = response.json()
        return body

    async def create_table(self, **body: Any) -> dict[str, Any]:
        response = await self.client.post("/tables", json=body, headers=self.headers)
        assert response.status_code == 201, response.text
        table: dict[str, Any] = response.json()
        return table

    async def table_action(self, table_id: str, action: str) -> Any:
        """POST /tables/{id}/{action}: seats (join), leave, start, bees, games (play again)."""
        return await self.client.post(f"/tables/{table_id}/{action}", headers=self.headers)

    async def ok_table_action(self, table_id: str, action: str) -> dict[str, Any]:
        response = await self.table_action(table_id, action)
        assert response.status_code in (200, 201), response.text
        table: dict[str, Any] = response.json()
        return table

    async def table(self, table_id: str) -> dict[str, Any]:
        response = await self.client.get(f"/tables/{table_id}", headers=self.headers)
        assert response.status_code == 200, response.text
        table: dict[str, Any] = response.json()
        return table

    async def lobby(self, **params: Any) -> dict[str, Any]:
        response = await self.client.get("/tables", params=params, headers=self.headers)
        assert response.status_code == 200, response.text
        page: dict[str, Any] = response.json()
        return page

    async def game(self, game_id: str) -> dict[str, Any]:
        response = await self.client.get(f"/games/{game_id}", headers=self.headers)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def move(self, game_id: str, **move: Any) -> Any:
        move.setdefault("move_id", f"m{next(_move_ids)}")
        return await self.client.post(f"/games/{game_id}/moves", json=move, headers=self.headers)

    async def ok_move(self, game_id: str, **move: Any) -> dict[str, Any]:
        response = await self.move(game_id, **move)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def events(self, game_id: str, after: int = 0) -> dict[str, Any]:
        response = await self.client.get(
            f"/games/{game_id}/events", params={"after": after}, headers=self.headers
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def play_to_the_end(self, game_id: str) -> dict[str, Any]:
        """Play the lowest bee each turn and take the cheapest stem when too low."""
        view = await self.game(game_id)
        while view["phase"] != "ended":
            if view["phase"] == "choosing":
                assert view["choice"]["yours"]
                view = await self.ok_move(
                    game_id, type="take_stem", stem=view["choice"]["cheapest"]
                )
            else:
                view = await self.ok_move(game_id, type="confirm", bee=view["hand"][0])
        return view


async def play_online_to_the_end(players: dict[int, Api], game_id: str) -> dict[str, Any]:
    """Each person (by seat) confirms their lowest bee when they are awaited, and takes the
    cheapest stem when their bee is too low, until the game ends. Returns the last view."""
    view: dict[str, Any] = {}
    while True:
        progressed = False
        for seat, api in players.items():
            view = await api.game(game_id)
            if view["phase"] == "ended":
                return view
            me = view["seats"][seat - 1]
            if me["status"] == "left":
                continue
            if view["phase"] == "choosing" and view["choice"]["yours"]:
                await api.ok_move(game_id, type="take_stem", stem=view["choice"]["cheapest"])
                progressed = True
            elif view["phase"] == "picking" and view["confirmed"] is None and view["hand"]:
                await api.ok_move(game_id, type="confirm", bee=view["hand"][0])
                progressed = True
        assert progressed, view
