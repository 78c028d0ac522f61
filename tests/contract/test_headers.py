"""The headers the document declares are the ones real answers carry (issue 27, item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

import service

DOCUMENT = json.loads(
    (Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text()
)


def test_real_answers_carry_the_declared_headers(live_server: str) -> None:
    guest = httpx.post(f"{live_server}/guests", json={"name": "Headers"})
    assert guest.status_code == 201
    assert guest.headers["cache-control"] == "no-store"
    assert guest.headers["api-version"] == service.__version__ == DOCUMENT["info"]["version"]
    assert guest.headers["x-request-id"]
    assert int(guest.headers["ratelimit-limit"]) > 0
    assert int(guest.headers["ratelimit-remaining"]) >= 0
    token = guest.json()["token"]
    ticket_url = f"{live_server}/tables/00000000-0000-0000-0000-000000000000/stream-tickets"
    ticket = httpx.post(ticket_url, headers={"Authorization": f"Bearer {token}"})
    assert ticket.status_code == 404 and ticket.headers["cache-control"] == "no-store"
    anonymous = httpx.get(f"{live_server}/me")
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert anonymous.headers["api-version"] == service.__version__
    wrong = httpx.post(f"{live_server}/sessions", json={"name": "Nobody", "password": "x" * 8})
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
    health = httpx.get(f"{live_server}/health/live")
    assert health.headers["api-version"] == service.__version__
    assert "ratelimit-limit" not in health.headers
    unknown = httpx.get(f"{live_server}/no/such/path")
    assert unknown.status_code == 404 and unknown.headers["api-version"] == service.__version__


def test_no_answer_may_be_cached(live_server: str) -> None:
    """A game view holds the caller's hand: no browser disk cache or shared cache may keep any
    answer (views, refusals, unknown paths, health), while the board's own files say no-cache."""
    guest = httpx.post(f"{live_server}/guests", json={"name": "Cacheless"}).json()
    auth = {"Authorization": f"Bearer {guest['token']}"}
    table = httpx.post(f"{live_server}/solo-tables", json={"players": 2}, headers=auth)
    assert table.status_code == 201 and table.json()["game"]["hand"]
    game = httpx.get(f"{live_server}/games/{table.json()['game']['game_id']}", headers=auth)
    refused = httpx.post(f"{live_server}/solo-tables", json={"players": 99}, headers=auth)
    for answer in (
        table,
        game,
        refused,
        httpx.get(f"{live_server}/me"),
        httpx.get(f"{live_server}/no/such/path"),
        httpx.get(f"{live_server}/health/live"),
    ):
        assert answer.headers["cache-control"] == "no-store", answer.request.url
    assert refused.status_code == 400
    assert httpx.get(f"{live_server}/").headers["cache-control"] == "no-cache"
    for response in (
        op["responses"]
        for ops in DOCUMENT["paths"].values()
        for op in ops.values()
        if isinstance(op, dict) and "responses" in op
    ):
        for status, answer in response.items():
            assert "Cache-Control" in answer["headers"], status
