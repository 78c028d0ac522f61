"""The event log in memory: `InMemoryEventStore`, the second implementation of `port.EventLog`.

It keeps the same promises as the PostgreSQL store, checked by the same contract suite
(`tests/store_contract.py`): each stream's versions 1, 2, 3… with the expected version checked
(`ConcurrencyConflict`), several streams appended at once or not at all, a command applied once
(`DuplicateCommand`, with the version it produced), the data as `jsonb` would give it back,
metadata on every event, the whole log in `(txid, position)` order, and each event's hash chained
exactly as PostgreSQL chains it (chain v2: the body digest, then the time stamp), so
`verify_stream` and the audit work on it. An append is one step with no `await` inside, so
appends that race are serialised, as PostgreSQL's transactions are.

It runs no SQL: an append with `also=` or `guard=` statements is refused (`ValueError`). It is
for tests of what builds on the log; the service runs on PostgreSQL only. `InMemoryDealSecrets`
is the `port.DealSecrets` beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import msgspec

from service.domain import chain
from service.store.events import (
    ConcurrencyConflict,
    DuplicateCommand,
    EventStore,
    LogCursor,
    RecordedEvent,
    StreamAppend,
    _stored_value,
    link,
)

T = TypeVar("T")


def _now() -> datetime:
    return datetime.now(UTC)


class InMemoryEventStore:
    def __init__(self, clock: Callable[[], datetime] = _now) -> None:
        self._clock = clock
        self._streams: dict[str, list[RecordedEvent]] = {}
        self._log: list[RecordedEvent] = []
        self._commands: dict[tuple[str, str], int] = {}
        self._txid = 0
        self._last_time: datetime | None = None

    async def append(
        self,
        *appends: StreamAppend,
        metadata: Mapping[str, Any] | None = None,
        command: tuple[str, str] | None = None,
        also: Sequence[tuple[str, Sequence[Any]]] = (),
        guard: tuple[str, Sequence[Any]] | None = None,
    ) -> list[RecordedEvent]:
        if also or guard is not None:
            raise ValueError("the in-memory store runs no SQL: also= and guard= are PostgreSQL's")
        streams = [a.stream for a in appends]
        if len(set(streams)) != len(streams):
            raise ValueError("each stream may appear only once in one append")
        if any(a.expected_version < 0 for a in appends):
            raise ValueError("expected_version must be >= 0")
        meta: dict[str, Any] = dict(metadata or {})
        command_version: int | None = None
        if command is not None:
            by_stream = {a.stream: a for a in appends}
            if command[0] not in by_stream:
                raise ValueError(f"command stream {command[0]!r} is not among the appended streams")
            meta.setdefault("command_id", command[1])
            done = self._commands.get(command)
            if done is not None:
                raise DuplicateCommand(command[0], command[1], done)
            target = by_stream[command[0]]
            command_version = target.expected_version + len(target.events)
        for a in appends:
            actual = len(self._streams.get(a.stream, ()))
            if actual != a.expected_version:
                raise ConcurrencyConflict(a.stream, a.expected_version, actual)
        # Every stream of this store is hashed under chain v2 from its first event.
        heads = {a.stream: (self._head(a.stream), chain.CHAIN_V2) for a in appends}
        bodies = iter(EventStore._hashes(appends, heads, meta))  # checks the data, too
        recorded_at = self._stamp()
        self._txid += 1
        recorded: list[RecordedEvent] = []
        for a in appends:
            prev = heads[a.stream][0] or chain.GENESIS
            for version, event in enumerate(a.events, start=a.expected_version + 1):
                value, _ = _stored_value(event.data.decode("utf-8"))
                digest = chain.link_hash_v2(prev, next(bodies), recorded_at)
                recorded.append(
                    RecordedEvent(
                        position=len(self._log) + len(recorded) + 1,
                        stream=a.stream,
                        version=version,
                        type=event.type,
                        data=msgspec.json.encode(value),
                        metadata=dict(meta),
                        recorded_at=recorded_at,
                        hash=digest,
                        txid=self._txid,
                        chain=chain.CHAIN_V2,
                    )
                )
                prev = digest
        for e in recorded:
            self._streams.setdefault(e.stream, []).append(e)
        self._log.extend(recorded)
        if command is not None and command_version is not None:
            self._commands[command] = command_version
        return [msgspec.structs.replace(e, txid=0) for e in recorded]

    def _head(self, stream: str) -> bytes | None:
        events = self._streams.get(stream)
        return events[-1].hash if events else None

    def _stamp(self) -> datetime:
        """The time of an append, to the microsecond as PostgreSQL keeps it, never before the
        last one (v2 time stamps never go back within a stream)."""
        now = self._clock()
        if self._last_time is not None and now < self._last_time:
            now = self._last_time
        self._last_time = now
        return now

    async def read_stream(
        self, stream: str, *, after_version: int = 0, up_to_version: int | None = None
    ) -> list[RecordedEvent]:
        events = self._streams.get(stream, [])
        end = len(events) if up_to_version is None else max(0, min(up_to_version, len(events)))
        return [msgspec.structs.replace(e, txid=0) for e in events[max(after_version, 0) : end]]

    async def read_events(
        self,
        stream: str,
        decode: Callable[[str], list[T]],
        *,
        after_version: int = 0,
        up_to_version: int | None = None,
    ) -> list[T]:
        window = await self.read_stream(
            stream, after_version=after_version, up_to_version=up_to_version
        )
        return decode("[" + ",".join(e.data.decode("utf-8") for e in window) + "]")

    async def verify_stream(
        self,
        stream: str,
        *,
        anchors: Mapping[int, bytes] | None = None,
        seal_keys: Mapping[str, bytes] | None = None,
    ) -> chain.ChainVerdict:
        links = [link(e) for e in await self.read_stream(stream)]
        return chain.verify_chain(links, stream=stream, anchors=anchors, seal_keys=seal_keys)

    async def stream_version(self, stream: str) -> int:
        return len(self._streams.get(stream, ()))

    async def command_version(self, stream: str, command_id: str) -> int | None:
        return self._commands.get((stream, command_id))

    async def read_all(
        self,
        *,
        after: LogCursor | None = None,
        limit: int = 1000,
        stream_prefix: str | None = None,
        horizon: bool = True,
    ) -> list[RecordedEvent]:
        """As PostgreSQL's: every append has ended by the time anyone reads, so the horizon
        holds nothing back here."""
        if limit <= 0:
            return []
        after = after or LogCursor()
        page = []
        for e in self._log:
            if e.cursor > after and (stream_prefix is None or e.stream.startswith(stream_prefix)):
                page.append(e)
                if len(page) == limit:
                    break
        return page

    async def last_position(self) -> int:
        return len(self._log)


class InMemoryDealSecrets:
    """`port.DealSecrets` in memory: the seeds a test keeps (`keep`)."""

    def __init__(self) -> None:
        self._seeds: dict[str, bytes] = {}

    def keep(self, game_id: str, server_seed: bytes) -> None:
        self._seeds[game_id] = server_seed

    async def server_seed(self, game_id: str) -> bytes | None:
        return self._seeds.get(game_id)
