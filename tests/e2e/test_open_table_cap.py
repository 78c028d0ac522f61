"""A cap on open tables per player (issue 13, item 10): a host may have `MAX_OPEN_TABLES` online
tables open at once; one more is refused with 409 `too-many-tables`, until one of theirs
closes (or is handed to another host)."""

from __future__ import annotations

import asyncio

from service.domain.tables import MAX_OPEN_TABLES
from tests.e2e.api_client import Api
from tests.e2e.test_solo_api import assert_problem


async def test_a_host_cannot_fill_the_lobby(anon: Api) -> None:
    spammer = await anon.guest("Spam")
    tables = [(await spammer.create_table(seats=4))["table_id"] for _ in range(MAX_OPEN_TABLES)]
    refused = await spammer.client.post("/tables", json={"seats": 4}, headers=spammer.headers)
    body = assert_problem(refused, 409, "too-many-tables")
    assert str(MAX_OPEN_TABLES) in body["detail"]
    # Solo tables are not in the lobby and are not counted.
    await spammer.solo_table()

    await spammer.ok_table_action(tables[0], "leave")  # alone: the table closes
    tables.append((await spammer.create_table(seats=4))["table_id"])

    # Handing a table over (the host leaves, another person hosts it) frees a place too.
    bob = await anon.guest("Bob")
    await bob.ok_table_action(tables[1], "seats")
    await spammer.ok_table_action(tables[1], "leave")
    await spammer.create_table(seats=4)


async def test_opening_at_once_does_not_slip_past_the_cap(anon: Api) -> None:
    spammer = await anon.guest("Burst")
    answers = await asyncio.gather(
        *(
            spammer.client.post("/tables", json={"seats": 4}, headers=spammer.headers)
            for _ in range(MAX_OPEN_TABLES + 5)
        )
    )
    assert sorted(a.status_code for a in answers) == [201] * MAX_OPEN_TABLES + [409] * 5
