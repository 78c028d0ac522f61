"""Play now (issue 43): one request seats a person at a waiting table of the kind they ask
for, or opens one; two people asking at once end at the same table, on one instance and on
two instances of the service sharing the database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from tests.e2e.api_client import Api
from tests.e2e.test_coins import member


async def play_now(api: Api, **body: Any) -> dict[str, Any]:
    response = await api.client.post("/play-now", json=body, headers=api.headers)
    assert response.status_code == 200, response.text
    table: dict[str, Any] = response.json()
    return table


@pytest.fixture
async def other_instance(database_url: str) -> AsyncIterator[AsyncTestClient[Any]]:
    async with AsyncTestClient(app=create_app(database_url)) as client:
        yield client


async def test_play_now_opens_a_table_and_seats_the_next_asker_there(anon: Api) -> None:
    ann, ben, cy = await anon.guest("Ann"), await anon.guest("Ben"), await anon.guest("Cy")
    opened = await play_now(ann, seats=3)
    assert opened["status"] == "open" and opened["you"] == 1 and opened["rated"] is False
    assert opened["capacity"] == 3 and opened["stake"] == 0
    # Another kind of table is another table.
    rated = await play_now(ben, seats=3, rated=True)
    assert rated["table_id"] != opened["table_id"] and rated["rated"] is True
    seated = await play_now(cy, seats=3)
    assert seated["table_id"] == opened["table_id"] and seated["you"] == 2
    # Asking again while seated there opens no second seat for you: another table.
    again = await play_now(cy, seats=3)
    assert again["table_id"] != opened["table_id"]
    bad = await ann.client.post("/play-now", json={"seats": 9}, headers=ann.headers)
    assert bad.status_code == 400
    guest_buy_in = await ann.client.post("/play-now", json={"stake": 10}, headers=ann.headers)
    assert guest_buy_in.status_code == 403
    assert guest_buy_in.json()["code"] == "buy-in-needs-account"


async def test_two_people_asking_at_once_end_at_the_same_table(anon: Api) -> None:
    for _ in range(3):
        ann, ben = await member(anon, "Ann"), await member(anon, "Ben")
        stake = 7  # a kind nobody else asks for: only these two race for it
        first, second = await asyncio.gather(
            play_now(ann, seats=2, stake=stake, rated=True),
            play_now(ben, seats=2, stake=stake, rated=True),
        )
        assert first["table_id"] == second["table_id"]
        assert {first["you"], second["you"]} == {1, 2}
        table = await ann.table(first["table_id"])
        assert table["status"] == "playing"  # two of two seats: the game was dealt


async def test_two_instances_seat_two_askers_at_the_same_table(
    anon: Api, other_instance: AsyncTestClient[Any]
) -> None:
    for _ in range(3):
        ann = await anon.guest("Ann")
        ben = Api(other_instance, (await anon.guest("Ben")).token)
        first, second = await asyncio.gather(
            play_now(ann, seats=2, rated=True),  # no other test asks for this kind
            play_now(ben, seats=2, rated=True),
        )
        assert first["table_id"] == second["table_id"], (first, second)
        assert {first["you"], second["you"]} == {1, 2}


async def test_an_ask_that_would_be_refused_names_no_table(anon: Api, database_url: str) -> None:
    """Found by a review: an ask named its table on the kind's stream before opening it was
    refused (a guest asking for a buy-in, a host at the cap on tables), so every refusal left a
    name that never became a table, and every later ask for that kind waited for each of the
    last twenty such names in turn (10 s after five, with the asks behind it shed). Now an ask
    names a table only once opening it would not be refused: a refusal writes nothing."""
    mallory = await anon.guest("Mallory")
    me = (await mallory.client.get("/me", headers=mallory.headers)).json()["player_id"]
    for _ in range(3):
        refused = await mallory.client.post(
            "/play-now", json={"seats": 4, "stake": 13}, headers=mallory.headers
        )
        assert refused.status_code == 403, refused.text
        assert refused.json()["code"] == "buy-in-needs-account"
    for _ in range(5):  # the cap on tables one person hosts
        await mallory.create_table(seats=3)
    for _ in range(3):
        refused = await mallory.client.post("/play-now", json={"seats": 5}, headers=mallory.headers)
        assert refused.status_code == 409, refused.text
        assert refused.json()["code"] == "too-many-tables"
    short = await member(anon, "Short")
    profile = (await short.client.get("/me", headers=short.headers)).json()
    broke = await short.client.post(
        "/play-now",
        json={"seats": 4, "stake": profile["coins"]["balance"] + 1},
        headers=short.headers,
    )
    assert broke.status_code == 409, broke.text
    assert broke.json()["code"] == "insufficient-coins"
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "select count(*) from events where stream like 'playnow-%%'"
            " and metadata->>'actor' = any(%s)",
            ([me, profile["player_id"]],),
        ).fetchone()
    assert row == (0,)  # no name written for a refused ask
    # Someone who may open one asks for the kind Mallory was refused: a table at once.
    ann = await member(anon, "Ann")
    opened = await play_now(ann, seats=4, stake=13)
    assert opened["you"] == 1 and opened["stake"] == 13
