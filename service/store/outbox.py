"""`port.Outbox` and `port.StakeHolds` on PostgreSQL: each transfer a table owes a wallet
(`money_outbox`, keyed by the table) until it is delivered, and each hold a wallet keeps
(`stake_holds`, keyed by the person), both written with the events that cause them
(`rows.OwedTransfer`, `rows.StakeHold`). Times are the database's (`now()`)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import msgspec
import structlog

from service.domain.transfers import KINDS, TransferUnion, decode_transfer
from service.store import citus
from service.store.pool import Pool
from service.store.rows import StakeHold

log = structlog.get_logger(__name__)

# Only the kinds this version knows ($3, `transfers.KINDS`): in a rolling deploy a newer
# instance may write a kind an older one cannot decode; the older one neither claims (locks)
# nor counts it, so those rows wait for a newer instance and never hold up the rest.
_CLAIM_TRANSFERS = """
select table_id, transfer_id, transfer::text from money_outbox
 where created_at <= now() - $1::interval and transfer->>'kind' = any($3::text[])
 order by created_at
 limit $2
   for update skip locked
"""
# On Citus (migration 0018), as the timers' claim there: the due rows read, then each locked
# on its own shard (SKIP LOCKED).
_DUE_ON_CITUS = """
select table_id, transfer_id from money_outbox
 where created_at <= now() - $1::interval and transfer->>'kind' = any($3::text[])
 order by created_at
 limit $2
"""
_LOCK_ON_CITUS = """
select table_id, transfer_id, transfer::text from money_outbox
 where table_id = $1 and transfer_id = $2
   for update skip locked
"""
_DELETE_TRANSFER = "delete from money_outbox where table_id = $1 and transfer_id = $2"
_OWED = "select transfer::text from money_outbox where table_id = $1 and transfer_id = $2"
# One round trip to learn there is nothing to relay (the usual answer), before claiming.
_ANY_DUE = """
select exists (select 1 from money_outbox
                where created_at <= now() - $1::interval and transfer->>'kind' = any($2::text[]))
"""
# The rows this version leaves for a newer one, by kind (logged by the relay's sweep).
_UNKNOWN_DUE = """
select transfer->>'kind', count(*) from money_outbox
 where created_at <= now() - $1::interval and not (transfer->>'kind' = any($2::text[]))
 group by 1 order by 1
"""

_UNSETTLED_HOLDS = """
select player_id, hold_id, table_id, amount from stake_holds
 where settled_at is null and held_at <= now() - $1::interval
 order by held_at
 limit $2
"""
_SETTLE_HOLD = "update stake_holds set settled_at = now() where player_id = $1 and hold_id = $2"

# Wallets holding more than their `stake_holds` rows account for: holds made before holds had
# ids (before migration 0013), which no table will ever take now.
_LEGACY_HOLDERS = """
select w.player_id from wallets w
 where w.held > coalesce((select sum(h.amount) from stake_holds h
                           where h.player_id = w.player_id), 0)
 limit $1
"""
_HOLDS_BY_TABLE = "select table_id, sum(amount) from stake_holds where player_id = $1 group by 1"


class _Claim:
    def __init__(self, conn: Any, transfers: list[TransferUnion]) -> None:
        self._conn = conn
        self.transfers = transfers

    async def delivered(self, transfer: TransferUnion) -> None:
        await self._conn.execute(_DELETE_TRANSFER, transfer.table_id, transfer.transfer_id)


# Rows of a known kind this instance could not read, remembered (at most this many, the oldest
# forgotten first) so each is logged once and skipped, not claimed again every sweep ahead of
# the rows it can deliver: a page of them would otherwise hold up the whole relay.
UNREADABLE_KEPT = 1000
Key = tuple[str, str]  # (table_id, transfer_id)


class StoredOutbox:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self._unreadable: OrderedDict[Key, None] = OrderedDict()

    async def any_due(self, older_than: timedelta) -> bool:
        return bool(await self._pool.fetchval(_ANY_DUE, older_than, KINDS))

    async def unknown_due(self, older_than: timedelta) -> dict[str, int]:
        rows = await self._pool.fetch(_UNKNOWN_DUE, older_than, KINDS)
        return {str(kind): int(count) for kind, count in rows}

    @asynccontextmanager
    async def claim_due(self, older_than: timedelta, limit: int) -> AsyncIterator[_Claim]:
        # as many more as the rows known to be unreadable, which are passed over
        page = limit + len(self._unreadable)
        if await citus.detect(self._pool):
            async with self._pool.acquire() as conn, conn.transaction():
                claimed = []
                due = await conn.fetch(_DUE_ON_CITUS, older_than, page, KINDS)
                for table_id, transfer_id in due:
                    if (table_id, transfer_id) in self._unreadable:
                        continue
                    row = await conn.fetchrow(_LOCK_ON_CITUS, table_id, transfer_id)
                    if row is not None:
                        claimed.append((row[0], row[1], row[2]))
                yield _Claim(conn, self._decoded(claimed)[:limit])
            return
        async with self._pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(_CLAIM_TRANSFERS, older_than, page, KINDS)
            yield _Claim(conn, self._decoded([(r[0], r[1], r[2]) for r in rows])[:limit])

    def _decoded(self, rows: list[tuple[str, str, str]]) -> list[TransferUnion]:
        """The claimed rows this version can read. One it cannot (a known kind with a shape
        from a newer version that an older one rejects) is logged once and left in the outbox,
        unclaimed once the claim ends, and passed over by later claims: one row, or a page of
        them, never stops the relay."""
        transfers = []
        for table_id, transfer_id, text in rows:
            key = (table_id, transfer_id)
            if key in self._unreadable:
                continue
            try:
                transfers.append(decode_transfer(text))
            except msgspec.ValidationError as error:
                self._unreadable[key] = None
                while len(self._unreadable) > UNREADABLE_KEPT:
                    self._unreadable.popitem(last=False)
                log.warning("transfer left for a newer instance", error=str(error), transfer=text)
        return transfers

    async def delivered(self, transfer: TransferUnion) -> None:
        await self._pool.execute(_DELETE_TRANSFER, transfer.table_id, transfer.transfer_id)

    async def owed(self, table_id: str, transfer_id: str) -> TransferUnion | None:
        text = await self._pool.fetchval(_OWED, table_id, transfer_id)
        return None if text is None else decode_transfer(text)


class StoredStakeHolds:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def unsettled(self, older_than: timedelta, limit: int) -> list[StakeHold]:
        return [
            StakeHold(player_id=r[0], hold_id=r[1], table_id=r[2], amount=r[3])
            for r in await self._pool.fetch(_UNSETTLED_HOLDS, older_than, limit)
        ]

    async def settle(self, player_id: str, hold_id: str) -> None:
        await self._pool.execute(_SETTLE_HOLD, player_id, hold_id)

    async def legacy_holders(self, limit: int) -> list[str]:
        return [r[0] for r in await self._pool.fetch(_LEGACY_HOLDERS, limit)]

    async def held_by_table(self, player_id: str) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in await self._pool.fetch(_HOLDS_BY_TABLE, player_id)}
