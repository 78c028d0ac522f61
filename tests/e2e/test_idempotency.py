"""`Idempotency-Key` (issue 27): a retried create answers as the first did, marked as a replay,
and creates or spends nothing again; another request with the key is refused; a request still
in progress holds its key; keys expire after 24 hours; nothing stored is readable without the
key (service/api/idempotency.py)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.api.idempotency import TTL, Keys
from service.settings import Settings
from service.store.idempotency import PostgresIdempotencyRecords
from service.store.pool import Pool
from tests.e2e.api_client import Api
from tests.live_server import serve


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2031, 3, 1, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
async def client(database_url: str, clock: Clock) -> AsyncIterator[AsyncTestClient[Any]]:
    settings = Settings.from_env().with_(guests_per_hour=2)
    app = create_app(database_url, settings=settings, clock=clock, run_clock=False)
    async with AsyncTestClient(app=app) as client:
        yield client


def key() -> str:
    return str(uuid.uuid4())


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def guest(client: AsyncTestClient[Any], name: str = "Ada") -> str:
    # The per-address allowance is 2 an hour here: most guests are made an hour apart.
    response = await client.post("/guests", json={"name": name})
    if response.status_code == 429:
        pytest.fail("the sign-up allowance ran out: the tests made too many guests")
    token: str = response.json()["token"]
    return token


@pytest.fixture
async def ada(client: AsyncTestClient[Any], clock: Clock) -> str:
    clock.now += timedelta(hours=2)  # a fresh sign-up allowance for every test
    return await guest(client)


async def my_tables(client: AsyncTestClient[Any], token: str) -> list[str]:
    mine = (await client.get("/me/games", headers=bearer(token))).json()
    return [t["table_id"] for t in mine["tables"]]


async def test_a_retried_solo_table_is_the_first_one_replayed(
    client: AsyncTestClient[Any], ada: str
) -> None:
    headers = {**bearer(ada), "Idempotency-Key": key()}
    first = await client.post("/solo-tables", json={"players": 3}, headers=headers)
    again = await client.post("/solo-tables", json={"players": 3}, headers=headers)
    assert first.status_code == again.status_code == 201, again.text
    assert "idempotent-replayed" not in first.headers
    assert again.headers["idempotent-replayed"] == "true"
    assert again.content == first.content
    assert again.headers["content-type"] == first.headers["content-type"]
    assert await my_tables(client, ada) == [first.json()["table_id"]]
    # The same JSON written otherwise is the same request.
    spaced = await client.post(
        "/solo-tables",
        content=b'{ "players" : 3 }',
        headers={**headers, "Content-Type": "application/json"},
    )
    assert spaced.content == first.content and spaced.headers["idempotent-replayed"] == "true"
    # Without a key, or with another, it is a new table.
    other = await client.post("/solo-tables", json={"players": 3}, headers=bearer(ada))
    assert other.status_code == 201 and other.json()["table_id"] != first.json()["table_id"]


async def test_a_retried_guest_spends_the_sign_up_allowance_once(
    client: AsyncTestClient[Any], clock: Clock
) -> None:
    clock.now += timedelta(hours=2)
    headers = {"Idempotency-Key": key()}
    first = await client.post("/guests", json={"name": "Bea"}, headers=headers)
    for _ in range(3):
        again = await client.post("/guests", json={"name": "Bea"}, headers=headers)
        assert again.status_code == 201 and again.json() == first.json()
        assert again.headers["idempotent-replayed"] == "true"
        assert again.headers["cache-control"] == "no-store"
    # The allowance is 2 an hour: the replays spent none of it.
    assert (await client.post("/guests", json={"name": "Cy"})).status_code == 201
    assert (await client.post("/guests", json={"name": "Di"})).status_code == 429
    # The replayed token is the guest's and works.
    me = await client.get("/me", headers=bearer(first.json()["token"]))
    assert me.status_code == 200 and me.json()["player_id"] == first.json()["player_id"]


async def test_a_key_sent_with_another_request_is_refused(
    client: AsyncTestClient[Any], ada: str
) -> None:
    headers = {**bearer(ada), "Idempotency-Key": key()}
    assert (
        await client.post("/solo-tables", json={"players": 3}, headers=headers)
    ).status_code == 201
    for path, body in (("/solo-tables", {"players": 4}), ("/tables", {"seats": 3})):
        refused = await client.post(path, json=body, headers=headers)
        assert refused.status_code == 409, refused.text
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.json()["code"] == "idempotency-key-reused"
    assert len(await my_tables(client, ada)) == 1


async def test_keys_are_the_callers_own(client: AsyncTestClient[Any], ada: str) -> None:
    shared = {"Idempotency-Key": key()}
    mine = await client.post("/solo-tables", json={}, headers={**bearer(ada), **shared})
    bea = await guest(client, "Bea")
    theirs = await client.post("/solo-tables", json={}, headers={**bearer(bea), **shared})
    assert theirs.status_code == 201 and "idempotent-replayed" not in theirs.headers
    assert theirs.json()["table_id"] != mine.json()["table_id"]


async def test_a_refusal_is_not_kept(client: AsyncTestClient[Any], ada: str) -> None:
    headers = {**bearer(ada), "Idempotency-Key": key()}
    bad = await client.post("/solo-tables", json={"players": 9}, headers=headers)
    assert bad.status_code == 400
    good = await client.post("/solo-tables", json={"players": 2}, headers=headers)
    assert good.status_code == 201 and "idempotent-replayed" not in good.headers


async def test_a_malformed_key_is_refused(client: AsyncTestClient[Any], ada: str) -> None:
    for bad in ("short", "x" * 256, "has space in it, 16+"):
        refused = await client.post(
            "/solo-tables", json={}, headers={**bearer(ada), "Idempotency-Key": bad}
        )
        assert refused.status_code == 400 and refused.json()["code"] == "bad-request"
    assert await my_tables(client, ada) == []


def test_two_keys_are_refused(database_url: str) -> None:
    """Review 4: with two Idempotency-Key headers the first was taken, so a retry that sent
    only the second did the request again (a second table). Over real HTTP (uvicorn), where
    the two arrive as two headers; the test client folds them into one."""
    app = create_app(database_url, run_clock=False, rate_limit_per_second=0)
    server = serve(app)
    base = next(server)
    try:
        with httpx.Client(base_url=base, timeout=10) as http:
            token = http.post("/guests", json={"name": "Twice"}).json()["token"]
            first, second = key(), key()
            headers = [
                ("authorization", f"Bearer {token}"),
                ("idempotency-key", first),
                ("idempotency-key", second),
            ]
            refused = http.post("/solo-tables", json={}, headers=headers)
            assert refused.status_code == 400, refused.text
            assert refused.json()["code"] == "bad-request"
            mine = http.get("/me/games", headers=bearer(token)).json()["tables"]
            assert mine == []
            made = http.post(
                "/solo-tables", json={}, headers={**bearer(token), "Idempotency-Key": second}
            )
            assert made.status_code == 201, made.text
            assert len(http.get("/me/games", headers=bearer(token)).json()["tables"]) == 1
    finally:
        next(server, None)  # past its yield: the server stops and its thread is joined


async def test_a_request_in_progress_holds_its_key(
    client: AsyncTestClient[Any], ada: str, pool: Pool, clock: Clock
) -> None:
    """Claimed as a request on another instance would claim it, then asked for over HTTP."""
    the_key = key()
    keys = Keys(the_key, "token:" + hashlib.sha256(ada.encode()).hexdigest())
    fingerprint = keys.fingerprint("POST", "/solo-tables", b"", b'{"players":2}')
    records = PostgresIdempotencyRecords(pool)
    claim = await records.claim(
        keys.lookup, fingerprint, clock(), ttl=TTL, stale_after=timedelta(seconds=60)
    )
    assert claim.state == "new"
    headers = {**bearer(ada), "Idempotency-Key": the_key}
    busy = await client.post("/solo-tables", json={"players": 2}, headers=headers)
    assert busy.status_code == 409, busy.text
    assert busy.json()["code"] == "idempotency-key-in-use" and busy.headers["retry-after"] == "1"
    await records.release(keys.lookup)
    done = await client.post("/solo-tables", json={"players": 2}, headers=headers)
    assert done.status_code == 201


async def test_racing_requests_with_one_key_create_one_table(
    client: AsyncTestClient[Any], ada: str
) -> None:
    headers = {**bearer(ada), "Idempotency-Key": key()}
    answers = await asyncio.gather(
        *(client.post("/tables", json={"seats": 2}, headers=headers) for _ in range(6))
    )
    created = [a for a in answers if a.status_code == 201]
    assert created and all(a.content == created[0].content for a in created)
    assert all(
        a.status_code == 201
        or (a.status_code == 409 and a.json()["code"] == "idempotency-key-in-use")
        for a in answers
    ), [a.text for a in answers]
    assert await my_tables(client, ada) == [created[0].json()["table_id"]]


async def test_a_key_expires_after_24_hours(
    client: AsyncTestClient[Any], ada: str, clock: Clock, pool: Pool
) -> None:
    headers = {**bearer(ada), "Idempotency-Key": key()}
    first = await client.post("/solo-tables", json={}, headers=headers)
    clock.now += TTL - timedelta(seconds=1)
    assert (await client.post("/solo-tables", json={}, headers=headers)).content == first.content
    clock.now += timedelta(seconds=1)
    later = await client.post("/solo-tables", json={}, headers=headers)
    assert later.status_code == 201 and "idempotent-replayed" not in later.headers
    assert later.json()["table_id"] != first.json()["table_id"]
    # The sweeper deletes what expired.
    swept = await PostgresIdempotencyRecords(pool).sweep(clock.now + TTL)
    assert swept >= 2


async def test_nothing_stored_is_readable(
    client: AsyncTestClient[Any], pool: Pool, clock: Clock
) -> None:
    clock.now += timedelta(hours=2)
    the_key = key()
    answer = await client.post(
        "/guests", json={"name": "Quill"}, headers={"Idempotency-Key": the_key}
    )
    body = answer.json()
    secrets = [body["token"], body["player_id"], "Quill", the_key]
    rows = await pool.fetch("select * from idempotency_keys where started_at = $1", clock.now)
    assert len(rows) == 1
    stored = b"".join(
        bytes(v) for v in rows[0].values() if isinstance(v, bytes | bytearray | memoryview)
    )
    for secret in secrets:
        for form in (
            secret.encode(),
            secret.encode().hex().encode(),
            base64.b64encode(secret.encode()),
            hashlib.sha256(secret.encode()).digest(),
        ):
            assert form not in stored, secret
    # With the key (and the caller's address), the answer opens.
    keys = Keys(the_key, "address:testclient")
    opened = keys.open(bytes(rows[0]["answer"]))
    assert opened is not None and body["token"].encode() in opened.body
    assert Keys(key(), "address:testclient").open(bytes(rows[0]["answer"])) is None


async def test_a_repeated_move_says_it_is_a_replay(client: AsyncTestClient[Any], ada: str) -> None:
    api = Api(client, ada)
    table = await api.solo_table(2)
    game_id = table["game"]["game_id"]
    bee = table["game"]["hand"][0]
    move = {"type": "tap", "bee": bee, "move_id": "tap-1"}
    first = await client.post(f"/games/{game_id}/moves", json=move, headers=bearer(ada))
    again = await client.post(f"/games/{game_id}/moves", json=move, headers=bearer(ada))
    assert first.status_code == again.status_code == 200
    assert "idempotent-replayed" not in first.headers
    assert again.headers["idempotent-replayed"] == "true"


async def test_every_answer_holding_a_credential_is_no_store_and_so_is_its_replay(
    client: AsyncTestClient[Any], ada: str
) -> None:
    name = f"Cred{uuid.uuid4().hex[:8]}"
    account = {"name": name, "password": "correct horse"}
    table = await Api(client, ada).solo_table(2)
    calls = [
        ("/accounts", account, {}),
        ("/sessions", account, {}),
        (f"/games/{table['game']['game_id']}/stream-tickets", None, bearer(ada)),
        (f"/tables/{table['table_id']}/stream-tickets", None, bearer(ada)),
    ]
    for path, body, auth in calls:
        headers = {**auth, "Idempotency-Key": key()}
        first = await client.post(path, json=body, headers=headers)
        again = await client.post(path, json=body, headers=headers)
        assert first.status_code == 201, (path, first.text)
        assert first.headers["cache-control"] == again.headers["cache-control"] == "no-store"
        assert again.headers["idempotent-replayed"] == "true" and again.content == first.content


async def test_a_key_without_a_token_is_the_operations_401(
    client: AsyncTestClient[Any], clock: Clock
) -> None:
    """An operation that needs a token refuses a caller without one with 401, key or no key,
    and with any key (schemathesis' stateful phase found a 409 for a key the address had used)."""
    clock.now += timedelta(hours=2)
    the_key = key()
    made = await client.post(
        "/guests", json={"name": "Keyed"}, headers={"Idempotency-Key": the_key}
    )
    assert made.status_code == 201  # the key is the address's now
    for path, body in (("/solo-tables", {}), ("/tables", {"seats": 2}), ("/solo-tables", {})):
        refused = await client.post(path, json=body, headers={"Idempotency-Key": the_key})
        assert refused.status_code == 401, refused.text
        assert refused.json()["code"] == "unauthorized"
