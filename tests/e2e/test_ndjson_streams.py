"""Issue 44, item 8: both streams as NDJSON (`Accept: application/x-ndjson`), as lichess serves
its own: one JSON message a line, `{id, event, data}`, the same messages as the Server-Sent
Events form with the same resume rules (`after`, `Last-Event-ID`); an empty line is the
heartbeat. Any HTTP client reads them with a line split."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from service.api.app import create_app
from tests.live_server import serve

NDJSON = {"Accept": "application/x-ndjson"}


@pytest.fixture(scope="module")
def base(database_url: str) -> Iterator[str]:
    yield from serve(create_app(database_url, stream_heartbeat=0.2), timeout_graceful_shutdown=2)


def _finished_solo(base: str) -> tuple[dict[str, str], str, str]:
    guest = httpx.post(f"{base}/guests", json={"name": "Lines"}).json()
    auth = {"Authorization": f"Bearer {guest['token']}"}
    table = httpx.post(f"{base}/solo-tables", json={"players": 2}, headers=auth).json()
    view, n = table["game"], 0
    while view["phase"] != "ended":
        n += 1
        move = (
            {"type": "take_stem", "stem": view["choice"]["cheapest"]}
            if view["phase"] == "choosing"
            else {"type": "confirm", "bee": view["hand"][0]}
        )
        view = httpx.post(
            f"{base}/games/{view['game_id']}/moves", json={**move, "move_id": f"l{n}"}, headers=auth
        ).json()
    return auth, table["table_id"], view["game_id"]


def _lines(url: str, headers: dict[str, str], until: str | None = None) -> list[str]:
    read: list[str] = []
    with httpx.stream("GET", url, headers=headers, timeout=10) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("application/x-ndjson")
        assert response.headers["cache-control"] == "no-store"
        for line in response.iter_lines():
            read.append(line)
            if until is not None and line and json.loads(line)["event"] == until:
                break
    return read


def _sse_data(url: str, headers: dict[str, str]) -> list[Any]:
    with httpx.stream("GET", url, headers=headers, timeout=10) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        return [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]


def test_a_games_stream_as_ndjson_is_its_sse_messages_a_line_with_the_same_resume(
    base: str,
) -> None:
    auth, _table, game = _finished_solo(base)
    url = f"{base}/games/{game}/stream"
    messages = [json.loads(line) for line in _lines(url, {**auth, **NDJSON}) if line]
    assert [m["id"] for m in messages] == list(range(1, len(messages) + 1))
    assert all(m["event"] == m["data"]["type"] for m in messages)
    assert messages[-1]["event"] == "deal_revealed"  # it ends where the SSE form ends
    assert [m["data"] for m in messages] == _sse_data(url, auth)  # the same messages
    after = [json.loads(x) for x in _lines(f"{url}?after=3", {**auth, **NDJSON}) if x]
    assert after == messages[3:]
    resumed = [json.loads(x) for x in _lines(url, {**auth, **NDJSON, "Last-Event-ID": "5"}) if x]
    assert resumed == messages[5:]


def test_a_tables_stream_as_ndjson_beats_with_empty_lines(base: str) -> None:
    auth, table, _game = _finished_solo(base)
    url = f"{base}/tables/{table}/stream"
    read: list[str] = []
    with httpx.stream("GET", url, headers={**auth, **NDJSON}, timeout=10) as response:
        assert response.headers["content-type"].startswith("application/x-ndjson")
        for line in response.iter_lines():
            read.append(line)
            if read.count("") >= 2:
                break  # two heartbeats (every 0.2 s here) after what was logged
    messages = [json.loads(line) for line in read if line]
    assert [m["id"] for m in messages] == list(range(1, len(messages) + 1))
    assert messages[0]["event"] == "table_opened"
    assert "game_opened" in [m["event"] for m in messages]


def test_without_asking_for_ndjson_the_stream_is_server_sent_events(base: str) -> None:
    auth, _table, game = _finished_solo(base)
    url = f"{base}/games/{game}/stream"
    for accept in (
        None,
        "text/event-stream",
        "*/*",
        "application/x-ndjson, text/event-stream",
        "application/json",  # names neither form: disregarded, as before negotiation
    ):
        headers = auth if accept is None else {**auth, "Accept": accept}
        assert _sse_data(url, headers), accept


def test_a_form_refused_with_q_0_is_never_sent_and_none_acceptable_is_406(base: str) -> None:
    """RFC 9110 §12.5.1: the form the most specific media range weighs most; `q=0` refuses a
    form, even when a wildcard would take it; an `Accept` that takes neither form is 406
    problem+json, on both streams, before anything is opened (a ticket is not even read)."""
    auth, table, game = _finished_solo(base)
    for url in (f"{base}/games/{game}/stream", f"{base}/tables/{table}/stream"):
        for accept in (
            "text/event-stream;q=0, application/x-ndjson",
            "*/*;q=0.5, text/event-stream;q=0",
            "text/event-stream;q=0.3, application/x-ndjson;q=0.6",
        ):
            with httpx.stream("GET", url, headers={**auth, "Accept": accept}, timeout=10) as r:
                assert r.status_code == 200, accept
                assert r.headers["content-type"].startswith("application/x-ndjson"), accept
                assert json.loads(next(r.iter_lines()))["id"] == 1
        for accept in (
            "text/event-stream;q=0",
            "text/event-stream;q=0, application/x-ndjson;q=0",
            "*/*;q=0",
        ):
            refused = httpx.get(url, headers={**auth, "Accept": accept}, timeout=10)
            assert refused.status_code == 406, (accept, refused.text)
            assert refused.headers["content-type"] == "application/problem+json"
            problem = refused.json()
            assert (problem["code"], problem["retryable"]) == ("not-acceptable", False)
            assert "text/event-stream" in problem["detail"]
        # refused before the ticket or token is looked at: a made-up ticket is 406 too
        made_up = httpx.get(
            f"{url}?ticket=nope", headers={"Accept": "text/event-stream;q=0"}, timeout=10
        )
        assert made_up.status_code == 406
