"""The event store: an append-only PostgreSQL table read and written with asyncpg.

Design (after pyeventsourcing's ``eventsourcing/postgres.py`` and message-db's
``database/functions/write-message.sql``):

* ``unique (stream, version)`` is the optimistic-concurrency backstop; the explicit version check
  inside the append transaction gives the precise error.
* Every append takes ``pg_advisory_xact_lock(APPEND_LOCK_KEY)`` before anything else. Writers are
  thereby serialised, so identity values (``position``) are allocated *and committed* in order:
  the lock is released only after the commit is visible. A reader tailing ``read_all`` with
  ``position > last_seen`` can therefore never skip an event whose transaction commits late —
  the gap problem of sequences under concurrent writers. pyeventsourcing takes an exclusive table
  lock for the same reason; message-db an advisory lock per category. One global lock is the
  simplest correct choice at our write rates; it caps throughput at one append transaction at
  a time.
* Every append also runs ``pg_notify('swarm_events', <stream>)`` per stream written, inside the
  transaction, so listeners (``service/store/wakeups.py``) wake only after the commit.
* Every event carries ``hash``, SHA-256 chained to the previous event of its stream
  (``service/domain/chain.py``). It is computed in the append transaction, under the append
  lock, from the stream's stored head hash, so concurrent writers cannot fork a chain. What is
  hashed is the data as ``jsonb`` stores it: the caller's JSON is normalised through ``jsonb``
  in the lock statement itself (no extra round trip), so ``verify_stream`` recomputes the same
  bytes from ``data::text``.
* JSON stays text across the wire: callers pass encoded JSON bytes in, get ``data::text`` bytes
  out. asyncpg never decodes jsonb for us, so nothing is decoded twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import asyncpg
import msgspec

from service.domain import chain
from service.store.pool import Pool

# LISTEN/NOTIFY channel: each append notifies the names of the streams it wrote to (see
# service/store/wakeups.py).
WAKEUP_CHANNEL = "swarm_events"

# Fixed key for the append lock ("swarm-ev" as ASCII, fits a signed bigint).
APPEND_LOCK_KEY = 0x737761726D2D6576

_EVENTS_UNIQUE = "events_stream_version_key"
_COMMANDS_PKEY = "processed_commands_pkey"


class NewEvent(msgspec.Struct, frozen=True):
    type: str
    data: bytes  # the event's JSON, already encoded by the caller (msgspec.json.encode)


class StreamAppend(msgspec.Struct, frozen=True):
    stream: str
    expected_version: int  # version the stream must be at now; 0 = the stream must not exist yet
    events: Sequence[NewEvent]


class RecordedEvent(msgspec.Struct, frozen=True):
    position: int
    stream: str
    version: int
    type: str
    data: bytes  # raw JSON bytes as stored (jsonb::text, so normalised by PostgreSQL)
    metadata: dict[str, Any]
    recorded_at: datetime
    hash: bytes = (
        b""  # the chain hash (service/domain/chain.py); empty for rows older than the chain
    )


class ConcurrencyConflict(Exception):
    """The stream was not at the expected version (someone else appended first)."""

    def __init__(self, stream: str, expected_version: int, actual_version: int) -> None:
        super().__init__(
            f"stream {stream!r} is at version {actual_version}, expected {expected_version}"
        )
        self.stream = stream
        self.expected_version = expected_version
        self.actual_version = actual_version


class DuplicateCommand(Exception):
    """This command id was already processed for the stream; nothing was written."""

    def __init__(self, stream: str, command_id: str, version: int) -> None:
        super().__init__(
            f"command {command_id!r} on stream {stream!r} was already processed (version {version})"
        )
        self.stream = stream
        self.command_id = command_id
        self.version = version


_COLUMNS = "position, stream, version, type, data::text, metadata::text, recorded_at, hash"

# Takes the append lock and, in the same round trip, returns the event data as jsonb will store it
# (the text the chain hashes, see service/domain/chain.py).
_LOCK_AND_NORMALISE = """
select pg_advisory_xact_lock($1),
       array(select d::jsonb::text from unnest($2::text[]) with ordinality as u(d, n) order by n)
"""

# One round trip under the append lock for the events, the idempotency record and the wake-ups:
# data-modifying CTEs always run, and `woken` runs because the result refers to it.
_INSERT_EVENTS = f"""
with inserted as (
    insert into events (stream, version, type, data, hash, metadata)
    select e.stream, e.version, e.type, e.data::jsonb, e.hash, $6::text::jsonb
    from unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::bytea[])
         with ordinality as e(stream, version, type, data, hash, n)
    order by e.n
    returning {_COLUMNS}
), recorded as (
    insert into processed_commands (stream, command_id, version)
    select $7::text, $8::text, $9::integer where $8::text is not null
), woken as (
    select count(pg_notify('{WAKEUP_CHANNEL}', s)) as n
    from (select distinct stream as s from inserted) as streams
)
select inserted.* from inserted, woken order by position
"""

# Each existing stream's head: its last version and that event's hash.
_STREAM_HEADS = """
select distinct on (stream) stream, version, hash
from events where stream = any($1::text[])
order by stream, version desc
"""

_STREAM_VERSION = "select coalesce(max(version), 0) from events where stream = $1"

_COMMAND_VERSION = "select version from processed_commands where stream = $1 and command_id = $2"


_METADATA_DECODER = msgspec.json.Decoder(dict[str, Any])
_EMPTY_METADATA = b"{}"


def _chain_hashes(
    heads: Mapping[str, tuple[int, bytes | None]],
    streams: Sequence[str],
    versions: Sequence[int],
    types: Sequence[str],
    stored_data: Sequence[str],
) -> list[bytes]:
    """Each new event's chain hash, continuing its stream's head (``GENESIS`` for a new stream).

    A head without a hash (written before migration 0003) restarts from ``GENESIS``; such a stream
    fails verification anyway ("missing hash").
    """
    last: dict[str, bytes] = {s: h or chain.GENESIS for s, (_, h) in heads.items()}
    hashes: list[bytes] = []
    for stream, version, type_, text in zip(streams, versions, types, stored_data, strict=True):
        try:
            data = chain.canonical_json(text)
        except ValueError as exc:
            raise ValueError(f"event data cannot be hashed: {exc}") from exc
        digest = chain.event_hash(last.get(stream, chain.GENESIS), stream, version, type_, data)
        last[stream] = digest
        hashes.append(digest)
    return hashes


def _to_event(row: asyncpg.Record) -> RecordedEvent:
    return RecordedEvent(
        position=row[0],
        stream=row[1],
        version=row[2],
        type=row[3],
        data=row[4].encode("utf-8"),
        metadata=_METADATA_DECODER.decode(row[5]),
        recorded_at=row[6],
        hash=b"" if row[7] is None else bytes(row[7]),
    )


class EventStore:
    """Append to and read from the ``events`` table through an asyncpg pool."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def append(
        self,
        *appends: StreamAppend,
        metadata: Mapping[str, Any] | None = None,
        command: tuple[str, str] | None = None,
        also: Sequence[tuple[str, Sequence[Any]]] = (),
    ) -> list[RecordedEvent]:
        """Append to one or several streams atomically; return the recorded events.

        Each ``StreamAppend`` must find its stream at ``expected_version`` (0: absent), else
        ``ConcurrencyConflict`` and nothing is written. ``command=(stream, command_id)`` makes
        the append idempotent: if that command was already processed, ``DuplicateCommand``
        (carrying the version it produced) and nothing is written; otherwise it is recorded with
        the stream's version after this append. ``metadata`` is stored on every event.
        ``also``: further ``(sql, args)`` statements run in the same transaction after the
        events, for projections that must never lag behind them (the lobby).
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
        d_col: list[str] = []
        for a in appends:
            for i, event in enumerate(a.events, start=1):
                s_col.append(a.stream)
                v_col.append(a.expected_version + i)
                t_col.append(event.type)
                d_col.append(event.data.decode("utf-8"))
        meta_text = (msgspec.json.encode(dict(metadata)) if metadata else _EMPTY_METADATA).decode(
            "utf-8"
        )

        async with self._pool.acquire() as conn:
            if command is not None:
                # Outside the append lock: a repeat of an old command is answered at once. Two
                # copies racing past this both reach the lock; the second then finds its stream
                # moved on and, looking again under the lock, the first copy's record (or trips
                # the primary key of processed_commands, mapped to DuplicateCommand below).
                done = await conn.fetchval(_COMMAND_VERSION, *command)
                if done is not None:
                    raise DuplicateCommand(command[0], command[1], done)
            try:
                async with conn.transaction():
                    stored_data: list[str] = await conn.fetchval(
                        _LOCK_AND_NORMALISE, APPEND_LOCK_KEY, d_col, column=1
                    )
                    heads: dict[str, tuple[int, bytes | None]] = {
                        r[0]: (r[1], r[2]) for r in await conn.fetch(_STREAM_HEADS, streams)
                    }
                    for a in appends:
                        actual = heads.get(a.stream, (0, None))[0]
                        if actual != a.expected_version:
                            if command is not None:
                                # Only on this slow path: a copy of this command that raced us
                                # here may be what moved the stream on.
                                done = await conn.fetchval(_COMMAND_VERSION, *command)
                                if done is not None:
                                    raise DuplicateCommand(command[0], command[1], done)
                            raise ConcurrencyConflict(a.stream, a.expected_version, actual)
                    h_col = _chain_hashes(heads, s_col, v_col, t_col, stored_data)
                    command_row = command or (None, None)
                    if s_col:
                        # Events, the command's record and the wake-ups (delivered to listeners
                        # only on commit: a wake-up, never the data) in one round trip.
                        rows = await conn.fetch(
                            _INSERT_EVENTS,
                            s_col,
                            v_col,
                            t_col,
                            stored_data,
                            h_col,
                            meta_text,
                            command_row[0],
                            command_row[1],
                            command_version,
                        )
                    else:
                        rows = []
                        if command is not None:
                            await conn.execute(
                                "insert into processed_commands (stream, command_id, version)"
                                " values ($1, $2, $3)",
                                command[0],
                                command[1],
                                command_version,
                            )
                    for sql, args in also:
                        await conn.execute(sql, *args)
            except asyncpg.UniqueViolationError as exc:
                # Backstops, only reachable if some writer bypassed the append lock. The
                # transaction is rolled back; look up the facts on the same connection (taking a
                # second one from the pool could deadlock a saturated pool).
                if exc.constraint_name == _COMMANDS_PKEY and command is not None:
                    version = await conn.fetchval(_COMMAND_VERSION, *command)
                    raise DuplicateCommand(command[0], command[1], version or 0) from exc
                if exc.constraint_name == _EVENTS_UNIQUE:
                    stream, expected = self._first_conflict(appends, exc)
                    actual = await conn.fetchval(_STREAM_VERSION, stream)
                    raise ConcurrencyConflict(stream, expected, actual) from exc
                raise
            except asyncpg.InvalidTextRepresentationError as exc:
                raise ValueError(f"event data is not valid JSON: {exc}") from exc
        return sorted((_to_event(r) for r in rows), key=lambda e: e.position)

    @staticmethod
    def _first_conflict(
        appends: Sequence[StreamAppend], exc: asyncpg.UniqueViolationError
    ) -> tuple[str, int]:
        detail = exc.detail or ""
        for a in appends:
            if f"({a.stream}," in detail:
                return a.stream, a.expected_version
        return appends[0].stream, appends[0].expected_version

    async def read_stream(
        self, stream: str, *, after_version: int = 0, up_to_version: int | None = None
    ) -> list[RecordedEvent]:
        """Events of ``stream`` with ``after_version < version <= up_to_version``, in order."""
        rows = await self._pool.fetch(
            f"select {_COLUMNS} from events"
            " where stream = $1 and version > $2 and ($3::integer is null or version <= $3)"
            " order by version",
            stream,
            after_version,
            up_to_version,
        )
        return [_to_event(r) for r in rows]

    async def verify_stream(
        self, stream: str, *, anchors: Mapping[int, bytes] | None = None
    ) -> chain.ChainVerdict:
        """Recompute the hash chain of ``stream`` (see ``service.domain.chain.verify_chain``).

        ``anchors`` are hashes by version known from outside the database: only they catch a
        removed tail or a suffix rewritten with recomputed hashes.
        """
        links = [
            chain.ChainLink(e.stream, e.version, e.type, e.data, e.hash)
            for e in await self.read_stream(stream)
        ]
        return chain.verify_chain(links, stream=stream, anchors=anchors)

    async def stream_version(self, stream: str) -> int:
        """The stream's current version; 0 when it has no events."""
        return int(await self._pool.fetchval(_STREAM_VERSION, stream))

    async def command_version(self, stream: str, command_id: str) -> int | None:
        """The stream version that command produced, or None if it was never processed."""
        version = await self._pool.fetchval(_COMMAND_VERSION, stream, command_id)
        return None if version is None else int(version)

    async def read_all(
        self, *, after_position: int = 0, limit: int = 1000, stream_prefix: str | None = None
    ) -> list[RecordedEvent]:
        """Up to ``limit`` events of the global log with ``position > after_position``, in order.

        ``stream_prefix`` keeps only streams starting with it (e.g. ``"game-"``).
        """
        if limit <= 0:
            return []
        if stream_prefix is None:
            rows = await self._pool.fetch(
                f"select {_COLUMNS} from events where position > $1 order by position limit $2",
                after_position,
                limit,
            )
        else:
            rows = await self._pool.fetch(
                f"select {_COLUMNS} from events"
                " where position > $1 and starts_with(stream, $3)"
                " order by position limit $2",
                after_position,
                limit,
                stream_prefix,
            )
        return [_to_event(r) for r in rows]

    async def last_position(self) -> int:
        """The highest position in the log; 0 when it is empty."""
        return int(await self._pool.fetchval("select coalesce(max(position), 0) from events"))
