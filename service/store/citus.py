"""The append on Citus (migration 0018, docs/scaling.md "The store on Citus").

On a database with the citus extension, `EventStore` sends each append as one call of
`append_to_shard(shard key, batch)`: the events, the command and the rows written with them as
one ``jsonb`` value, built here. Citus delegates the call, by its key argument, to the worker
that holds the shard, where the whole append runs as one local transaction: one round trip, one
shard (a *router* execution in `citus_stat_counters`).

Every stream's shard key is the id in its name (`shard_of`): a table's id, a person's, a game's.
A game's id is drawn so that it hashes to its table's shard (`Layout.colocated_id`, with
PostgreSQL's own text hash, `hashtext`), so a table, its games and every row written with them
(keyed by the table's or the game's id) share a shard, and a game is read by its id alone on
that one shard. An append whose streams or rows are not all on one shard (a sign-up's bearer
token, sharded by its hash) runs the same function inside a transaction on the coordinator
instead, each statement routed to its own shard; the service appends that way only where
test_shard_boundaries.py lets it, never for a table's or a game's.
"""

from __future__ import annotations

import bisect
import re
import uuid
import weakref
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

import msgspec

from service.store import projections
from service.store.pool import Pool
from service.store.rows import DealSecret, GamesPlayed, Row, Timer

Statement = tuple[str, tuple[Any, ...]]

DETECT = "select exists (select 1 from pg_extension where extname = 'citus')"
APPEND = "select append_to_shard($1, $2)"  # nothing around the call: Citus delegates it

# Each stream's head (events.py `_STREAM_HEADS`) on the one shard of their key.
STREAM_HEADS = """
select distinct on (stream) stream, version, hash, chain
from events where shard_key = $2 and stream = any($1::text[])
order by stream, version desc
"""

# The reads of events.py with each stream's shard key (`shard_of`, the last argument): each on
# its one shard, so a stream whose worker answers is read while another worker is away.
READ_STREAM = """
select position, stream, version, type, data::text, metadata::text, recorded_at, hash, chain
  from events
 where shard_key = $4 and stream = $1 and version > $2 and ($3::integer is null or version <= $3)
 order by version
"""
STREAM_ARRAY = """
select coalesce('[' || string_agg(e.data::text, ',' order by e.version) || ']', '[]'),
       h.version, h.hash, h.chain
  from (select version, hash, chain from events where shard_key = $4 and stream = $1
         order by version desc limit 1) as h
  left join events as e
    on e.shard_key = $4 and e.stream = $1 and e.version > $2
   and ($3::integer is null or e.version <= $3)
 group by h.version, h.hash, h.chain
"""
STREAM_VERSION = "select coalesce(max(version), 0) from events where shard_key = $2 and stream = $1"
COMMAND_VERSION = """
select version from processed_commands where shard_key = $3 and stream = $1 and command_id = $2
"""
SERVER_SEEDS = """
select game_id, server_seed from deal_secrets
 where shard_key = any($1::text[]) and game_id = any($1::text[])
"""
RACE_FACTS = """
select (select version from processed_commands
         where shard_key = $4 and stream = $1 and command_id = $2),
       (select coalesce(max(version), 0) from events where shard_key = $5 and stream = $3)
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
        "player_games",
    }
)
_TABLE = re.compile(r"(?is)^\s*(?:insert\s+into|update|delete\s+from)\s+([a-z_]+)")
# A shard's constraint carries its shard id (events_stream_version_key_102008).
_SHARD_SUFFIX = re.compile(r"_\d{6,}$")

_SECRET_INSERT = "insert into deal_secrets (shard_key, game_id, server_seed) values ($1, $1, $2)"
_PLAYED_INSERT = """
insert into player_games (game_id, player_id, table_id, mode, rated)
select $1, p, $3, $4, $5 from unnest($2::text[]) as p
on conflict do nothing
"""
_TIMER_INSERT = (
    "insert into timers (shard_key, game_id, deadline) values ($1, $1, $2) on conflict do nothing"
)


_RANGES = """
select shardminvalue::integer, shardmaxvalue::integer from pg_dist_shard
 where logicalrelid = 'events'::regclass order by 1
"""

_M = 0xFFFFFFFF


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M


def hashtext(key: str) -> int:
    """PostgreSQL's `hashtext` of ``key`` (its `hash_bytes`, Bob Jenkins' lookup3, on the UTF-8
    bytes), as the signed 32-bit value Citus places in a shard's range (`worker_hash`)."""
    k = key.encode("utf-8")
    n = len(k)
    a = b = c = (0x9E3779B9 + n + 3923095) & _M
    i = 0
    while n >= 12:
        a = (a + int.from_bytes(k[i : i + 4], "little")) & _M
        b = (b + int.from_bytes(k[i + 4 : i + 8], "little")) & _M
        c = (c + int.from_bytes(k[i + 8 : i + 12], "little")) & _M
        a = (a - c) & _M ^ _rot(c, 4)
        c = (c + b) & _M
        b = (b - a) & _M ^ _rot(a, 6)
        a = (a + c) & _M
        c = (c - b) & _M ^ _rot(b, 8)
        b = (b + a) & _M
        a = (a - c) & _M ^ _rot(c, 16)
        c = (c + b) & _M
        b = (b - a) & _M ^ _rot(a, 19)
        a = (a + c) & _M
        c = (c - b) & _M ^ _rot(b, 4)
        b = (b + a) & _M
        i, n = i + 12, n - 12
    tail = k[i:]
    if n >= 9:
        c = (c + (int.from_bytes(tail[8:11], "little") << 8)) & _M
    if n >= 5:
        b = (b + int.from_bytes(tail[4 : min(n, 8)], "little")) & _M
    if n >= 1:
        a = (a + int.from_bytes(tail[0 : min(n, 4)], "little")) & _M
    c = ((c ^ b) - _rot(b, 14)) & _M
    a = ((a ^ c) - _rot(c, 11)) & _M
    b = ((b ^ a) - _rot(a, 25)) & _M
    c = ((c ^ b) - _rot(b, 16)) & _M
    a = ((a ^ c) - _rot(c, 4)) & _M
    b = ((b ^ a) - _rot(a, 14)) & _M
    c = ((c ^ b) - _rot(b, 24)) & _M
    return c - (1 << 32) if c & 0x80000000 else c


class Layout:
    """Whether a database is Citus, and the hash ranges of its shards (fixed when the tables
    were distributed: moving shards between workers keeps them)."""

    def __init__(self, on_citus: bool, ranges: Sequence[tuple[int, int]] = ()) -> None:
        self.on_citus = on_citus
        self._lows = [low for low, _ in ranges]

    def shard(self, key: str) -> int:
        """The index of the shard ``key`` hashes to."""
        return bisect.bisect_right(self._lows, hashtext(key)) - 1

    def colocated_id(self, key: str) -> str:
        """A fresh uuid whose shard is ``key``'s (any fresh uuid off Citus): about as many
        draws as there are shards."""
        if not self.on_citus or not self._lows:
            return str(uuid.uuid4())
        target = self.shard(key)
        while True:
            candidate = str(uuid.uuid4())
            if self.shard(candidate) == target:
                return candidate


_LAYOUTS: weakref.WeakKeyDictionary[Pool, Layout] = weakref.WeakKeyDictionary()


async def layout(pool: Pool) -> Layout:
    """``pool``'s database's `Layout`: asked once per pool."""
    known = _LAYOUTS.get(pool)
    if known is None:
        if await pool.fetchval(DETECT):
            known = Layout(True, [(r[0], r[1]) for r in await pool.fetch(_RANGES)])
        else:
            known = Layout(False)
        _LAYOUTS[pool] = known
    return known


async def detect(pool: Pool) -> bool:
    """Whether ``pool``'s database has the citus extension (migration 0018)."""
    return (await layout(pool)).on_citus


def shard_of(stream: str) -> str:
    """A stream's shard key: the id in its name (``table-<id>``, ``game-<id>``,
    ``player-<id>``, ``wallet-<id>``)."""
    _, _, ident = stream.partition("-")
    return ident or stream


def statements(row: Row) -> tuple[Statement, ...]:
    """`projections.statements`, with the shard key where the plain schema has none: a game's
    timers and secret are keyed by the game's id (migration 0019)."""
    if isinstance(row, Timer):
        return ((_TIMER_INSERT, (row.game_id, row.deadline)),)
    if isinstance(row, DealSecret):
        return ((_SECRET_INSERT, (row.game_id, row.server_seed)),)
    if isinstance(row, GamesPlayed):  # by its game (0020): on the game's table's shard
        return (
            (_PLAYED_INSERT, (row.game_id, list(row.people), row.table_id, row.mode, row.rated)),
        )
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


def on_shard(sql: str, args: Sequence[Any], shard: int, where: Layout) -> bool:
    """Whether the statement writes only rows of shard number ``shard``."""
    match = _TABLE.match(sql)
    return (
        match is not None
        and match[1] in _BY_SHARD_KEY
        and bool(args)
        and isinstance(args[0], str)
        and where.shard(args[0]) == shard
    )


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
