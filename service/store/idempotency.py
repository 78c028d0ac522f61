"""Idempotency keys' records (migration 0016): the port, on PostgreSQL, and in memory.

A record is what the API layer (`service/api/idempotency.py`) keeps for one Idempotency-Key of
one caller for 24 hours: its lookup, the fingerprint of the request that first used it, and,
once that request has answered, the answer, sealed. Everything here is opaque bytes: the API
layer derives the lookup and fingerprint (HMACs) and seals the answer (AES-GCM) under keys
derived from the client's own key, so this module (and a database reader) cannot read any of
it.

`claim` is the one decision, taken atomically: the first request with a lookup claims it
(`new`); a later one finds it `running` (the first has not answered yet) or `done` (its sealed
answer). A claim whose request never answered (its process died) may be taken over after
`stale_after`, by a request with the same fingerprint; an expired record is no record.

Both implementations pass one contract suite (`tests/idempotency_contract.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, Protocol

from service.store.pool import Pool


@dataclass(frozen=True)
class Claim:
    """What a claim found: `new` (this request runs), `running` (another request with the key
    has not answered yet) or `done` (it answered: `answer`, sealed). `fingerprint` is the
    first request's, for the caller to compare with its own."""

    state: Literal["new", "running", "done"]
    fingerprint: bytes
    answer: bytes | None = None


class IdempotencyRecords(Protocol):
    async def claim(
        self,
        lookup: bytes,
        fingerprint: bytes,
        now: datetime,
        *,
        ttl: timedelta,
        stale_after: timedelta,
    ) -> Claim:
        """Claim `lookup` for a request with `fingerprint` at `now`, for `ttl`."""
        ...

    async def complete(self, lookup: bytes, answer: bytes) -> None:
        """Keep the claimed request's sealed answer."""
        ...

    async def release(self, lookup: bytes) -> None:
        """Forget a claim whose request did not succeed, so the key may be used again."""
        ...

    async def sweep(self, now: datetime) -> int:
        """Delete the records expired at `now`; how many."""
        ...


_CLAIM = """
insert into idempotency_keys as k (lookup, fingerprint, started_at, expires_at)
values ($1, $2, $3, $4)
on conflict (lookup) do update
   set fingerprint = excluded.fingerprint, started_at = excluded.started_at,
       expires_at = excluded.expires_at, answer = null
 where k.expires_at <= excluded.started_at
    or (k.answer is null and k.started_at <= $5 and k.fingerprint = excluded.fingerprint)
returning true
"""
_FIND = """
select fingerprint, answer from idempotency_keys where lookup = $1 and expires_at > $2
"""


class PostgresIdempotencyRecords:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def claim(
        self,
        lookup: bytes,
        fingerprint: bytes,
        now: datetime,
        *,
        ttl: timedelta,
        stale_after: timedelta,
    ) -> Claim:
        while True:
            async with self.pool.acquire() as conn:
                if await conn.fetchval(
                    _CLAIM, lookup, fingerprint, now, now + ttl, now - stale_after
                ):
                    return Claim("new", fingerprint)
                row = await conn.fetchrow(_FIND, lookup, now)
            if row is not None:
                answer = row["answer"]
                return Claim(
                    "running" if answer is None else "done",
                    bytes(row["fingerprint"]),
                    None if answer is None else bytes(answer),
                )
            # Released or expired between the two statements: claim again.

    async def complete(self, lookup: bytes, answer: bytes) -> None:
        await self.pool.execute(
            "update idempotency_keys set answer = $2 where lookup = $1", lookup, answer
        )

    async def release(self, lookup: bytes) -> None:
        await self.pool.execute(
            "delete from idempotency_keys where lookup = $1 and answer is null", lookup
        )

    async def sweep(self, now: datetime) -> int:
        deleted = await self.pool.fetchval(
            "with gone as (delete from idempotency_keys where expires_at <= $1 returning 1) "
            "select count(*) from gone",
            now,
        )
        return int(deleted)


@dataclass
class _Record:
    fingerprint: bytes
    started_at: datetime
    expires_at: datetime
    answer: bytes | None = None


class InMemoryIdempotencyRecords:
    """The same records in a dict, for fast tests (one event loop: each method is atomic)."""

    def __init__(self) -> None:
        self.records: dict[bytes, _Record] = {}

    async def claim(
        self,
        lookup: bytes,
        fingerprint: bytes,
        now: datetime,
        *,
        ttl: timedelta,
        stale_after: timedelta,
    ) -> Claim:
        found = self.records.get(lookup)
        if (
            found is None
            or found.expires_at <= now
            or (
                found.answer is None
                and found.started_at <= now - stale_after
                and found.fingerprint == fingerprint
            )
        ):
            self.records[lookup] = _Record(fingerprint, now, now + ttl)
            return Claim("new", fingerprint)
        if found.answer is None:
            return Claim("running", found.fingerprint)
        return Claim("done", found.fingerprint, found.answer)

    async def complete(self, lookup: bytes, answer: bytes) -> None:
        if lookup in self.records:
            self.records[lookup].answer = answer

    async def release(self, lookup: bytes) -> None:
        found = self.records.get(lookup)
        if found is not None and found.answer is None:
            del self.records[lookup]

    async def sweep(self, now: datetime) -> int:
        gone = [k for k, r in self.records.items() if r.expires_at <= now]
        for key in gone:
            del self.records[key]
        return len(gone)
