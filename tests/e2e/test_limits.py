"""Limits keyed on who the caller really is (issue 13, item 4): a valid token's player, else
the client address (X-Forwarded-For only from trusted proxies); a bounded store; guests and
accounts limited per address."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import cast

import httpx
import pytest
from litestar.enums import ScopeType
from litestar.testing import AsyncTestClient
from litestar.types import ASGIApp, Receive, Scope, Send

from service.api import limits
from service.api.app import create_app
from tests.e2e.api_client import Api
from tests.live_server import serve


def from_address(app: ASGIApp, host: str | None = None) -> ASGIApp:
    """`app` as if every request came from `host` (a fresh address by default): the test
    client's own ("testclient") is shared by the whole suite, failed logins and all."""
    host = host or f"198.18.{uuid.uuid4().int % 256}.{uuid.uuid4().int % 256}"

    async def moved(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP:
            scope = {**scope, "client": (host, 4000)}
        await app(scope, receive, send)

    return moved


def scope(peer: str, forwarded: str | None = None) -> Scope:
    headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded is not None else []
    return cast(Scope, {"type": "http", "client": (peer, 4000), "headers": headers})


def test_forwarded_for_counts_only_from_a_trusted_proxy() -> None:
    proxies = limits.trusted_proxies("10.0.0.0/8, 192.168.1.1")
    # Not a proxy: the header is the client's own say-so, ignored.
    assert limits.client_address(scope("203.0.113.9", "1.2.3.4"), proxies) == "203.0.113.9"
    # From a proxy: the rightmost hop that is not one of ours is the client.
    assert limits.client_address(scope("10.1.2.3", "1.2.3.4, 198.51.100.7"), proxies) == (
        "198.51.100.7"
    )
    assert limits.client_address(scope("10.1.2.3", "6.6.6.6, 1.2.3.4, 192.168.1.1"), proxies) == (
        "1.2.3.4"
    )
    assert limits.client_address(scope("10.1.2.3"), proxies) == "10.1.2.3"
    assert limits.client_address(scope("10.1.2.3", "1.2.3.4"), ()) == "10.1.2.3"  # none trusted
    anyone = limits.trusted_proxies("*")
    assert limits.client_address(scope("10.1.2.3", "1.2.3.4, 5.6.7.8"), anyone) == "1.2.3.4"


async def test_the_rate_limit_store_stays_bounded() -> None:
    store = limits.SweptMemoryStore(max_keys=10)
    for i in range(100):
        await store.set(f"k{i}", b"1", expires_in=60)
    assert len(store._store) <= 10
    assert await store.get("k99") == b"1"  # the newest are kept


async def test_made_up_tokens_share_their_address_budget(database_url: str) -> None:
    app = create_app(database_url, run_clock=False, rate_limit_per_second=5)
    async with AsyncTestClient(app=app) as client:
        answers = [
            await client.get("/tables", headers={"Authorization": f"Bearer junk-{i}"})
            for i in range(20)
        ]
        codes = [a.status_code for a in answers]
        assert 429 in codes and set(codes) <= {401, 429}, codes
        store = app.stores.get("rate_limit")
        keys = [k for k in store._store if "junk" in k or "addr:" in k]  # type: ignore[attr-defined]
        assert len(keys) <= 1, keys  # one address, not one entry per made-up token


async def test_two_tokens_of_one_player_share_one_budget(database_url: str) -> None:
    app = create_app(database_url, run_clock=False, rate_limit_per_second=10)
    async with AsyncTestClient(app=from_address(app)) as client:
        name, password = f"rl{uuid.uuid4().hex[:10]}", "long enough"
        made = await client.post("/accounts", json={"name": name, "password": password})
        assert made.status_code == 201, made.text
        again = await client.post("/sessions", json={"name": name, "password": password})
        assert again.status_code == 201, again.text
        first, second = (
            {"Authorization": f"Bearer {answer.json()['token']}"} for answer in (made, again)
        )

        async def remaining(headers: dict[str, str]) -> int:
            answer = await client.get("/me", headers=headers)
            assert answer.status_code == 200, answer.text
            return int(answer.headers["ratelimit-remaining"])

        # One budget: the second token's request spends from what the first one left (tried
        # a few times, in case a one-second window ends between the two requests).
        pairs = [(await remaining(first), await remaining(second)) for _ in range(3)]
        assert any(b == a - 1 for a, b in pairs), pairs
        other = await Api(client).guest("Bob")  # another player has a budget of their own
        assert await remaining(other.headers) == 9


@pytest.fixture
def proxied(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A live server behind a 'proxy' at 127.0.0.1, with low sign-up limits."""
    monkeypatch.setenv("SWARM_FORWARDED_ALLOW_IPS", "127.0.0.1")  # the default, said aloud
    monkeypatch.setenv("SWARM_GUESTS_PER_HOUR", "3")
    monkeypatch.setenv("SWARM_ACCOUNTS_PER_HOUR", "2")
    yield from serve(create_app(database_url, run_clock=False, rate_limit_per_second=0))


def test_guests_and_accounts_are_limited_per_client_address(proxied: str) -> None:
    ada, bob = f"198.51.100.{uuid.uuid4().int % 250}", f"2001:db8::{uuid.uuid4().hex[:4]}"
    with httpx.Client(base_url=proxied) as http:

        def guest(address: str) -> httpx.Response:
            return http.post("/guests", json={"name": "G"}, headers={"X-Forwarded-For": address})

        def account(address: str) -> httpx.Response:
            body = {"name": "a" + uuid.uuid4().hex[:12], "password": "long enough"}
            return http.post("/accounts", json=body, headers={"X-Forwarded-For": address})

        assert [guest(ada).status_code for _ in range(3)] == [201] * 3
        refused = guest(ada)
        assert refused.status_code == 429, refused.text
        assert refused.json()["code"] == "too-many-sign-ups"
        assert 1 <= int(refused.headers["retry-after"]) <= 3600
        assert guest(bob).status_code == 201  # another address has its own budget

        assert [account(ada).status_code for _ in range(2)] == [201] * 2
        refused = account(ada)
        assert refused.status_code == 429 and refused.json()["code"] == "too-many-sign-ups"
        assert account(bob).status_code == 201
