"""What a browser front end needs (issue 11 §5, issue 13 §9), against a real uvicorn server:
CORS for allowed origins only, stream tickets instead of a bearer token in a URL, streams that
end at logout, listMyGames for a reload, and spectators who see nobody's hand."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from service.api.app import create_app
from tests.e2e.test_streams import Message, sse_messages
from tests.live_server import serve

ORIGIN = "https://board.example"
TIMEOUT = httpx.Timeout(10.0)


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[str]:
    # A short heartbeat: an expired token is noticed on the next tick.
    app = create_app(database_url, stream_heartbeat=0.3, allowed_origins=[ORIGIN])
    yield from serve(app, timeout_graceful_shutdown=2)


@pytest.fixture(scope="module")
def slow_server(database_url: str) -> Iterator[str]:
    # A heartbeat far longer than the test: a stream can only end through the revocation's
    # wake-up (NOTIFY), not by the token check on a heartbeat tick.
    app = create_app(database_url, stream_heartbeat=60)
    yield from serve(app, timeout_graceful_shutdown=2)


@pytest.fixture
async def slow_http(slow_server: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=slow_server, timeout=TIMEOUT) as client:
        yield client


@pytest.fixture
async def http(server: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server, timeout=TIMEOUT) as client:
        yield client


async def guest(http: httpx.AsyncClient, name: str) -> dict[str, str]:
    response = await http.post("/guests", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


async def online_game(http: httpx.AsyncClient) -> tuple[dict[str, str], dict[str, str], Any]:
    hana, bob = await guest(http, "Hana"), await guest(http, "Bob")
    table = (await http.post("/tables", json={"seats": 2}, headers=hana)).json()
    joined = await http.post(f"/tables/{table['table_id']}/seats", headers=bob)
    assert joined.status_code == 200, joined.text
    return hana, bob, joined.json()


async def test_cors_answers_allowed_origins_only(http: httpx.AsyncClient) -> None:
    preflight = await http.options(
        "/games/00000000-0000-4000-8000-000000000000/moves",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert preflight.status_code in (200, 204), preflight.text
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    simple = await http.get("/health", headers={"Origin": ORIGIN})
    assert simple.headers["access-control-allow-origin"] == ORIGIN
    other = await http.get("/health", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers
    refused = await http.options(
        "/health",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
    )
    assert refused.headers.get("access-control-allow-origin") != "https://evil.example"
    # A refused preflight is a problem like every other refusal (issue 27), not plain text.
    assert refused.status_code == 400
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["code"] == "bad-request" and "CORS" in refused.json()["detail"]
    idempotent = await http.options(
        "/tables",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
        },
    )
    assert idempotent.status_code in (200, 204), idempotent.text


async def test_options_lists_every_method_of_its_path(http: httpx.AsyncClient) -> None:
    """Every path's OPTIONS lists all its methods (it left GET out of `/tables`)."""
    from service.api.app import create_app as app_factory

    paths: dict[str, set[str]] = {}
    for route in app_factory().routes:
        methods = getattr(route, "methods", None)
        if methods and "{" not in route.path and route.path.startswith(("/tables", "/guests")):
            paths[route.path] = set(methods)
    assert paths["/tables"] >= {"GET", "POST"}
    for path, methods in paths.items():
        answer = await http.options(path)
        assert set(answer.headers["allow"].split(", ")) == methods, path


def test_no_cors_without_an_allow_list(database_url: str) -> None:
    from litestar.testing import TestClient

    with TestClient(create_app(database_url, allowed_origins=[])) as client:
        response = client.get("/health", headers={"Origin": ORIGIN})
        assert response.status_code == 200
        assert "access-control-allow-origin" not in response.headers


async def first_messages(response: httpx.Response, count: int) -> list[Message]:
    messages: list[Message] = []
    async for message in sse_messages(response):
        if message.event is not None:
            messages.append(message)
        if len(messages) == count:
            break
    return messages


async def test_a_ticket_opens_one_stream_without_the_token_in_the_url(
    http: httpx.AsyncClient,
) -> None:
    hana, bob, joined = await online_game(http)
    gid, tid = joined["game"]["game_id"], joined["table_id"]
    issued = await http.post(f"/games/{gid}/stream-tickets", headers=bob)
    assert issued.status_code == 201, issued.text
    ticket = issued.json()
    assert ticket["stream_url"] == f"/games/{gid}/stream?ticket={ticket['ticket']}"
    token = bob["Authorization"].split()[1]
    assert token not in ticket["stream_url"]
    async with http.stream("GET", ticket["stream_url"]) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        messages = await first_messages(response, 2)
    assert [m.event for m in messages] == ["deal_committed", "game_started"]
    hands = messages[1].data["data"]["hands"]
    assert hands[0] is None and hands[1] is not None  # Bob's ticket: Bob's hand only
    # Reusable for EventSource's reconnects, scoped to its stream.
    async with http.stream("GET", ticket["stream_url"], headers={"Last-Event-ID": "1"}) as again:
        assert again.status_code == 200
        assert [m.id for m in await first_messages(again, 1)] == [2]
    other = await http.get(f"/tables/{tid}/stream", params={"ticket": ticket["ticket"]})
    assert other.status_code == 401 and other.json()["code"] == "unauthorized"
    forged = await http.get(f"/games/{gid}/stream", params={"ticket": "x" * 43})
    assert forged.status_code == 401
    table_ticket = (await http.post(f"/tables/{tid}/stream-tickets", headers=hana)).json()
    async with http.stream("GET", table_ticket["stream_url"]) as response:
        assert response.status_code == 200
        assert (await first_messages(response, 1))[0].event == "table_opened"


async def test_a_solo_game_gives_tickets_to_its_player_only(http: httpx.AsyncClient) -> None:
    ada, bob = await guest(http, "Ada"), await guest(http, "Bob")
    game = (await http.post("/solo-tables", json={}, headers=ada)).json()["game"]
    refused = await http.post(f"/games/{game['game_id']}/stream-tickets", headers=bob)
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert (await http.get(f"/games/{game['game_id']}", headers=bob)).status_code == 403
    unknown = await http.post(
        "/games/00000000-0000-4000-8000-000000000000/stream-tickets", headers=ada
    )
    assert unknown.status_code == 404


async def test_logout_ends_open_streams_and_their_tickets(slow_http: httpx.AsyncClient) -> None:
    http = slow_http
    _, bob, joined = await online_game(http)
    tid, gid = joined["table_id"], joined["game"]["game_id"]
    account = await http.post("/accounts", json={"name": "Hana-stream", "password": "pw" * 5})
    assert account.status_code == 201, account.text
    session = {"Authorization": f"Bearer {account.json()['token']}"}
    ticket = (await http.post(f"/tables/{tid}/stream-tickets", headers=session)).json()
    closed: dict[str, bool] = {}

    async def follow(name: str, url: str, headers: dict[str, str]) -> None:
        async with http.stream("GET", url, headers=headers) as response:
            assert response.status_code == 200
            async for _ in sse_messages(response):
                pass
        closed[name] = True

    followers = [
        asyncio.create_task(follow("header", f"/tables/{tid}/stream", session)),
        asyncio.create_task(follow("ticket", ticket["stream_url"], {})),
        asyncio.create_task(follow("game", f"/games/{gid}/stream", session)),
    ]
    await asyncio.sleep(0.5)
    assert not closed
    logout = await http.delete("/sessions/current", headers=session)
    assert logout.status_code == 204
    await asyncio.wait_for(asyncio.gather(*followers), timeout=5)
    assert closed == {"header": True, "ticket": True, "game": True}
    after = await http.get(ticket["stream_url"])
    assert after.status_code == 401
    # Others' streams are untouched: Bob still follows.
    async with http.stream("GET", f"/tables/{tid}/stream", headers=bob) as response:
        assert response.status_code == 200


async def test_list_my_games_shows_where_i_sit_solo_included(http: httpx.AsyncClient) -> None:
    hana, bob, joined = await online_game(http)
    solo = (await http.post("/solo-tables", json={}, headers=hana)).json()
    mine = await http.get("/me/games", headers=hana)
    assert mine.status_code == 200, mine.text
    tables = mine.json()["tables"]
    assert [t["table_id"] for t in tables] == [solo["table_id"], joined["table_id"]]
    assert tables[0]["mode"] == "solo" and tables[0]["game_id"] == solo["game"]["game_id"]
    assert tables[0]["your_move"] and tables[0]["game_phase"] == "picking"
    assert tables[1] == {
        "table_id": joined["table_id"],
        "mode": "online",
        "status": "playing",
        "seat": 1,
        "stake": 0,
        "game_id": joined["game"]["game_id"],
        "game_phase": "picking",
        "turn": 1,
        "your_move": True,
        "turns": 10,
    }
    bobs = (await http.get("/me/games", headers=bob)).json()["tables"]
    assert [(t["table_id"], t["seat"]) for t in bobs] == [(joined["table_id"], 2)]
    left = await http.post(f"/tables/{joined['table_id']}/leave", headers=bob)
    assert left.status_code == 200
    assert (await http.get("/me/games", headers=bob)).json()["tables"] == []
    newcomer = await guest(http, "New")
    assert (await http.get("/me/games", headers=newcomer)).json() == {
        "tables": [],
        "partial": False,
    }


async def test_a_spectator_follows_an_online_game_and_sees_no_hand(
    http: httpx.AsyncClient,
) -> None:
    hana, _, joined = await online_game(http)
    gid = joined["game"]["game_id"]
    cat = await guest(http, "Cat")
    view = (await http.get(f"/games/{gid}", headers=cat)).json()
    assert view["you"] is None and view["hand"] == [] and view["hand_stings"] == []
    assert view["tapped"] is None and view["forecast"] == []
    hana_view = (await http.get(f"/games/{gid}", headers=hana)).json()
    tapped = await http.post(
        f"/games/{gid}/moves",
        json={"type": "tap", "bee": hana_view["hand"][0], "move_id": "t1"},
        headers=hana,
    )
    assert tapped.status_code == 200
    log = (await http.get(f"/games/{gid}/events", headers=cat)).json()["events"]
    started = next(e for e in log if e["type"] == "game_started")
    assert started["data"]["hands"] == [None, None]
    taps = [e for e in log if e["type"] == "bee_tapped"]
    assert taps and all(e["data"]["bee"] is None for e in taps)
    async with http.stream("GET", f"/games/{gid}/stream", headers=cat) as response:
        assert response.status_code == 200
        streamed = await first_messages(response, len(log))
    assert [m.data for m in streamed] == log
    # A spectator cannot move.
    refused = await http.post(
        f"/games/{gid}/moves", json={"type": "tap", "bee": 1, "move_id": "x"}, headers=cat
    )
    assert refused.status_code == 403
