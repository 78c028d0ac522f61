"""A person over plain HTTP (httpx, sync): enough to play a solo game against a real process."""

from __future__ import annotations

import uuid
from typing import Any

import httpx


class Person:
    def __init__(self, base: str, name: str = "Ada") -> None:
        self.http = httpx.Client(base_url=base, timeout=15)
        r = self.http.post("/guests", json={"name": name})
        assert r.status_code == 201, r.text
        self.token: str = r.json()["token"]
        self.headers = {"Authorization": f"Bearer {self.token}"}

    def solo_game(self, players: int = 4) -> str:
        r = self.http.post("/solo-tables", json={"players": players}, headers=self.headers)
        assert r.status_code == 201, r.text
        game_id: str = r.json()["game"]["game_id"]
        return game_id

    def view(self, game_id: str) -> dict[str, Any]:
        r = self.http.get(f"/games/{game_id}", headers=self.headers)
        assert r.status_code == 200, r.text
        view: dict[str, Any] = r.json()
        return view

    def tap(self, game_id: str) -> httpx.Response:
        bee = self.view(game_id)["hand"][0]
        return self.move(game_id, {"type": "tap", "bee": bee})

    def move(self, game_id: str, move: dict[str, Any]) -> httpx.Response:
        return self.http.post(
            f"/games/{game_id}/moves",
            json={**move, "move_id": uuid.uuid4().hex},
            headers=self.headers,
        )

    def play_one(self, game_id: str) -> httpx.Response | None:
        """One move if the game awaits this person: confirm the lowest bee, or the cheapest stem."""
        v = self.view(game_id)
        if v["phase"] == "choosing" and v["choice"]["yours"]:
            return self.move(game_id, {"type": "take_stem", "stem": v["choice"]["cheapest"]})
        if v["phase"] == "picking" and v["confirmed"] is None:
            return self.move(game_id, {"type": "confirm", "bee": v["hand"][0]})
        return None
