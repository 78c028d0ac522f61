"""A small client for the HTTP API, so tests read as a player's actions (cosmicpython's habit)."""

from __future__ import annotations

import itertools
from typing import Any

from litestar.testing import AsyncTestClient

_move_ids = itertools.count(1)


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
