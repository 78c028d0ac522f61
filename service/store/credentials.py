"""Who is who, on PostgreSQL: accounts by name (`port.AccountIndex`, `accounts`), failed
logins (`port.LoginAttempts`, `login_failures`), sign-ups by address (`port.SignUps`,
`sign_ups`), bearer tokens (`port.AccessTokens`, `access_tokens`: SHA-256 only) and stream
tickets (`port.StreamTickets`, `stream_tickets`). What takes turns per key does so under a
transaction-level advisory lock, so across every instance."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

from service.store import citus
from service.store.events import WAKEUP_CHANNEL
from service.store.log import UniqueViolation
from service.store.pool import Pool
from service.store.projections import statement
from service.store.rows import AccessToken, Account, TokenOwner

# --- accounts --------------------------------------------------------------------------------

_IS_REGISTERED = "select exists (select 1 from accounts where player_id = $1)"
_NAME_EXISTS = "select exists (select 1 from accounts where name_key = $1)"
# By key; an account from before keys existed is found by its exact name, and keyed then.
_ACCOUNT_BY_NAME = """
select player_id, name, password_hash, name_key from accounts
 where name_key = $1 or (name_key is null and name = $2)
 order by name_key is null
 limit 1
"""
_SET_NAME_KEY = "update accounts set name_key = $2 where player_id = $1 and name_key is null"
_ACCOUNT_HOLDERS = "select player_id from accounts where player_id = any($1::text[])"


class StoredAccounts:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def registered(self, player_id: str) -> bool:
        return bool(await self._pool.fetchval(_IS_REGISTERED, player_id))

    async def name_taken(self, name_key: str) -> bool:
        return bool(await self._pool.fetchval(_NAME_EXISTS, name_key))

    async def by_name(self, name_key: str, name: str) -> Account | None:
        row = await self._pool.fetchrow(_ACCOUNT_BY_NAME, name_key, name)
        if row is None:
            return None
        return Account(player_id=row[0], name=row[1], password_hash=row[2], name_key=row[3])

    async def set_name_key(self, player_id: str, name_key: str) -> bool:
        try:
            await self._pool.execute(_SET_NAME_KEY, player_id, name_key)
        except asyncpg.UniqueViolationError:
            return False
        return True

    async def holders(self, player_ids: Sequence[str]) -> list[str]:
        rows = await self._pool.fetch(_ACCOUNT_HOLDERS, list(player_ids))
        return [r[0] for r in rows]


# --- failed logins ---------------------------------------------------------------------------

# pg_advisory_xact_lock(int, int) class id for login-attempt keys ("swlg"); the two-int key
# space never collides with the event store's single bigint append lock.
_LOGIN_LOCK_CLASS = 0x73776C67
_LOCK_KEY = "select pg_advisory_xact_lock($1, hashtext($2))"
# The oldest failure that still blocks: the allowed-th most recent one within the window.
_BLOCKING_FAILURE = """
select failed_at from login_failures
 where key = $1 and failed_at > $2
 order by failed_at desc
offset $3 limit 1
"""
_RECORD_ATTEMPTS = (
    "insert into login_failures (key, failed_at) select k, $2 from unnest($1::text[]) as k"
)
# Withdraw one attempt (rows are only (key, time): any one of equal rows is the same fact).
_WITHDRAW_ATTEMPT = """
delete from login_failures
 where ctid = (select ctid from login_failures where key = $1 and failed_at = $2 limit 1)
"""


class StoredLoginAttempts:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def attempt(
        self, keys: Sequence[str], at: datetime, since: datetime, allowed: int
    ) -> datetime | None:
        async with self._pool.acquire() as conn, conn.transaction():
            for key in sorted(keys):  # two attempts lock in the same order
                await conn.execute(_LOCK_KEY, _LOGIN_LOCK_CLASS, key)
            blocking: datetime | None = None
            for key in keys:
                failed_at = await conn.fetchval(_BLOCKING_FAILURE, key, since, allowed - 1)
                if failed_at is not None:
                    blocking = failed_at if blocking is None else max(blocking, failed_at)
            if blocking is None:
                await conn.execute(_RECORD_ATTEMPTS, list(keys), at)
            return blocking

    async def succeeded(self, keys: Sequence[str], at: datetime, token: AccessToken) -> None:
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                for key in keys:
                    await conn.execute(_WITHDRAW_ATTEMPT, key, at)
                await conn.execute(*_insert(token))
        except asyncpg.UniqueViolationError as exc:
            raise UniqueViolation(citus.constraint(exc)) from exc


def _insert(token: AccessToken) -> tuple[str, ...]:
    sql, args = statement(token)
    return (sql, *args)


# --- sign-ups --------------------------------------------------------------------------------

# pg_advisory_xact_lock(int, int) class id for sign-up keys ("swsu").
_SIGN_UP_LOCK_CLASS = 0x73777375
_SIGN_UPS_SINCE = """
select count(*) as n, min(signed_at) as oldest from sign_ups where key = $1 and signed_at > $2
"""
_RECORD_SIGN_UP = "insert into sign_ups (key, signed_at) values ($1, $2)"
_FORGET_SIGN_UPS = "delete from sign_ups where key = $1 and signed_at <= $2"


class StoredSignUps:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def count(self, key: str, at: datetime, since: datetime, allowed: int) -> datetime | None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(_LOCK_KEY, _SIGN_UP_LOCK_CLASS, key)
            await conn.execute(_FORGET_SIGN_UPS, key, since)  # the table stays swept
            row = await conn.fetchrow(_SIGN_UPS_SINCE, key, since)
            assert row is not None  # an aggregate always has a row
            if row["n"] >= allowed:
                oldest: datetime = row["oldest"]
                return oldest
            await conn.execute(_RECORD_SIGN_UP, key, at)
            return None


# --- bearer tokens and stream tickets --------------------------------------------------------

_OWNER = """
select t.player_id, coalesce(a.name, t.name) as name, a.player_id is not null as registered
  from access_tokens t
  left join accounts a on a.player_id = t.player_id
 where t.token_hash = $1
   and t.revoked_at is null
   and (t.expires_at is null or t.expires_at > $2)
"""
_REVOKE = "update access_tokens set revoked_at = $2 where token_hash = $1 and revoked_at is null"
_VALID = """
select exists (select 1 from access_tokens
                where token_hash = $1 and revoked_at is null
                  and (expires_at is null or expires_at > $2))
"""
_NOTIFY = "select pg_notify($1, $2)"


class StoredAccessTokens:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def issue(self, token: AccessToken) -> None:
        try:
            await self._pool.execute(*_insert(token))
        except asyncpg.UniqueViolationError as exc:
            raise UniqueViolation(citus.constraint(exc)) from exc

    async def revoke(self, token_hash: bytes, at: datetime) -> None:
        await self._pool.execute(_REVOKE, token_hash, at)

    async def owner(self, token_hash: bytes, at: datetime) -> TokenOwner | None:
        row = await self._pool.fetchrow(_OWNER, token_hash, at)
        if row is None:
            return None
        return TokenOwner(player_id=row[0], name=row[1], registered=row[2], token_hash=token_hash)

    async def valid(self, token_hash: bytes, at: datetime) -> bool:
        return bool(await self._pool.fetchval(_VALID, token_hash, at))

    async def announce(self, name: str) -> None:
        await self._pool.execute(_NOTIFY, WAKEUP_CHANNEL, name)


_INSERT_TICKET = """
insert into stream_tickets (ticket_hash, token_hash, stream, expires_at) values ($1, $2, $3, $4)
"""
# The token's tickets that have run out: swept as new ones are issued, so the table stays as
# small as the number of tickets alive.
_SWEEP_TICKETS = "delete from stream_tickets where token_hash = $1 and expires_at <= $2"
_REDEEM_TICKET = """
select t.player_id, coalesce(a.name, t.name) as name, a.player_id is not null as registered,
       t.token_hash
  from stream_tickets k
  join access_tokens t on t.token_hash = k.token_hash
  left join accounts a on a.player_id = t.player_id
 where k.ticket_hash = $1 and k.stream = $2 and k.expires_at > $3
   and t.revoked_at is null and (t.expires_at is null or t.expires_at > $3)
"""


class StoredStreamTickets:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def issue(
        self,
        ticket_hash: bytes,
        token_hash: bytes,
        stream: str,
        expires_at: datetime,
        now: datetime,
    ) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(_SWEEP_TICKETS, token_hash, now)
            await conn.execute(_INSERT_TICKET, ticket_hash, token_hash, stream, expires_at)

    async def redeem(self, ticket_hash: bytes, stream: str, at: datetime) -> TokenOwner | None:
        row = await self._pool.fetchrow(_REDEEM_TICKET, ticket_hash, stream, at)
        if row is None:
            return None
        return TokenOwner(
            player_id=row[0], name=row[1], registered=row[2], token_hash=bytes(row[3])
        )
