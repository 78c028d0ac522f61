"""Answers that last as long as their client reads them (service/api/edge.py, item 4): event
streams and a player's games in bulk. They are admitted outside the in-flight limit, exports
up to a cap of their own, and a client that takes no bytes for `send_timeout` is dropped, its
connection aborted. Found by the review of issue 43's export: sixteen connections that never
read `GET /players/{id}/games` held every place of an instance, so its moves got 503.

The app here is a stand-in that sends an endless answer; `send` waits for ever, as uvicorn's
does while a client's socket buffers are full."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from service.api import admission
from service.api.edge import Edge

EXPORT_PATH = "/players/0b6f6b33-6a9e-4a3b-9a37-1a1f1f1f1f1f/games"


def scope(path: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [],
        **extra,
    }


async def endless(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    while True:
        await send({"type": "http.response.body", "body": b"x" * 1024, "more_body": True})


async def short(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok", "more_body": False})


async def never_disconnects() -> dict[str, Any]:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


class Client:
    """What the edge sends to one client; `reading` False: its bytes are never taken."""

    def __init__(self, *, reading: bool) -> None:
        self.reading = reading
        self.messages: list[dict[str, Any]] = []
        self.aborted = False

    async def send(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        if message["type"] == "http.response.body" and not self.reading:
            await asyncio.Event().wait()  # the socket's buffers are full, for ever

    def abort(self) -> None:
        self.aborted = True

    @property
    def status(self) -> int:
        return int(self.messages[0]["status"])


async def serve(the_edge: Edge, path: str, client: Client, **extra: Any) -> None:
    """One request through the edge, from `client` (ASGI's types, loosely)."""
    request: Any = scope(path, **extra)
    receive: Any = never_disconnects
    send: Any = client.send
    await the_edge(request, receive, send)


def edge(app: Any, **limits: Any) -> Edge:
    settings: dict[str, Any] = {
        "max_in_flight": 1,
        "max_loop_lag": 0,
        "max_streams": 100,
        "max_body_bytes": 1024,
        "body_timeout": 1.0,
        "max_exports": 2,
        "send_timeout": 0.2,
        "record_metrics": False,
        **limits,
    }
    return Edge(app, **settings)


@pytest.mark.parametrize(
    ("method", "path", "kind"),
    [
        ("GET", "/games/3f1c/stream", admission.STREAM),
        ("GET", "/tables/3f1c/stream", admission.STREAM),
        ("GET", "/players/3f1c/games", admission.EXPORT),
        ("POST", "/players/3f1c/games", None),
        ("GET", "/players/3f1c", None),
        ("GET", "/me/history", None),
    ],
)
def test_which_answers_last_as_long_as_their_client_reads(
    method: str, path: str, kind: str | None
) -> None:
    assert admission.long_answer(method, path) == kind


@pytest.mark.parametrize("path", [EXPORT_PATH, "/games/3f1c/stream"])
async def test_a_client_that_never_reads_is_dropped_and_its_place_given_back(path: str) -> None:
    the_edge = edge(endless)
    client = Client(reading=False)
    await asyncio.wait_for(serve(the_edge, path, client, **{"swarm.abort": client.abort}), 5)
    assert client.status == 200
    assert client.aborted  # its connection, and the bytes buffered for it, are gone
    assert the_edge.exports == 0 and the_edge.streams == 0


async def test_without_a_server_to_abort_the_app_is_still_stopped() -> None:
    the_edge = edge(endless)
    client = Client(reading=False)
    await asyncio.wait_for(serve(the_edge, EXPORT_PATH, client), 5)
    assert the_edge.exports == 0


async def test_exports_take_no_place_of_the_in_flight_limit() -> None:
    """The attack of the review, in small: the in-flight limit is 1, two exports are held by
    clients that do not read, and a move's view is still served at once."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await (endless if scope["path"] == EXPORT_PATH else short)(scope, receive, send)

    the_edge = edge(app, send_timeout=60.0)
    stuck = [Client(reading=False) for _ in range(2)]
    held = [asyncio.ensure_future(serve(the_edge, EXPORT_PATH, c)) for c in stuck]
    try:
        while the_edge.exports < 2:
            await asyncio.sleep(0.01)
        player = Client(reading=True)
        await asyncio.wait_for(serve(the_edge, "/games/3f1c", player), 1)
        assert player.status == 200
        # A third export finds the exports' own cap full: refused at once, nothing else is.
        third = Client(reading=True)
        await asyncio.wait_for(serve(the_edge, EXPORT_PATH, third), 1)
        assert third.status == 503
        assert dict(third.messages[0]["headers"])[b"retry-after"] == b"5"
    finally:
        for task in held:
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)
    assert the_edge.exports == 0


async def test_a_client_that_reads_gets_the_whole_answer() -> None:
    the_edge = edge(short)
    client = Client(reading=True)
    await serve(the_edge, EXPORT_PATH, client)
    assert client.status == 200 and not client.aborted
    assert client.messages[-1] == {"type": "http.response.body", "body": b"ok", "more_body": False}
