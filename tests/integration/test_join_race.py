"""The interleaving behind issue 13 item 7's stray refusals, made deterministic: instance B reads
the table just before instance A's join fills it and deals its game; B's own join, decided on
that stale table, must be decided again on the fresh one (and be told the game is on: no seat
is left), not refused because the game it tried to deal had been dealt meanwhile."""

from __future__ import annotations

from typing import Any

import pytest

from service.bootstrap import bootstrap
from service.domain.tables import GameInProgress, TableState
from service.store.events import EventStore
from service.store.pool import Pool
from service.store.postgres import postgres_ports


async def test_a_join_decided_on_a_stale_table_is_decided_again(pool: Pool) -> None:
    store = EventStore(pool)
    # Two instances: caches and turns apart.
    a, b = bootstrap(postgres_ports(pool, store)), bootstrap(postgres_ports(pool, store))
    host, _ = await a.identity.create_guest("Host")
    one, _ = await a.identity.create_guest("One")
    two, _ = await a.identity.create_guest("Two")
    late, _ = await b.identity.create_guest("Late")
    table = (await a.tables.create_table(host, 3, 0, None)).table
    await a.tables.join_table(one, table.table_id, None)

    stale = await b.repository.table(table.table_id)  # B reads: one seat left...
    await a.tables.join_table(two, table.table_id, None)  # ...A takes it and deals the game

    fresh_table = b.repository.table
    reads: list[TableState] = []

    async def first_stale(table_id: str) -> Any:
        reads.append(stale)
        return stale if len(reads) == 1 else await fresh_table(table_id)

    b.repository.table = first_stale  # type: ignore[method-assign]
    with pytest.raises(GameInProgress):
        await b.tables.join_table(late, table.table_id, None)
    assert len(reads) >= 2  # decided again, on the table as it is now
