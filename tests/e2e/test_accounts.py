"""Accounts over HTTP against a real PostgreSQL: register, log in and out, profiles, the
leaderboard, and the login rate limit.

The app runs on a clock the tests move: each test starts a day after the previous one, so the
15-minute login windows of one test never reach the next (the test client always comes from
the same address), and expiry is tested by jumping past the token lifetime.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from service.api.account_routes import ACCOUNT_CONTROLLERS
from service.api.app import create_app
from service.domain.ledger import SIGN_UP_COINS, PlayerStats
from service.store.events import EventStore
from service.store.pool import Pool
from service.store.projections import statement
from service.store.rows import Standing
from service.usecases.accounts import FAILURE_WINDOW, MAX_FAILURES
from service.usecases.identity import TOKEN_LIFETIME

PASSWORD = "correct horse battery"


class MovableClock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


@pytest.fixture(scope="module")
def clock() -> MovableClock:
    return MovableClock()


@pytest.fixture(scope="module")
async def client(database_url: str, clock: MovableClock) -> AsyncIterator[AsyncTestClient[Any]]:
    app: Litestar = create_app(database_url, clock=clock, run_clock=False)
    if not any(r.path == "/me" for r in app.routes):  # until create_app registers them itself
        for controller in ACCOUNT_CONTROLLERS:
            app.register(controller)
    async with AsyncTestClient(app=app) as client:
        yield client


@pytest.fixture(autouse=True)
def next_day(clock: MovableClock) -> None:
    clock.advance(timedelta(days=1))


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:10]}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def register(
    client: AsyncTestClient[Any], name: str, password: str = PASSWORD, token: str | None = None
) -> dict[str, Any]:
    response = await client.post(
        "/accounts",
        json={"name": name, "password": password},
        headers=bearer(token) if token else {},
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def login(client: AsyncTestClient[Any], name: str, password: str = PASSWORD) -> Any:
    return await client.post("/sessions", json={"name": name, "password": password})


async def me(client: AsyncTestClient[Any], token: str) -> dict[str, Any]:
    response = await client.get("/me", headers=bearer(token))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


# --- registration ----------------------------------------------------------------------------


async def test_a_new_account_starts_with_the_sign_up_coins_at_level_1(
    client: AsyncTestClient[Any], clock: MovableClock
) -> None:
    name = unique("Bea")
    account = await register(client, name)
    assert account["name"] == name and account["registered"] is True
    assert PASSWORD not in str(account)
    assert datetime.fromisoformat(account["expires_at"]) == clock.now + TOKEN_LIFETIME

    profile = await me(client, account["token"])
    assert profile == {
        "player_id": account["player_id"],
        "name": name,
        "registered": True,
        "xp": 0,
        "level": 1,
        "games_played": 0,
        "games_won": 0,
        "badges": [],
        "coins": {"balance": SIGN_UP_COINS, "held": 0},
        # A newcomer's rating: the model's start, provisional (issue 43).
        "rating": {
            "points": 1500,
            "provisional": True,
            "games": 0,
            "mu": 25.0,
            "sigma": 25.0 / 3.0,
        },
    }


async def test_a_guest_who_registers_keeps_their_identity_and_their_guest_token(
    client: AsyncTestClient[Any], pool: Pool
) -> None:
    guest = (await client.post("/guests", json={"name": "Guest Gus"})).json()
    before = await me(client, guest["token"])
    assert before["registered"] is False and before["coins"] == {"balance": 0, "held": 0}

    name = unique("Gus")
    account = await register(client, name, token=guest["token"])
    assert account["player_id"] == guest["player_id"]
    assert account["token"] != guest["token"]

    for token in (guest["token"], account["token"]):
        profile = await me(client, token)
        assert profile["player_id"] == guest["player_id"]
        assert profile["name"] == name and profile["registered"] is True
        assert profile["coins"]["balance"] == SIGN_UP_COINS

    store = EventStore(pool)
    player_stream = await store.read_stream(f"player-{guest['player_id']}")
    assert [(e.version, e.type) for e in player_stream] == [
        (1, "guest_created"),
        (2, "account_registered"),
    ]
    wallet_stream = await store.read_stream(f"wallet-{guest['player_id']}")
    assert [e.type for e in wallet_stream] == ["coins_granted"]
    assert b'"sign_up"' in wallet_stream[0].data

    again = await client.post(
        "/accounts",
        json={"name": unique("Gus"), "password": PASSWORD},
        headers=bearer(guest["token"]),
    )
    assert again.status_code == 409 and again.json()["code"] == "already-registered"


async def test_names_are_unique_regardless_of_case(client: AsyncTestClient[Any]) -> None:
    name = unique("Cleo")
    await register(client, name)
    for taken in (name, name.upper(), name.lower()):
        response = await client.post("/accounts", json={"name": taken, "password": PASSWORD})
        assert response.status_code == 409, response.text
        assert response.json()["code"] == "name-taken"


async def test_two_registrations_racing_for_one_name_give_one_account(
    client: AsyncTestClient[Any],
) -> None:
    name = unique("Race")
    responses = await asyncio.gather(
        *(
            client.post("/accounts", json={"name": n, "password": PASSWORD})
            for n in (name, name.upper(), name.lower())
        )
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201, 409, 409], [r.text for r in responses]
    assert all(r.json()["code"] == "name-taken" for r in responses if r.status_code == 409)


async def test_bad_bodies_are_refused_without_echoing_the_password(
    client: AsyncTestClient[Any],
) -> None:
    short = "s3cr3t!"
    for body in (
        {"name": unique("Dot"), "password": short},
        {"name": "", "password": PASSWORD},
        {"name": unique("Dot"), "password": PASSWORD, "admin": True},
    ):
        response = await client.post("/accounts", json=body)
        assert response.status_code == 400, response.text
        assert short not in response.text and PASSWORD not in response.text


async def test_an_unknown_token_cannot_register_as_a_guest(client: AsyncTestClient[Any]) -> None:
    response = await client.post(
        "/accounts",
        json={"name": unique("Eve"), "password": PASSWORD},
        headers=bearer("not-a-token"),
    )
    assert response.status_code == 401


# --- sessions --------------------------------------------------------------------------------


async def test_login_with_the_right_password_gives_a_working_token(
    client: AsyncTestClient[Any],
) -> None:
    name = unique("Fay")
    account = await register(client, name)
    response = await login(client, name.upper())  # names are case-insensitive
    assert response.status_code == 201, response.text
    session = response.json()
    assert session["player_id"] == account["player_id"] and session["name"] == name
    assert session["token"] not in (account["token"],)
    assert (await me(client, session["token"]))["player_id"] == account["player_id"]


async def test_a_wrong_password_and_an_unknown_name_get_the_same_answer(
    client: AsyncTestClient[Any],
) -> None:
    name = unique("Gil")
    await register(client, name)
    wrong = await login(client, name, "not the password")
    unknown = await login(client, unique("Nobody"))
    for response in (wrong, unknown):
        assert response.status_code == 401
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["code"] == "invalid-credentials"
    assert wrong.json()["detail"] == unknown.json()["detail"]
    assert "not the password" not in wrong.text


async def test_successful_logins_do_not_count_as_failures(client: AsyncTestClient[Any]) -> None:
    name = unique("Hal")
    await register(client, name)
    for _ in range(MAX_FAILURES + 2):
        assert (await login(client, name)).status_code == 201


async def test_after_five_failures_for_a_name_even_the_right_password_gets_429(
    client: AsyncTestClient[Any], clock: MovableClock
) -> None:
    name = unique("Ivy")
    await register(client, name)
    for _ in range(MAX_FAILURES):
        assert (await login(client, name, "wrong password")).status_code == 401
    refused = await login(client, name)
    assert refused.status_code == 429, refused.text
    assert refused.json()["code"] == "too-many-logins"
    retry_after = int(refused.headers["retry-after"])
    assert 0 < retry_after <= FAILURE_WINDOW.total_seconds()

    clock.advance(timedelta(seconds=retry_after))
    assert (await login(client, name)).status_code == 201


async def test_after_five_failures_from_one_address_every_name_gets_429(
    client: AsyncTestClient[Any], clock: MovableClock
) -> None:
    name = unique("Jo")
    await register(client, name)
    for _ in range(MAX_FAILURES):  # a different name each time: only the address adds up
        assert (await login(client, unique("Guess"), "wrong password")).status_code == 401
    refused = await login(client, name)
    assert refused.status_code == 429
    clock.advance(FAILURE_WINDOW)
    assert (await login(client, name)).status_code == 201


async def test_a_burst_of_parallel_guesses_cannot_slip_past_the_limit(
    client: AsyncTestClient[Any],
) -> None:
    name = unique("Kit")
    await register(client, name)
    responses = await asyncio.gather(*(login(client, name, f"guess {i}") for i in range(12)))
    statuses = [r.status_code for r in responses]
    assert statuses.count(401) == MAX_FAILURES, statuses
    assert statuses.count(429) == 12 - MAX_FAILURES, statuses


async def test_logout_stops_that_token_at_once_and_only_that_one(
    client: AsyncTestClient[Any],
) -> None:
    name = unique("Lu")
    account = await register(client, name)
    session = (await login(client, name)).json()
    await me(client, session["token"])

    out = await client.delete("/sessions/current", headers=bearer(session["token"]))
    assert out.status_code == 204, out.text
    gone = await client.get("/me", headers=bearer(session["token"]))
    assert gone.status_code == 401
    assert gone.json()["code"] == "unauthorized"
    assert (
        await client.delete("/sessions/current", headers=bearer(session["token"]))
    ).status_code == 401
    await me(client, account["token"])  # the other device stays logged in


async def test_an_expired_token_is_refused(
    client: AsyncTestClient[Any], clock: MovableClock
) -> None:
    account = await register(client, unique("Mo"))
    clock.advance(TOKEN_LIFETIME - timedelta(seconds=1))
    await me(client, account["token"])
    clock.advance(timedelta(seconds=1))
    assert (await client.get("/me", headers=bearer(account["token"]))).status_code == 401


# --- profiles and the leaderboard ------------------------------------------------------------


async def test_me_is_always_the_callers_own(client: AsyncTestClient[Any]) -> None:
    ned = await register(client, unique("Ned"))
    ola = await register(client, unique("Ola"))
    assert (await me(client, ned["token"]))["player_id"] == ned["player_id"]
    # There is no way to name another player: a query parameter /me does not take is refused.
    response = await client.get(
        "/me", params={"player_id": ola["player_id"]}, headers=bearer(ned["token"])
    )
    assert response.status_code == 400 and response.json()["code"] == "bad-request"
    assert ola["player_id"] not in response.text
    assert (await client.get("/me")).status_code == 401


async def test_a_public_profile_shows_no_coins(client: AsyncTestClient[Any], pool: Pool) -> None:
    viewer = await register(client, unique("Pia"))
    subject = await register(client, unique("Quinn"))
    sql, args = statement(
        Standing.of(
            subject["player_id"],
            subject["name"],
            PlayerStats(games_played=3, games_won=2, xp=1200, badges=("first_game", "first_win")),
        )
    )
    await pool.execute(sql, *args)

    response = await client.get(f"/players/{subject['player_id']}", headers=bearer(viewer["token"]))
    assert response.status_code == 200, response.text
    profile = response.json()
    assert "coins" not in profile
    assert profile["name"] == subject["name"] and profile["registered"] is True
    assert (profile["games_played"], profile["games_won"], profile["xp"]) == (3, 2, 1200)
    assert profile["level"] == 3
    assert [b["name"] for b in profile["badges"]] == ["first_game", "first_win"]

    guest = (await client.post("/guests", json={"name": "Rex"})).json()
    shown = await client.get(f"/players/{guest['player_id']}", headers=bearer(viewer["token"]))
    assert shown.json()["name"] == "Rex" and shown.json()["registered"] is False

    missing = await client.get(f"/players/{uuid.uuid4()}", headers=bearer(viewer["token"]))
    assert missing.status_code == 404
    bad = await client.get("/players/not-a-uuid", headers=bearer(viewer["token"]))
    assert bad.status_code == 404  # no such route, as for tables and games


async def test_the_leaderboard_ranks_by_wins_or_xp_a_page_at_a_time(
    client: AsyncTestClient[Any], pool: Pool
) -> None:
    viewer = await register(client, unique("Sam"))
    # Far above anything real games reach in the shared test database, so these lead.
    top = {"A": (10**9 + 3, 10**13 + 1), "B": (10**9 + 3, 10**13 + 2), "C": (10**9 + 1, 10**13 + 5)}
    ids = {}
    for label, (won, xp) in top.items():
        account = await register(client, unique(label))
        ids[account["player_id"]] = label
        sql, args = statement(
            Standing.of(
                account["player_id"],
                account["name"],
                PlayerStats(games_played=won + 1, games_won=won, xp=xp),
            )
        )
        await pool.execute(sql, *args)

    async def page(**params: Any) -> dict[str, Any]:
        response = await client.get("/leaderboard", params=params, headers=bearer(viewer["token"]))
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    first = await page(by="wins", limit=2)
    assert [ids.get(e["player_id"]) for e in first["entries"]] == ["B", "A"]
    assert [e["rank"] for e in first["entries"]] == [1, 2]
    assert first["entries"][0]["level"] == 1 + (10**13 + 2) // 500
    assert (first["limit"], first["offset"], first["next_offset"]) == (2, 0, 2)
    second = await page(by="wins", limit=2, offset=first["next_offset"])
    assert ids.get(second["entries"][0]["player_id"]) == "C"
    assert second["entries"][0]["rank"] == 3

    by_xp = await page(by="xp", limit=3)
    assert [ids.get(e["player_id"]) for e in by_xp["entries"]] == ["C", "B", "A"]
    assert "coins" not in by_xp["entries"][0]

    assert (await page())["by"] == "wins"
    last = await page(by="xp", limit=100, offset=1_000_000)
    assert last["entries"] == [] and last["next_offset"] is None
    wrong = await client.get(
        "/leaderboard", params={"by": "stings"}, headers=bearer(viewer["token"])
    )
    assert wrong.status_code == 400
