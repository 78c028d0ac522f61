"""The append on Citus (migration 0018, docs/scaling.md "The store on Citus").

On a database with the citus extension, `EventStore` sends each append as one call of
`append_to_shard(shard key, batch)`: the events, the command and the rows written with them as
one ``jsonb`` value, built here. Citus delegates the call, by its key argument, to the worker
that holds the shard, where the whole append runs as one local transaction: one round trip, one
shard (a *router* execution in `citus_stat_counters`).

The shard key is a table's id for the table's streams, its games' streams and every row written
with them; a person's id for that person's streams and rows (`shard_of`). An append whose
streams or rows are not all on one shard (a sign-up's bearer token, say, sharded by its hash)
runs the same function inside a transaction on the coordinator instead, each of its statements
routed to its own shard; the service appends that way only where test_shard_boundaries.py lets
it, never for a table's or a game's.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

import msgspec

from service.store import projections
from service.store.pool import Pool
from service.store.rows import DealSecret, Row, Timer

Statement = tuple[str, tuple[Any, ...]]

DETECT = "select exists (select 1 from pg_extension where extname = 'citus')"
APPEND = "select append_to_shard($1, $2)"  # nothing around the call: Citus delegates it

# Each stream's head (events.py `_STREAM_HEADS`) on the one shard of their key.
STREAM_HEADS = """
select distinct on (stream) stream, version, hash, chain
from events where shard_key = $2 and stream = any($1::text[])
order by stream, version desc
"""

# The tables hashed by the shard key, whose key is each of their statements' first argument
# (`statements`): rows of these with the append's key ride in the delegated call.
_BY_SHARD_KEY = frozenset(
    {
        "lobby",
        "table_members",
        "timers",
        "deal_secrets",
        "money_outbox",
        "wallets",
        "player_stats",
        "stake_holds",
    }
)
_TABLE = re.compile(r"(?is)^\s*(?:insert\s+into|update|delete\s+from)\s+([a-z_]+)")
# A shard's constraint carries its shard id (events_stream_version_key_102008).
_SHARD_SUFFIX = re.compile(r"_\d{6,}$")

_SECRET_INSERT = "insert into deal_secrets (table_id, game_id, server_seed) values ($1, $2, $3)"
_TIMER_INSERT = (
    "insert into timers (table_id, game_id, deadline) values ($1, $2, $3) on conflict do nothing"
)


_DETECTED: weakref.WeakKeyDictionary[Pool, bool] = weakref.WeakKeyDictionary()


async def detect(pool: Pool) -> bool:
    """Whether ``pool``'s database has the citus extension: asked once per pool."""
    known = _DETECTED.get(pool)
    if known is None:
        known = _DETECTED[pool] = bool(await pool.fetchval(DETECT))
    return known


def shard_of(stream: str, shard: str | None) -> str:
    """A stream's shard key: the one its append names (a game's: its table's id), else the id
    in its name (``table-<id>``, ``player-<id>``, ``wallet-<id>``)."""
    if shard:
        return shard
    _, _, ident = stream.partition("-")
    return ident or stream


def statements(row: Row) -> tuple[Statement, ...]:
    """`projections.statements`, with the shard key where Citus needs one the plain schema has
    not: a game's timers and secret carry their table's id."""
    if isinstance(row, Timer):
        return ((_TIMER_INSERT, (row.table_id or row.game_id, row.game_id, row.deadline)),)
    if isinstance(row, DealSecret):
        return ((_SECRET_INSERT, (row.table_id or row.game_id, row.game_id, row.server_seed)),)
    return tuple(
        (sql.replace(_UPDATED_NOW, _UPDATED_EXCLUDED), args)
        for sql, args in projections.statements(row)
    )


def constraint(exc: Exception) -> str:
    """The name of the unique constraint ``exc`` (an asyncpg error) broke, as the schema has
    it: a shard's carries its shard id, and an error relayed from a worker has the name only in
    its message."""
    name = getattr(exc, "constraint_name", None)
    if not name:
        match = _CONSTRAINT.search(str(exc))
        name = match[1] if match else ""
    return _SHARD_SUFFIX.sub("", name)


_CONSTRAINT = re.compile(r'unique constraint "([^"]+)"')
# A projection's upsert stamps `updated_at = now()`; Citus wants only immutable functions in
# DO UPDATE SET: the inserted row's default is the same now().
_UPDATED_NOW = "updated_at = now()"
_UPDATED_EXCLUDED = "updated_at = excluded.updated_at"


def on_shard(sql: str, args: Sequence[Any], key: str) -> bool:
    """Whether the statement writes only rows of the shard of ``key``."""
    match = _TABLE.match(sql)
    return match is not None and match[1] in _BY_SHARD_KEY and bool(args) and args[0] == key


def literal(value: Any) -> str | None:
    """``value`` in PostgreSQL's text input form (the function quotes it as a literal)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return "{" + ",".join(_element(v) for v in value) + "}"
    if isinstance(value, dict):
        return msgspec.json.encode(value).decode("utf-8")
    raise TypeError(f"no text form for {type(value).__name__}")


def _element(value: Any) -> str:
    text = literal(value)
    if text is None:
        return "NULL"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Stream(msgspec.Struct):
    stream: str
    expected: int
    head: str | None
    chain: int
    shard: str


class _Event(msgspec.Struct):
    stream: str
    version: int
    type: str
    data: msgspec.Raw
    hash: str


class _Command(msgspec.Struct):
    stream: str
    id: str
    version: int
    shard: str


class _Row(msgspec.Struct):
    sql: str
    args: list[str | None]


class _Batch(msgspec.Struct):
    streams: list[_Stream]
    events: list[_Event]
    metadata: msgspec.Raw
    command: _Command | None
    rows: list[_Row]


def batch(
    streams: Sequence[tuple[str, int, bytes | None, int, str]],
    events: Sequence[tuple[str, int, str, str, bytes]],
    metadata: str,
    command: tuple[str, str, int, str] | None,
    rows: Sequence[tuple[str, Sequence[Any]]],
) -> str:
    """The batch `append_to_shard` takes: ``streams`` as (stream, expected version, head hash,
    chain version, shard key), ``events`` as (stream, version, type, data text, hash)."""
    value = _Batch(
        streams=[
            _Stream(s, expected, None if head is None else head.hex(), scheme, key)
            for s, expected, head, scheme, key in streams
        ],
        events=[
            _Event(s, version, type_, msgspec.Raw(data.encode("utf-8")), digest.hex())
            for s, version, type_, data, digest in events
        ],
        metadata=msgspec.Raw(metadata.encode("utf-8")),
        command=None if command is None else _Command(*command),
        rows=[_Row(sql, [literal(a) for a in args]) for sql, args in rows],
    )
    return msgspec.json.encode(value).decode("utf-8")


_RESULT = msgspec.json.Decoder(list[tuple[int, str, int, str, str, str, datetime, str, int]])


def recorded(text: str) -> list[tuple[Any, ...]]:
    """`append_to_shard`'s answer as rows shaped like `append_events_quiet`'s."""
    return [
        (position, stream, version, type_, data, meta, at, bytes.fromhex(digest), scheme)
        for position, stream, version, type_, data, meta, at, digest, scheme in _RESULT.decode(text)
    ]


def by_stream(shards: Mapping[str, str]) -> str | None:
    """The one shard key of an append's streams, or None when they span several."""
    keys = set(shards.values())
    return next(iter(keys)) if len(keys) == 1 else None
