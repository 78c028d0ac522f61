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
    for accept in (None, "text/event-stream", "*/*", "application/json"):
        headers = auth if accept is None else {**auth, "Accept": accept}
        assert _sse_data(url, headers), accept
