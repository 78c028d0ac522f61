"""The event store: an append-only PostgreSQL table read and written with asyncpg.

One piece, on purpose: `EventStore` is the whole contract of the log (append, read, verify,
tail), and its guarantees (versions, idempotency, the chain, the horizon) are kept by code that
must be read together with the SQL function it calls.

Design (after pyeventsourcing's ``eventsourcing/postgres.py`` and message-db's
``database/functions/write-message.sql``, whose ``write_message`` is also one server-side
function per append):

* **No global lock.** Appends to different streams run side by side. ``unique (stream,
  version)`` is the optimistic-concurrency guarantee; the version check in
  ``append_events_quiet`` (migration 0017) gives the precise error first, and a writer racing
  past that check meets the unique index, which is mapped to the same error.
* **One round trip per append.** ``append_events_quiet`` runs, in one statement: the
  idempotency check (``processed_commands``), each stream's version and head check, the inserts
  and the processed command. The rows that must commit with the events
  (``also=``: ``service.store.rows``, each a statement of ``service.store.projections``) are
  folded into the same statement as data-modifying CTEs, so they are still one round trip and
  one transaction; a refused append raises inside the
  function, which undoes them too. (A statement that cannot be a CTE, one with its own WITH,
  sends the append and the statements in a transaction instead: more round trips.)
* **The hash chain cannot fork.** Every event carries ``hash``, SHA-256 chained to the previous
  event of its stream (``service/domain/chain.py``). It is computed in Python
  (``log.hashes``, which the in-memory store shares; the canonical JSON is Python's
  ``json.dumps``, which SQL cannot reproduce), from the head hash of
  the version the caller decided on. The store knows that hash from its reads (``_Heads``: a
  stored event's hash never changes, so a cached one is never wrong, only possibly old), and
  fetches it only when it does not. ``append_events_quiet`` then checks, inside the inserting
  transaction, that the stored head at the expected version *is* that hash (``SWHED``
  otherwise: re-read and re-hash), and ``unique (stream, version)`` lets only one event ever
  take the next version. So every event is chained on the stored head before it, and two
  writers can never both extend the same head.
  What is hashed is the data as ``jsonb`` stores it: ``log.stored_canonical`` reads numbers the way
  ``jsonb`` rewrites them (``1e2`` is stored as ``100``), so ``verify_stream`` recomputes the
  same bytes from ``data::text``.
* **Readers of the whole log read behind a horizon.** Positions are allocated as inserts happen
  but become visible at commit, so without the global lock a reader tailing ``position >
  last_seen`` could skip an event whose transaction commits late. ``read_all`` therefore
  orders by ``(txid, position)`` (``txid``: the writing transaction's ``xid8``) and returns only
  rows below ``pg_snapshot_xmin(pg_current_snapshot())``, the oldest transaction still running:
  below it every transaction has ended, so nothing can appear there later; a late commit has a
  txid at or above it and is read after the horizon passes it.
* JSON stays text across the wire: callers pass encoded JSON bytes in, get ``data::text`` bytes
  out, or (``read_events``) the whole stream as one JSON array decoded straight into their
  structs.
* **Wake-ups after the commit.** Followers (``service/store/wakeups.py``) are woken by
  ``NOTIFY swarm_events, <stream>``, sent once the append has committed, not inside it: a
  notifying transaction holds PostgreSQL's one server-wide notify lock from its pre-commit to
  the end of its commit, so appends that notified committed one at a time (migration 0017).
  ``_Wakener`` sends, for each process, one statement for all the streams written since its
  last (asynchronous commit: it is only a wake-up). One lost to a crash in between only delays
  followers until their next heartbeat re-read.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import asyncpg
import msgspec

from service.domain import chain
from service.store import citus, citus_reads
from service.store.log import (
    ConcurrencyConflict,
    DuplicateCommand,
    GuardRefused,
    LogCursor,
    RecordedEvent,
    StreamAppend,
    UniqueViolation,
    hashes,
    link,
)
from service.store.pool import Pool
from service.store.projections import guard_statement, statements
from service.store.rows import Row, TokenGuard

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Connection: TypeAlias = PoolConnectionProxy[asyncpg.Record]
else:
    Connection = Any

T = TypeVar("T")

log = logging.getLogger(__name__)

# LISTEN/NOTIFY channel: after each append commits, the names of the streams it wrote to are
# notified on it (`_Wakener`; service/store/wakeups.py listens).
WAKEUP_CHANNEL = "swarm_events"

# One notifying transaction for a batch of streams, committed asynchronously (a wake-up lost to
# a crash costs a follower a heartbeat's wait, nothing else): `set_config(..., true)` lasts
# until the end of this statement's own transaction, its commit included.
_WAKE = (
    "select count(pg_notify($1, s))"
    " from (select set_config('synchronous_commit', 'off', true)) as c, unnest($2::text[]) as s"
)
_WAKE_ATTEMPTS = 4
# Seconds the wakener gathers streams before it sends: a follower hears of an append this much
# later, and a process at 100-500 appends a second sends one statement for several of them.
_WAKE_WINDOW = 0.025

_EVENTS_UNIQUE = "events_stream_version_key"
_COMMANDS_PKEY = "processed_commands_pkey"

# SQLSTATEs raised by append_events_quiet (migrations/0012, 0015, 0017), and by a
# guard such as require_token (migrations/0014_token_guard.sql).
_DUPLICATE, _CONFLICT, _HEAD_MOVED, _GUARD = "SWDUP", "SWCON", "SWHED", "SWGRD"


_COLUMNS = "position, stream, version, type, data::text, metadata::text, recorded_at, hash, chain"

_APPEND_PARAMS = 13
_APPEND_CALL = f"append_events_quiet({', '.join(f'${i}' for i in range(1, 14))})"
_APPEND = f"select * from {_APPEND_CALL}"

# Each existing stream's head: its last version, that event's hash and its chain version.
_STREAM_HEADS = """
select distinct on (stream) stream, version, hash, chain
from events where stream = any($1::text[])
order by stream, version desc
"""

_STREAM_VERSION = "select coalesce(max(version), 0) from events where stream = $1"

_SERVER_SEEDS = "select game_id, server_seed from deal_secrets where game_id = any($1::text[])"

_COMMAND_VERSION = "select version from processed_commands where stream = $1 and command_id = $2"

# After a unique violation (a writer raced us past the checks): the facts, in one round trip.
_RACE_FACTS = """
select (select version from processed_commands where stream = $1 and command_id = $2),
       (select coalesce(max(version), 0) from events where stream = $3)
"""

# A stream's events (a window of them) as one JSON array, and its head: one row to decode.
_STREAM_ARRAY = """
select coalesce('[' || string_agg(e.data::text, ',' order by e.version) || ']', '[]'),
       h.version, h.hash, h.chain
  from (select version, hash, chain from events where stream = $1
         order by version desc limit 1) as h
  left join events as e
    on e.stream = $1 and e.version > $2 and ($3::integer is null or e.version <= $3)
 group by h.version, h.hash, h.chain
"""

_HORIZON = "txid < pg_snapshot_xmin(pg_current_snapshot())"

_METADATA_DECODER = msgspec.json.Decoder(dict[str, Any])
_EMPTY_METADATA = "{}"
_PARAM = re.compile(r"\$(\d+)")
FOLDABLE = re.compile(r"(?is)^\s*(insert|update|delete)\b")


class _Heads:
    """The last known (version, hash) of recently used streams. A stored event is immutable, so
    an entry is a fact; it is only ever out of date, and the append checks it anyway."""

    def __init__(self, capacity: int = 20_000) -> None:
        self.capacity = capacity
        self._heads: OrderedDict[str, tuple[int, bytes, int]] = OrderedDict()

    def get(self, stream: str, version: int) -> tuple[bytes, int] | None:
        """The hash and chain version of ``stream`` at ``version``, if that is its known head."""
        head = self._heads.get(stream)
        if head is None or head[0] != version:
            return None
        self._heads.move_to_end(stream)
        return head[1], head[2]

    def saw(self, stream: str, version: int, hash_: bytes | None, chain_: int) -> None:
        if not hash_:
            return
        known = self._heads.get(stream)
        if known is None or known[0] <= version:
            self._heads[stream] = (version, hash_, chain_)
        self._heads.move_to_end(stream)
        while len(self._heads) > self.capacity:
            self._heads.popitem(last=False)


def _to_event(
    row: asyncpg.Record | tuple[Any, ...], known: Mapping[str, dict[str, Any]] = {}
) -> RecordedEvent:
    """A row as a `RecordedEvent`; `known`: metadata texts already decoded (read-only)."""
    meta = row[5]
    decoded = known.get(meta)
    if decoded is None:
        decoded = {} if meta == _EMPTY_METADATA else _METADATA_DECODER.decode(meta)
    return RecordedEvent(
        position=row[0],
        stream=row[1],
        version=row[2],
        type=row[3],
        data=row[4].encode("utf-8"),
        metadata=decoded,
        recorded_at=row[6],
        hash=b"" if row[7] is None else bytes(row[7]),
        chain=row[8],
    )


@functools.lru_cache(maxsize=512)
def _is_foldable(sql: str) -> bool:
    return FOLDABLE.match(sql) is not None


def _shifted(offset: int, number: re.Match[str]) -> str:
    return f"${int(number[1]) + offset}"


def _with_also(also: Sequence[tuple[str, Sequence[Any]]]) -> tuple[str, list[Any]]:
    """The append and the ``also`` statements as one statement: each becomes a data-modifying
    CTE (always run to completion, in the same transaction; undone if the append raises)."""
    args: list[Any] = []
    for _, params in also:
        args.extend(params)
    return _folded_sql(tuple((sql, len(params)) for sql, params in also)), args


@functools.lru_cache(maxsize=512)
def _folded_sql(statements: tuple[tuple[str, int], ...]) -> str:
    """``_with_also``'s statement for these ``(sql, number of arguments)``: the same few shapes
    recur on every move (a timer or two, a projection row), so each is built once (issue 28)."""
    ctes: list[str] = []
    offset = _APPEND_PARAMS
    for i, (sql, count) in enumerate(statements):
        body = sql.strip().rstrip(";")
        if not FOLDABLE.match(body):
            raise ValueError(f"also= statements must be INSERT, UPDATE or DELETE: {sql!r}")
        numbers = [int(n) for n in _PARAM.findall(body)]
        if numbers and max(numbers) != count:
            raise ValueError(f"statement has ${max(numbers)} but {count} arguments")
        ctes.append(f"also_{i} as ({_PARAM.sub(partial(_shifted, offset), body)})")
        offset += count
    return f"with {', '.join(ctes)} {_APPEND}"


@functools.lru_cache(maxsize=512)
def _guarded_sql(sql: str, guard: str, offset: int) -> str:
    """``sql`` with ``guard`` evaluated once the events are in: an uncorrelated scalar subquery,
    evaluated with the first row returned, after the inserts, in the same statement, whose
    failure undoes them. Its parameters follow the ``offset`` before them."""
    check = _PARAM.sub(partial(_shifted, offset), guard.strip().rstrip(";"))
    return sql.replace(_APPEND, f"select a.*, ({check}) from {_APPEND_CALL} as a")


class _Wakener:
    """Wakes the followers of the streams appended to, after their commits: one task at a
    time sends one NOTIFY statement for every stream written in the last `_WAKE_WINDOW` or
    since the statement before, so a burst of appends costs a few notifying transactions,
    never one per append, and no append waits for one. A wake-up is a hint: followers also
    re-read on every heartbeat, so a batch that cannot be sent (after a few tries) is dropped
    with a warning."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self._pending: dict[str, None] = {}
        self._task: asyncio.Task[None] | None = None

    def wake(self, streams: Sequence[str]) -> None:
        self._pending.update(dict.fromkeys(streams))
        task = self._task
        loop = asyncio.get_running_loop()
        if task is None or task.done() or task.get_loop() is not loop:
            # A context of its own, not that of the request that happened to start it (its
            # request id would be on the wakener's log lines).
            self._task = loop.create_task(
                self._send(), name="swarm-wakener", context=contextvars.Context()
            )

    async def _send(self) -> None:
        failures = 0
        await asyncio.sleep(_WAKE_WINDOW)
        while self._pending:
            streams = list(self._pending)
            self._pending.clear()
            try:
                await self._pool.execute(_WAKE, WAKEUP_CHANNEL, streams)
                failures = 0
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as exc:
                failures += 1
                if failures >= _WAKE_ATTEMPTS or self._pool.is_closing():
                    log.warning(
                        "stream wake-ups not sent (%s): followers re-read on heartbeats", exc
                    )
                    return
                self._pending.update(dict.fromkeys(streams))
                await asyncio.sleep(0.05 * 2**failures)


class EventStore:
    """Append to and read from the ``events`` table through an asyncpg pool."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self._heads = _Heads()
        self._wakener = _Wakener(pool)
        self._citus: bool | None = None  # whether the database is Citus (asked once)

    async def on_citus(self) -> bool:
        """Whether the database has the citus extension (migration 0018): asked once."""
        if self._citus is None:
            self._citus = await citus.detect(self._pool)
        return self._citus

    async def colocated_id(self, key: str) -> str:
        """`port.EventLog.colocated_id`: on Citus, a fresh id on the shard of ``key``."""
        return (await citus.layout(self._pool)).colocated_id(key)

    async def append(
        self,
        *appends: StreamAppend,
        metadata: Mapping[str, Any] | None = None,
        command: tuple[str, str] | None = None,
        also: Sequence[Row] = (),
        guard: TokenGuard | None = None,
    ) -> list[RecordedEvent]:
        """`port.EventLog.append`: the rows and the guard as their statements
        (`service.store.projections`, or `service.store.citus` on Citus), in
        `append_statements`' one round trip."""
        rows = citus.statements if await self.on_citus() else statements
        return await self.append_statements(
            *appends,
            metadata=metadata,
            command=command,
            also=[each for row in also for each in rows(row)],
            guard=None if guard is None else guard_statement(guard),
        )

    async def append_statements(
        self,
        *appends: StreamAppend,
        metadata: Mapping[str, Any] | None = None,
        command: tuple[str, str] | None = None,
        also: Sequence[tuple[str, Sequence[Any]]] = (),
        guard: tuple[str, Sequence[Any]] | None = None,
    ) -> list[RecordedEvent]:
        """Append to one or several streams atomically; return the recorded events.

        Each ``StreamAppend`` must find its stream at ``expected_version`` (0: absent), else
        ``ConcurrencyConflict`` and nothing is written. ``command=(stream, command_id)`` makes
        the append idempotent: if that command was already processed, ``DuplicateCommand``
        (carrying the version it produced) and nothing is written; otherwise it is recorded with
        the stream's version after this append. The check is part of the append (one round
        trip), so callers need not look the command up first. ``metadata`` is stored on every
        event. ``also``: further ``(sql, args)`` statements committed with the events, for
        projections that must never lag behind them (the lobby, wallets, timers). Plain
        INSERT/UPDATE/DELETE statements ride in the same round trip (each must touch a row at
        most once per append); if any is of another kind (e.g. with its own WITH), all run in
        one transaction after the append instead, one round trip each, plus BEGIN and COMMIT.
        ``guard``: a ``select`` of one value that raises SQLSTATE SWGRD when the append must not
        happen (``require_token``), evaluated in the same statement once the events are in (so
        a refused append raises ``GuardRefused`` and keeps nothing), or in the same transaction.
        """
        streams = [a.stream for a in appends]
        if len(set(streams)) != len(streams):
            raise ValueError("each stream may appear only once in one append")
        if any(a.expected_version < 0 for a in appends):
            raise ValueError("expected_version must be >= 0")
        command_version: int | None = None
        if command is not None:
            by_stream = {a.stream: a for a in appends}
            if command[0] not in by_stream:
                raise ValueError(f"command stream {command[0]!r} is not among the appended streams")
            target = by_stream[command[0]]
            command_version = target.expected_version + len(target.events)

        s_col: list[str] = []
        v_col: list[int] = []
        t_col: list[str] = []
        d_col: list[str] = []  # each event's text, decoded once: the row's and the hash's
        for a in appends:
            for i, event in enumerate(a.events, start=1):
                s_col.append(a.stream)
                v_col.append(a.expected_version + i)
                t_col.append(event.type)
                d_col.append(event.data.decode("utf-8"))
        # The metadata says who acted and by which command; chain v2 covers it.
        meta: dict[str, Any] = dict(metadata or {})
        if command is not None:
            meta.setdefault("command_id", command[1])
        meta_text = msgspec.json.encode(meta).decode("utf-8") if meta else _EMPTY_METADATA
        # Plain INSERT/UPDATE/DELETE statements ride in the append's statement; any other kind
        # (one with its own WITH, say) runs after it in one transaction: more round trips.
        folded = all(_is_foldable(sql) for sql, _ in also)
        sql, also_args = _with_also(also) if also and folded else (_APPEND, [])
        separate = () if folded else also
        if guard is not None:
            if not any(a.events for a in appends):
                raise ValueError("a guard needs events to append")  # no row would evaluate it
            if folded:
                sql = _guarded_sql(sql, guard[0], _APPEND_PARAMS + len(also_args))
                also_args = [*also_args, *guard[1]]
        cmd_stream, cmd_id = command or (None, None)
        if await self.on_citus():
            return await self._append_on_citus(
                appends,
                meta_text,
                s_col,
                v_col,
                t_col,
                d_col,
                command,
                command_version,
                also,
                guard,
                meta,
            )

        async with self._pool.acquire() as conn:
            for _ in range(3):
                heads = await self._heads_for(conn, appends)
                args = [
                    streams,
                    [a.expected_version for a in appends],
                    [heads[a.stream][0] for a in appends],
                    s_col,
                    v_col,
                    t_col,
                    d_col,
                    hashes(appends, heads, meta, d_col),
                    meta_text,
                    cmd_stream,
                    cmd_id,
                    command_version,
                    [heads[a.stream][1] for a in appends],
                    *also_args,
                ]
                try:
                    if separate:
                        async with conn.transaction():
                            rows = await conn.fetch(sql, *args)
                            for statement, params in separate:
                                await conn.execute(statement, *params)
                            if guard is not None:
                                await conn.fetchval(guard[0], *guard[1])
                    else:
                        rows = await conn.fetch(sql, *args)
                except asyncpg.PostgresError as exc:
                    if exc.sqlstate == _HEAD_MOVED:
                        # Our head hash or chain version was not the stored one (cannot happen
                        # with the cache filled by reads of this store; a foreign writer
                        # could): take the stored ones and hash again.
                        stream, digest, scheme = (exc.detail or "").split("\t")
                        version = next(a.expected_version for a in appends if a.stream == stream)
                        self._heads.saw(stream, version, bytes.fromhex(digest), int(scheme))
                        continue
                    await self._refused(conn, exc, appends, command)
                    raise
                break
            else:
                raise RuntimeError("stream heads kept changing under the append")
        # Every row carries the same metadata (the append's): decoded once, not once a row.
        shared = {rows[0][5]: _METADATA_DECODER.decode(rows[0][5])} if rows else {}
        recorded = [_to_event(r, shared) for r in rows]
        last = {e.stream: e for e in recorded}  # each stream's last event (rows in order)
        for e in last.values():
            self._heads.saw(e.stream, e.version, e.hash, e.chain)
        if last:
            self._wakener.wake(list(last))
        return recorded

    async def _append_on_citus(
        self,
        appends: Sequence[StreamAppend],
        meta_text: str,
        s_col: list[str],
        v_col: list[int],
        t_col: list[str],
        d_col: list[str],
        command: tuple[str, str] | None,
        command_version: int | None,
        also: Sequence[tuple[str, Sequence[Any]]],
        guard: tuple[str, Sequence[Any]] | None,
        meta: Mapping[str, Any],
    ) -> list[RecordedEvent]:
        """`append_statements` on Citus (`service.store.citus`): the token check first, as a
        query of its own (the token's shard is not the append's), then the append as one call
        of `append_to_shard`, delegated to the shard's worker when everything in it is on one
        shard, else inside a transaction on the coordinator."""
        where = await citus.layout(self._pool)
        shards = {a.stream: citus.shard_of(a.stream) for a in appends}
        routing = shards[appends[0].stream]
        home = where.shard(routing)
        local = all(where.shard(k) == home for k in shards.values()) and all(
            citus.on_shard(sql, args, home, where) for sql, args in also
        )
        async with self._pool.acquire() as conn:
            if guard is not None:
                try:
                    await conn.fetchval(guard[0], *guard[1])
                except asyncpg.PostgresError as exc:
                    await self._refused(conn, exc, appends, command)
                    raise
            for _ in range(3):
                heads = await self._heads_for(conn, appends)
                digests = hashes(appends, heads, meta, d_col)
                batch = citus.batch(
                    [
                        (a.stream, a.expected_version, *heads[a.stream], shards[a.stream])
                        for a in appends
                    ],
                    list(zip(s_col, v_col, t_col, d_col, digests, strict=True)),
                    meta_text,
                    None
                    if command is None or command_version is None
                    else (command[0], command[1], command_version, shards[command[0]]),
                    also,
                )
                try:
                    if local:
                        answer = await conn.fetchval(citus.APPEND, routing, batch)
                    else:
                        async with conn.transaction():
                            answer = await conn.fetchval(citus.APPEND, routing, batch)
                except asyncpg.PostgresError as exc:
                    if exc.sqlstate == _HEAD_MOVED:
                        stream, digest, scheme = (exc.detail or "").split("\t")
                        version = next(a.expected_version for a in appends if a.stream == stream)
                        self._heads.saw(stream, version, bytes.fromhex(digest), int(scheme))
                        continue
                    await self._refused(conn, exc, appends, command)
                    raise
                break
            else:
                raise RuntimeError("stream heads kept changing under the append")
        rows = citus.recorded(answer)
        shared = {rows[0][5]: _METADATA_DECODER.decode(rows[0][5])} if rows else {}
        recorded = [_to_event(r, shared) for r in rows]
        last = {e.stream: e for e in recorded}
        for e in last.values():
            self._heads.saw(e.stream, e.version, e.hash, e.chain)
        if last:
            self._wakener.wake(list(last))
        return recorded

    async def _heads_for(
        self, conn: Connection, appends: Sequence[StreamAppend]
    ) -> dict[str, tuple[bytes | None, int]]:
        """The head hash each append continues from and its stream's chain version: none and v2
        for a new stream, the cached ones, or (one more round trip, only on a cache miss) the
        stored ones."""
        heads: dict[str, tuple[bytes | None, int]] = {}
        missing: list[str] = []
        for a in appends:
            if a.expected_version == 0:
                heads[a.stream] = (None, chain.CHAIN_V2)
                continue
            known = self._heads.get(a.stream, a.expected_version)
            if known is None:
                missing.append(a.stream)
            else:
                heads[a.stream] = known
        if missing:
            if await self.on_citus():  # one query per shard key, each on its one shard
                by_key: dict[str, list[str]] = {}
                for a in appends:
                    if a.stream in missing:
                        by_key.setdefault(citus.shard_of(a.stream), []).append(a.stream)
                found = [
                    row
                    for key, streams in by_key.items()
                    for row in await conn.fetch(citus.STREAM_HEADS, streams, key)
                ]
            else:
                found = await conn.fetch(_STREAM_HEADS, missing)
            for stream, version, hash_, scheme in found:
                digest = None if hash_ is None else bytes(hash_)
                self._heads.saw(stream, version, digest, scheme)
                heads[stream] = (digest, scheme)
            for stream in missing:  # a stream expected to exist that does not: v1's answer
                heads.setdefault(stream, (None, chain.CHAIN_V1))
        return heads

    async def _refused(
        self,
        conn: Connection,
        exc: asyncpg.PostgresError,
        appends: Sequence[StreamAppend],
        command: tuple[str, str] | None,
    ) -> None:
        """Raise what a refused append means to the caller (or return: not ours to map)."""
        state, detail = exc.sqlstate, exc.detail or ""
        if state == _GUARD:
            raise GuardRefused(str(exc)) from None
        if state == _DUPLICATE and command is not None:
            raise DuplicateCommand(command[0], command[1], int(detail)) from None
        if state == _CONFLICT:
            name, _, actual = detail.partition("\t")
            expected = next(a.expected_version for a in appends if a.stream == name)
            raise ConcurrencyConflict(name, expected, int(actual)) from None
        name = citus.constraint(exc)  # a shard's carries its shard id
        if isinstance(exc, asyncpg.UniqueViolationError) and name in (
            _EVENTS_UNIQUE,
            _COMMANDS_PKEY,
        ):
            # A writer raced us past the checks and committed first. The statement was rolled
            # back; look the facts up on the same connection (a second one from the pool could
            # deadlock a saturated pool).
            stream, expected = self._first_conflict(appends, exc)
            if await self.on_citus():
                cmd_stream, cmd_id = command or (None, None)
                cmd_key = None if cmd_stream is None else citus.shard_of(cmd_stream)
                facts = await conn.fetchrow(
                    citus.RACE_FACTS, cmd_stream, cmd_id, stream, cmd_key, citus.shard_of(stream)
                )
            else:
                facts = await conn.fetchrow(_RACE_FACTS, *(command or (None, None)), stream)
            done: int | None = facts[0] if facts is not None else None
            now: int = facts[1] if facts is not None else 0
            if command is not None and (done is not None or name == _COMMANDS_PKEY):
                raise DuplicateCommand(command[0], command[1], done or 0) from exc
            if name == _EVENTS_UNIQUE:
                raise ConcurrencyConflict(stream, expected, now) from exc
        if isinstance(exc, asyncpg.UniqueViolationError):  # of a statement in `also`
            raise UniqueViolation(name) from exc
        if isinstance(
            exc, asyncpg.InvalidTextRepresentationError | asyncpg.UntranslatableCharacterError
        ):
            raise ValueError(f"event data is not valid JSON: {exc}") from exc

    @staticmethod
    def _first_conflict(
        appends: Sequence[StreamAppend], exc: asyncpg.UniqueViolationError
    ) -> tuple[str, int]:
        detail = exc.detail or ""
        for a in appends:
            if f"({a.stream}," in detail or f", {a.stream}," in detail:  # Citus: key first
                return a.stream, a.expected_version
        return appends[0].stream, appends[0].expected_version

    async def read_stream(
        self, stream: str, *, after_version: int = 0, up_to_version: int | None = None
    ) -> list[RecordedEvent]:
        """Events of ``stream`` with ``after_version < version <= up_to_version``, in order.
        On Citus, `ShardsAway` at once if its worker is known to be away (`citus_reads`)."""
        if await self.on_citus():
            await citus_reads.ensure_reachable(self._pool, citus.shard_of(stream))
            rows = await self._pool.fetch(
                citus.READ_STREAM, stream, after_version, up_to_version, citus.shard_of(stream)
            )
        else:
            rows = await self._pool.fetch(
                f"select {_COLUMNS} from events"
                " where stream = $1 and version > $2 and ($3::integer is null or version <= $3)"
                " order by version",
                stream,
                after_version,
                up_to_version,
            )
        events = [_to_event(r) for r in rows]
        if events:
            self._heads.saw(stream, events[-1].version, events[-1].hash, events[-1].chain)
        return events

    async def read_events(
        self,
        stream: str,
        decode: Callable[[str], list[T]],
        *,
        after_version: int = 0,
        up_to_version: int | None = None,
    ) -> list[T]:
        """The data of the same events as ``read_stream``, decoded by ``decode`` from one JSON
        array (e.g. ``msgspec.json.Decoder(list[Event]).decode``): one row over the wire and
        one decoder call, instead of a record, a ``RecordedEvent`` and a decode per event.
        For rebuilding state, which needs nothing else."""
        if await self.on_citus():
            row = await self._pool.fetchrow(
                citus.STREAM_ARRAY, stream, after_version, up_to_version, citus.shard_of(stream)
            )
        else:
            row = await self._pool.fetchrow(_STREAM_ARRAY, stream, after_version, up_to_version)
        if row is None:
            return []
        if row[2] is not None:
            self._heads.saw(stream, row[1], bytes(row[2]), row[3])
        return decode(row[0])

    async def verify_stream(
        self,
        stream: str,
        *,
        anchors: Mapping[int, bytes] | None = None,
        seal_keys: Mapping[str, bytes] | None = None,
    ) -> chain.ChainVerdict:
        """Recompute the hash chain of ``stream`` (see ``service.domain.chain.verify_chain``).

        ``anchors`` are hashes by version known from outside the database: only they catch a
        removed tail or a suffix rewritten with recomputed hashes. ``seal_keys``: the keys of
        the games whose hidden values a v2 stream holds (``chain.seal_key``); by default read
        from the games' secrets.
        """
        events = await self.read_stream(stream)
        if seal_keys is None:
            seal_keys = await self._seal_keys(stream, events)
        links = [link(e) for e in events]
        return chain.verify_chain(links, stream=stream, anchors=anchors, seal_keys=seal_keys)

    async def _seal_keys(self, stream: str, events: Sequence[RecordedEvent]) -> dict[str, bytes]:
        """The seal keys a v2 stream's events need, from the games' secrets (``deal_secrets``):
        a game stream's own game, and every game a table's seed events name."""
        if not any(e.chain == chain.CHAIN_V2 for e in events):
            return {}
        kind, _, ident = stream.partition("-")
        games = {ident} if kind == "game" else set()
        for e in events:
            if kind == "table" and chain.HIDDEN["table"].get(e.type):
                games.add(str(msgspec.json.decode(e.data).get("game_id")))
        seeds = citus.SERVER_SEEDS if await self.on_citus() else _SERVER_SEEDS
        rows = await self._pool.fetch(seeds, sorted(games)) if games else []
        return {game_id: chain.seal_key(game_id, bytes(seed)) for game_id, seed in rows}

    async def head_link(self, stream: str, version: int) -> tuple[bytes, int] | None:
        """The hash of event ``version`` of ``stream`` and its chain version (None when there is
        none): the head this
        store last saw of the stream when it is that version (a stored hash never changes; the
        read that folded a game notes its head), else read (issue 28: `getGame` read it on
        every view, one round trip of its two)."""
        known = self._heads.get(stream, version)
        if known is not None:
            return known
        events = await self.read_stream(stream, after_version=version - 1, up_to_version=version)
        return (events[-1].hash, events[-1].chain) if events else None

    async def stream_version(self, stream: str) -> int:
        """The stream's current version; 0 when it has no events."""
        if await self.on_citus():
            return int(
                await self._pool.fetchval(citus.STREAM_VERSION, stream, citus.shard_of(stream))
            )
        return int(await self._pool.fetchval(_STREAM_VERSION, stream))

    async def command_version(self, stream: str, command_id: str) -> int | None:
        """The stream version that command produced, or None if it was never processed."""
        if await self.on_citus():
            version = await self._pool.fetchval(
                citus.COMMAND_VERSION, stream, command_id, citus.shard_of(stream)
            )
        else:
            version = await self._pool.fetchval(_COMMAND_VERSION, stream, command_id)
        return None if version is None else int(version)

    async def read_all(
        self,
        *,
        after: LogCursor | None = None,
        limit: int = 1000,
        stream_prefix: str | None = None,
        horizon: bool = True,
    ) -> list[RecordedEvent]:
        """Up to ``limit`` events of the whole log after ``after``, in ``(txid, position)``
        order; pass the last event's ``cursor`` to read on.

        Only events below the transaction horizon are returned (see the module docstring), so a
        reader following the log this way never skips a late commit; it lags behind the oldest
        transaction still running. ``horizon=False`` drops that guard: only for the test that
        shows what it guards against. ``stream_prefix`` keeps only streams starting with it.
        """
        if limit <= 0:
            return []
        after = after or LogCursor()
        if await self.on_citus():
            return await citus_reads.read_all(self._pool, after, limit, stream_prefix, horizon)
        where = ["(txid, position) > ($1::text::xid8, $2)"]
        args: list[Any] = [str(after.txid), after.position, limit]
        if horizon:
            where.append(_HORIZON)
        if stream_prefix is not None:
            where.append("starts_with(stream, $4)")
            args.append(stream_prefix)
        # Ordered by the table's columns, named as such: a bare `txid` in ORDER BY is the output
        # column `txid::text` (PostgreSQL prefers output names there), whose text order puts
        # "100" before "99", so a page could end below a row it held and the next hand it again.
        rows = await self._pool.fetch(
            f"select {_COLUMNS}, txid::text from events where {' and '.join(where)}"
            " order by events.txid, events.position limit $3",
            *args,
        )
        return [msgspec.structs.replace(_to_event(r), txid=int(r[9])) for r in rows]

    async def last_position(self) -> int:
        """The highest position in the log; 0 when it is empty."""
        return int(await self._pool.fetchval("select coalesce(max(position), 0) from events"))
