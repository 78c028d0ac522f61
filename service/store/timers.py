"""`port.Timers` on PostgreSQL: every deadline a game set is a row in `timers` (written with
the event, `rows.Timer`). A claim holds its rows `FOR UPDATE SKIP LOCKED` in a transaction of
its own, so each due timer goes to one claimer at a time, and deletes the fired ones as it
ends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from service.store.pool import Pool
from service.store.rows import Timer

_CLAIM = """
select game_id, deadline from timers
 where deadline <= $1
 order by deadline
 limit $2
   for update skip locked
"""
_DELETE = """
delete from timers t
 using unnest($1::text[], $2::timestamptz[]) as done(game_id, deadline)
 where t.game_id = done.game_id and t.deadline = done.deadline
"""
_NEXT_DEADLINE = "select min(deadline) from timers"


class _Claim:
    def __init__(self, conn: Any, due: list[Timer]) -> None:
        self._conn = conn
        self.due = due

    async def fired(self, timers: Sequence[Timer]) -> None:
        if timers:
            await self._conn.execute(
                _DELETE, [t.game_id for t in timers], [t.deadline for t in timers]
            )


class StoredTimers:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    @asynccontextmanager
    async def claim_due(self, now: datetime, limit: int) -> AsyncIterator[_Claim]:
        async with self._pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(_CLAIM, now, limit)
            yield _Claim(conn, [Timer(game_id=r[0], deadline=r[1]) for r in rows])

    async def next_deadline(self) -> datetime | None:
        deadline: datetime | None = await self._pool.fetchval(_NEXT_DEADLINE)
        return deadline
