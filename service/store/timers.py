"""`port.Timers` on PostgreSQL: every deadline a game set is a row in `timers` (written with
the event, `rows.Timer`). A claim holds its rows `FOR UPDATE SKIP LOCKED` in a transaction of
its own, so each due timer goes to one claimer at a time, and deletes the fired ones as it
ends.

On Citus, while a worker is away, a statement over every shard fails: the due timers are then
read from each worker that answers (`citus_reads`), so the clock goes on firing the turns of
the games on the others; those of the lost worker's games fire once it is back."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import msgspec

from service.store import citus, citus_reads
from service.store.pool import Pool
from service.store.rows import Reach, Timer

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

# On Citus (migration 0018) a claim cannot lock rows of several shards in one statement: it
# reads the due rows, then locks each with a statement on its own shard (SKIP LOCKED: one
# another claimer holds is left to it), and deletes each fired one the same way.
_DUE_ON_CITUS = """
select game_id, deadline from timers
 where deadline <= $1
 order by deadline
 limit $2
"""
_LOCK_ON_CITUS = """
select 1 from timers where shard_key = $1 and game_id = $1 and deadline = $2
   for update skip locked
"""
_DELETE_ON_CITUS = "delete from timers where shard_key = $1 and game_id = $1 and deadline = $2"
# The same read on each shard (`citus_reads.across`), while a worker is away.
_DUE_ON_SHARD = """
select game_id, deadline from %1$s
 where deadline <= %2$L::timestamptz
 order by deadline
 limit %3$L::bigint
"""
_NEXT_ON_SHARD = "select min(deadline) as deadline from %1$s"


class _DueRow(msgspec.Struct, frozen=True):
    game_id: str
    deadline: datetime


class _NextRow(msgspec.Struct, frozen=True):
    deadline: datetime | None


_DUE_ROWS = msgspec.json.Decoder(list[_DueRow])
_NEXT_ROWS = msgspec.json.Decoder(list[_NextRow])


class _Claim:
    def __init__(self, conn: Any, due: list[Timer], on_citus: bool = False) -> None:
        self._conn = conn
        self.due = due
        self._on_citus = on_citus

    async def fired(self, timers: Sequence[Timer]) -> None:
        if self._on_citus:
            for t in timers:
                await self._conn.execute(_DELETE_ON_CITUS, t.game_id, t.deadline)
            return
        if timers:
            await self._conn.execute(
                _DELETE, [t.game_id for t in timers], [t.deadline for t in timers]
            )


class StoredTimers:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    @asynccontextmanager
    async def claim_due(self, now: datetime, limit: int) -> AsyncIterator[_Claim]:
        if await citus.detect(self._pool):
            rows = await citus_reads.whole(self._pool, _DUE_ON_CITUS, now, limit)
            if rows is None:  # a worker away: the due timers of the workers that answer
                answers = await citus_reads.across(
                    self._pool, "timers", _DUE_ON_SHARD, (now, limit), Reach()
                )
                found = [(r.game_id, r.deadline) for a in answers for r in _DUE_ROWS.decode(a)]
                rows = sorted(found, key=lambda r: r[1])[:limit]
            async with self._pool.acquire() as conn, conn.transaction():
                due = []
                for game_id, deadline in rows:  # each on its shard: one that answers
                    if await conn.fetchval(_LOCK_ON_CITUS, game_id, deadline):
                        due.append(Timer(game_id=game_id, deadline=deadline))
                yield _Claim(conn, due, on_citus=True)
            return
        async with self._pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(_CLAIM, now, limit)
            yield _Claim(conn, [Timer(game_id=r[0], deadline=r[1]) for r in rows])

    async def next_deadline(self) -> datetime | None:
        if await citus.detect(self._pool):
            rows = await citus_reads.whole(self._pool, _NEXT_DEADLINE)
            if rows is None:  # a worker away: the earliest of the workers that answer
                answers = await citus_reads.across(
                    self._pool, "timers", _NEXT_ON_SHARD, (), Reach()
                )
                found = [r.deadline for a in answers for r in _NEXT_ROWS.decode(a)]
                return min((d for d in found if d is not None), default=None)
            return rows[0][0] if rows else None
        deadline: datetime | None = await self._pool.fetchval(_NEXT_DEADLINE)
        return deadline
