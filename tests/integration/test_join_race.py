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


async def _late_join(pool: Pool, stale_reads: int) -> list[TableState]:
    """Instance B reads the table just before instance A's join fills it and deals its game;
    B's join then reads that stale table `stale_reads` times before the fresh one, and must be
    told the game is on (GameInProgress). Returns B's table reads."""
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

    async def stale_first(table_id: str) -> Any:
        reads.append(stale)
        return stale if len(reads) <= stale_reads else await fresh_table(table_id)

    b.repository.table = stale_first  # type: ignore[method-assign, assignment]
    with pytest.raises(GameInProgress):
        await b.tables.join_table(late, table.table_id, None)
    return reads


async def test_a_join_decided_on_a_stale_table_is_decided_again(pool: Pool) -> None:
    reads = await _late_join(pool, stale_reads=1)
    assert len(reads) >= 2  # decided again, on the table as it is now


async def test_a_deal_found_dealt_meanwhile_is_decided_again(pool: Pool) -> None:
    """The same race one step later: B's join is decided on the stale table itself (join's
    own check and its first decision read it: its seat taken, the table full, the game to
    deal), and only the deal finds the game dealt: the join is decided again on the fresh
    table, and told the game is on, not refused by the deal (`Deals.deal` answers False,
    `Tables` answers STALE to the retry)."""
    reads = await _late_join(pool, stale_reads=2)
    assert len(reads) >= 3  # the deal found the game dealt: decided again, on the fresh table
