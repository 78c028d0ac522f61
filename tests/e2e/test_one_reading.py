"""A request reads one way only (review 4): a JSON object with a key twice, a single-valued query
parameter given twice, and an id in the path written other than as the document's `format:
uuid` were all taken (the last key, the last value, Python's lenient UUID reading), so two
readers of the same bytes (a proxy, a log, a client's own check) could disagree with the server
on what was asked. Each is now a 4xx problem that changes nothing; the same request written
once is accepted."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.api.dependencies import duplicate_key
from tests.e2e.api_client import Api

DOCUMENT = json.loads(
    (Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text()
)


@pytest.fixture(scope="module")
async def setup(database_url: str) -> AsyncIterator[tuple[AsyncTestClient[Any], Api, str]]:
    app = create_app(database_url, run_clock=False, rate_limit_per_second=0)
    async with AsyncTestClient(app=app) as client:
        ada = await Api(client).guest("Ada")
        solo = await ada.solo_table()
        yield client, ada, solo["game"]["game_id"]


def test_a_duplicate_key_is_found_at_any_depth_and_only_then() -> None:
    assert duplicate_key(b'{"name": "a", "name": "b"}') == "name"
    assert duplicate_key(b'{"x": {"bee": 1, "bee": 2}, "y": 1}') == "bee"
    assert duplicate_key(b'[{"a": 1}, {"a": 2}]') is None  # two objects, one key each
    assert duplicate_key(b'{"type": "tap", "bee": 3, "move_id": "a:b:c"}') is None
    # What the standard library cannot read (an integer past its 4,300 digits) is not a 500.
    assert duplicate_key(b'{"a": 1, "b": ' + b"1" * 5000 + b"}") is None


def test_a_flat_body_is_checked_without_a_second_decode_and_read_the_same() -> None:
    """A move's body (one object, no array, no escape) is checked on its bytes (issue 28): the
    same verdict as the standard library's reading, key for key."""
    from service.api import dependencies

    bodies = [
        b'{"type": "tap", "move_id": "m1", "bee": 3}',
        b'{"type":"tap","move_id":"m1","bee":3,"bee":4}',
        b'{ "bee" : 3 , "type" : "tap" , "bee"\t:\n4 }',
        b'{"move_id": "bee:", "bee": 3, "x": "bee"}',  # a value that reads like a key
        b'{"move_id": "a\\":b", "bee": 3}',  # an escape: the slow path
        b'{"\xc3\xa9": 1, "\xc3\xa9": 2}',  # a key past ASCII, as UTF-8
        b'{"a": "{", "a": 1}',  # a brace in a string: the slow path
        b'{"a": 1, "b": 2, "a": 3, "b": 4}',
    ]
    for body in bodies:
        slow = None
        try:
            json.loads(body, object_pairs_hook=dependencies.no_duplicate_keys)
        except dependencies.DuplicateKey as exc:
            slow = exc.args[0]
        assert duplicate_key(body) == slow, body
        if b"\\" not in body and body.count(b"{") == 1:
            assert dependencies.flat_duplicate_key(body) == slow, body
    assert duplicate_key(b'{"a": 1, "b": 2, "a": 3, "b": 4}') == "a"
    assert duplicate_key(b'{"\xc3\xa9": 1, "\xc3\xa9": 2}') == "\u00e9"


async def test_a_key_given_twice_is_refused_and_creates_nothing(
    setup: tuple[AsyncTestClient[Any], Api, str],
) -> None:
    client, ada, _ = setup
    before = (await client.get("/me/games", headers=ada.headers)).json()
    twice = await client.post(
        "/solo-tables",
        content=b'{"players": 2, "players": 8}',
        headers={**ada.headers, "content-type": "application/json"},
    )
    assert twice.status_code == 400, twice.text
    assert twice.headers["content-type"] == "application/problem+json"
    assert twice.json()["code"] == "bad-request" and "players" in twice.json()["detail"]
    assert (await client.get("/me/games", headers=ada.headers)).json() == before
    guest = await client.post(
        "/guests",
        content=b'{"name": "Ada", "name": "Admin"}',
        headers={"content-type": "application/json"},
    )
    assert guest.status_code == 400 and guest.json()["code"] == "bad-request", guest.text
    once = await client.post(
        "/guests", content=b'{"name": "Admin"}', headers={"content-type": "application/json"}
    )
    assert once.status_code == 201, once.text


async def test_a_move_with_a_key_twice_is_refused_and_plays_nothing(
    setup: tuple[AsyncTestClient[Any], Api, str],
) -> None:
    client, ada, game_id = setup
    view = await ada.game(game_id)
    low, high = view["hand"][0], view["hand"][-1]
    body = f'{{"type": "tap", "bee": {low}, "bee": {high}, "move_id": "twice"}}'.encode()
    answer = await client.post(
        f"/games/{game_id}/moves",
        content=body,
        headers={**ada.headers, "content-type": "application/json"},
    )
    assert answer.status_code == 400 and answer.json()["code"] == "bad-request", answer.text
    after = await ada.game(game_id)
    assert after["version"] == view["version"] and after["tapped"] is None


@pytest.mark.parametrize(
    "query",
    ["after=1&after=2", "limit=5&limit=6", "after=0&limit=1&after=0"],
)
async def test_a_single_valued_query_parameter_given_twice_is_400(
    setup: tuple[AsyncTestClient[Any], Api, str], query: str
) -> None:
    client, ada, game_id = setup
    answer = await client.get(f"/games/{game_id}/events?{query}", headers=ada.headers)
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == "bad-request"
    lobby = await client.get("/tables?limit=1&limit=2", headers=ada.headers)
    assert lobby.status_code == 400 and lobby.json()["code"] == "bad-request"
    once = await client.get(f"/games/{game_id}/events?after=1&limit=2", headers=ada.headers)
    assert once.status_code == 200 and [e["version"] for e in once.json()["events"]] == [2, 3]


async def test_a_repeatable_query_parameter_still_repeats(
    setup: tuple[AsyncTestClient[Any], Api, str],
) -> None:
    client, ada, game_id = setup
    hex64 = "0" * 64
    answer = await client.get(
        f"/games/{game_id}/verification?expect_head=1:{hex64}&expect_head=2:{hex64}",
        headers=ada.headers,
    )
    # The game is running: the refusal of a valid request, not of its repeated parameter.
    assert answer.status_code == 409 and answer.json()["code"] == "game-not-over", answer.text


async def test_an_id_not_written_as_a_uuid_names_nothing(
    setup: tuple[AsyncTestClient[Any], Api, str],
) -> None:
    client, ada, game_id = setup
    bare = game_id.replace("-", "")
    for path in (bare, "{" + game_id + "}", "urn:uuid:" + game_id, "%7B" + game_id + "%7D"):
        answer = await client.get(f"/games/{path}", headers=ada.headers)
        assert answer.status_code == 404, (path, answer.text)
        assert answer.json()["code"] == "not-found"
        moved = await client.post(
            f"/games/{path}/moves",
            json={"type": "tap", "bee": 1, "move_id": "as-a-uuid"},
            headers=ada.headers,
        )
        assert moved.status_code == 404, (path, moved.text)
    for path in (game_id, game_id.upper()):  # RFC 9562: either case
        answer = await client.get(f"/games/{path}", headers=ada.headers)
        assert answer.status_code == 200, (path, answer.text)


def test_the_streams_after_is_bounded_in_the_document_as_on_the_server() -> None:
    for path in ("/games/{game_id}/stream", "/tables/{table_id}/stream"):
        (after,) = [
            p for p in DOCUMENT["paths"][path]["get"]["parameters"] if p.get("name") == "after"
        ]
        (integer,) = [v for v in after["schema"]["oneOf"] if v.get("type") == "integer"]
        assert (integer["minimum"], integer["maximum"]) == (0, 2**31 - 1), after


async def test_the_streams_after_below_zero_is_400(
    setup: tuple[AsyncTestClient[Any], Api, str],
) -> None:
    client, ada, game_id = setup
    answer = await client.get(f"/games/{game_id}/stream?after=-1", headers=ada.headers)
    assert answer.status_code == 400 and answer.json()["code"] == "bad-request", answer.text


@pytest.mark.parametrize(
    "query",
    ["has_free_seat=1", "has_free_seat=True", "has_free_seat=0", "limit=5.0", "offset=1e1"],
)
async def test_a_query_scalar_is_read_only_as_the_document_writes_it(
    setup: tuple[AsyncTestClient[Any], Api, str], query: str
) -> None:
    """A boolean query parameter is `true` or `false` and an integer its digits (OpenAPI's form
    style): Litestar took `1`, `True` and `5.0` too, which a client holding the document refuses
    to send, so the server was laxer than its document."""
    client, ada, _ = setup
    answer = await client.get(f"/tables?{query}", headers=ada.headers)
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    name = query.split("=")[0]
    assert answer.json()["code"] == "bad-request"
    assert answer.json()["extra"] == [
        {"message": answer.json()["extra"][0]["message"], "key": name, "source": "query"}
    ]
    written = {"has_free_seat": "true", "limit": "5", "offset": "10"}[name]
    assert (await client.get(f"/tables?{name}={written}", headers=ada.headers)).status_code == 200
    spelled = await client.get("/tables?has_free_seat=false&limit=1&offset=0", headers=ada.headers)
    assert spelled.status_code == 200 and spelled.json()["limit"] == 1
