"""Play now (issue 43): one request seats a person at a waiting table of the kind they ask
for, or opens one; two people asking at once end at the same table, on one instance and on
two instances of the service sharing the database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

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
