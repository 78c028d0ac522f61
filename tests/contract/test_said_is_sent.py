"""Issue 44, item 9: the document says what is sent. Streams declared `no-store` and sent
`no-cache`; a 409 `idempotency-key-in-use` sent an undeclared `Retry-After`; a body too large
or too slow (413, 408) was answered by operations that did not list it (a 20 kB body on
`GET /health` is a 413); `Last-Event-ID`'s pattern sat beside a `oneOf` with null, so the
document took `Last-Event-ID: null`, which the server refuses; the health probes took
unknown query parameters, which every other operation refuses."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

DOCUMENT = json.loads(
    (Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text()
)


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, ops in DOCUMENT["paths"].items()
        for method, op in ops.items()
        if isinstance(op, dict) and "responses" in op
    ]


def _parameters(op: dict[str, Any]) -> list[dict[str, Any]]:
    """An operation's parameters, references resolved."""
    named = DOCUMENT["components"].get("parameters", {})
    return [
        named[p["$ref"].rsplit("/", 1)[1]] if "$ref" in p else p for p in op.get("parameters", ())
    ]


def _finished_game(base: str) -> tuple[dict[str, str], str]:
    guest = httpx.post(f"{base}/guests", json={"name": "Said"}).json()
    auth = {"Authorization": f"Bearer {guest['token']}"}
    view = httpx.post(f"{base}/solo-tables", json={"players": 2}, headers=auth).json()["game"]
    game, n = view["game_id"], 0
    while view["phase"] != "ended":
        n += 1
        move = (
            {"type": "take_stem", "stem": view["choice"]["cheapest"]}
            if view["phase"] == "choosing"
            else {"type": "confirm", "bee": view["hand"][0]}
        )
        answer = httpx.post(
            f"{base}/games/{game}/moves", json={**move, "move_id": f"s{n}"}, headers=auth
        )
        view = answer.json()
    return auth, game


def test_a_stream_is_sent_no_store_as_declared(live_server: str) -> None:
    auth, game = _finished_game(live_server)
    declared = DOCUMENT["components"]["headers"]["Cache-Control"]["schema"]["enum"]
    with httpx.stream("GET", f"{live_server}/games/{game}/stream", headers=auth) as stream:
        assert stream.status_code == 200
        assert [stream.headers["cache-control"]] == declared == ["no-store"]


def test_every_operation_lists_a_body_too_large_and_too_slow(live_server: str) -> None:
    missing = [
        f"{method.upper()} {path}"
        for path, method, op in _operations()
        if not {"408", "413"} <= set(op["responses"])
    ]
    assert missing == []
    answer = httpx.request(
        "GET",
        f"{live_server}/health",
        content=b"x" * 20_000,
        headers={"content-type": "application/json", "content-length": "20000"},
    )
    assert answer.status_code == 413 and answer.json()["code"] == "body-too-large"


def test_a_409_of_a_keyed_operation_declares_retry_after() -> None:
    keyed = 0
    for _path, _method, op in _operations():
        parameters = {p["name"] for p in _parameters(op)}
        conflict = op["responses"].get("409")
        if "Idempotency-Key" in parameters:
            keyed += 1
            assert conflict is not None  # idempotency-key-in-use is a 409
            ref = conflict["headers"]["Retry-After"]["$ref"].rsplit("/", 1)[1]
            header = DOCUMENT["components"]["headers"][ref]
            assert header["required"] is False and "idempotency-key-in-use" in header["description"]
    assert keyed > 10


def test_last_event_id_is_text_the_document_and_the_server_agree_on(live_server: str) -> None:
    auth, game = _finished_game(live_server)
    for path, _method, op in _operations():
        for parameter in _parameters(op):
            if parameter["in"] == "header":
                assert "oneOf" not in parameter["schema"], (path, parameter["name"])
    (schema,) = {
        json.dumps(p["schema"], sort_keys=True)
        for _path, _method, op in _operations()
        for p in _parameters(op)
        if p["name"] == "Last-Event-ID"
    }
    pattern = json.loads(schema)["pattern"]
    for value, valid in (("null", False), ("7", True), ("007", False)):
        assert bool(re.search(pattern, value)) is valid, value
        with httpx.stream(
            "GET", f"{live_server}/games/{game}/stream", headers={**auth, "Last-Event-ID": value}
        ) as stream:
            assert (stream.status_code == 200) is valid, (value, stream.status_code)


def test_the_health_probes_refuse_an_unknown_query_parameter(live_server: str) -> None:
    for path in ("/health", "/health/live", "/health/ready"):
        answer = httpx.get(f"{live_server}{path}?verbose=1")
        assert answer.status_code == 400, path
        assert answer.json()["code"] == "bad-request"
        assert httpx.get(f"{live_server}{path}").status_code == 200
