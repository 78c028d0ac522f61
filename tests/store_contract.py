"""The contract of the event log (`service.store.port.EventLog`), one suite for every store,
as pyeventsourcing runs one persistence suite against every recorder: a test class for a store
subclasses `EventLogContract` and gives the fixture `log`. PostgreSQL's runs in
tests/integration/test_event_store.py, the in-memory store's in
tests/unit/test_memory_event_store.py."""

from __future__ import annotations

import asyncio
import uuid

import msgspec
import pytest

from service.store.events import (
    ConcurrencyConflict,
    DuplicateCommand,
    LogCursor,
    NewEvent,
    RecordedEvent,
    StreamAppend,
)
from service.store.port import EventLog


def new_stream(prefix: str = "test") -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def event(type_: str = "Happened", **data: object) -> NewEvent:
    return NewEvent(type=type_, data=msgspec.json.encode(data))


async def _log_end(log: EventLog) -> LogCursor:
    """A cursor past everything committed so far (waiting out the horizon: other sessions on
    the same server may hold it back for a moment)."""
    cursor = LogCursor()
    for _ in range(200):
        page = await log.read_all(after=cursor, limit=10_000)
        if page:
            cursor = page[-1].cursor
        elif await log.read_all(after=cursor, limit=1, horizon=False) == []:
            return cursor
        else:
            await asyncio.sleep(0.05)
    raise AssertionError("the horizon never passed the log's end")


class EventLogContract:
    """What every store promises. Subclasses provide the `log` fixture."""

    async def test_append_and_read_back(self, log: EventLog) -> None:
        stream = new_stream()
        assert await log.stream_version(stream) == 0
        before = await log.last_position()

        recorded = await log.append(
            StreamAppend(stream, 0, [event("Created", seats=3), event("Joined", seat=1)]),
            metadata={"correlation_id": "c-1"},
        )

        assert [(e.stream, e.version, e.type) for e in recorded] == [
            (stream, 1, "Created"),
            (stream, 2, "Joined"),
        ]
        assert recorded[0].position < recorded[1].position
        assert recorded[0].position > before
        assert msgspec.json.decode(recorded[0].data) == {"seats": 3}
        assert all(e.metadata == {"correlation_id": "c-1"} for e in recorded)
        assert await log.read_stream(stream) == recorded
        assert await log.stream_version(stream) == 2
        assert await log.last_position() >= recorded[-1].position

        more = await log.append(StreamAppend(stream, 2, [event(n=3), event(n=4)]))
        assert [e.version for e in more] == [3, 4]
        window = await log.read_stream(stream, after_version=1, up_to_version=3)
        assert [e.version for e in window] == [2, 3]
        assert await log.read_stream(new_stream()) == []

    async def test_data_is_stored_as_jsonb_and_returned_as_json_bytes(self, log: EventLog) -> None:
        stream = new_stream()
        payload = {"b": [1, 2, {"c": None}], "a": "é ✓", "big": 2**53 + 1}
        [recorded] = await log.append(StreamAppend(stream, 0, [event(**payload)]))
        assert isinstance(recorded.data, bytes)
        assert msgspec.json.decode(recorded.data) == payload
        [read] = await log.read_stream(stream)
        assert read.data == recorded.data
        assert read.metadata == {}

    async def test_invalid_json_is_a_value_error(self, log: EventLog) -> None:
        stream = new_stream()
        with pytest.raises(ValueError, match="not valid JSON"):
            await log.append(StreamAppend(stream, 0, [NewEvent("Bad", b"{not json")]))
        assert await log.stream_version(stream) == 0

    async def test_wrong_expected_version_conflicts(self, log: EventLog) -> None:
        stream = new_stream()
        await log.append(StreamAppend(stream, 0, [event()]))
        for expected in (0, 2):
            with pytest.raises(ConcurrencyConflict) as info:
                await log.append(StreamAppend(stream, expected, [event()]))
            assert (info.value.stream, info.value.expected_version, info.value.actual_version) == (
                stream,
                expected,
                1,
            )
        assert await log.stream_version(stream) == 1

    async def test_concurrent_appends_at_the_same_version_one_wins(self, log: EventLog) -> None:
        stream = new_stream()
        expected = 0
        for round_ in range(3):
            results = await asyncio.gather(
                *(
                    log.append(StreamAppend(stream, expected, [event(w=w), event(w=w)]))
                    for w in range(20)
                ),
                return_exceptions=True,
            )
            wins = [r for r in results if isinstance(r, list)]
            conflicts = [r for r in results if isinstance(r, ConcurrencyConflict)]
            assert len(wins) == 1, f"round {round_}: {results!r}"
            assert len(conflicts) == 19
            assert all(c.actual_version == expected + 2 for c in conflicts)
            expected += 2
        versions = [e.version for e in await log.read_stream(stream)]
        assert versions == list(range(1, expected + 1))

    async def test_multi_stream_append_is_atomic(self, log: EventLog) -> None:
        first, second = new_stream(), new_stream()
        await log.append(StreamAppend(second, 0, [event()]))

        with pytest.raises(ConcurrencyConflict) as info:
            await log.append(
                StreamAppend(first, 0, [event(), event()]),
                StreamAppend(second, 0, [event()]),  # stale: second is at 1
            )
        assert info.value.stream == second
        assert await log.stream_version(first) == 0
        assert await log.read_stream(first) == []

        recorded = await log.append(
            StreamAppend(first, 0, [event(), event()]),
            StreamAppend(second, 1, [event()]),
        )
        assert [(e.stream, e.version) for e in recorded] == [(first, 1), (first, 2), (second, 2)]
        assert [e.position for e in recorded] == sorted(e.position for e in recorded)

    async def test_append_rejects_the_same_stream_twice(self, log: EventLog) -> None:
        stream = new_stream()
        with pytest.raises(ValueError):
            await log.append(StreamAppend(stream, 0, [event()]), StreamAppend(stream, 1, []))

    async def test_duplicate_command_writes_nothing(self, log: EventLog) -> None:
        stream = new_stream()
        await log.append(StreamAppend(stream, 0, [event("Created")]), command=(stream, "c-1"))
        await log.append(StreamAppend(stream, 1, [event(), event()]), command=(stream, "c-2"))
        assert await log.command_version(stream, "c-1") == 1
        assert await log.command_version(stream, "c-2") == 3
        assert await log.command_version(stream, "c-3") is None

        # A retry of c-2, whether its expected version is now stale or current.
        for expected in (1, 3):
            with pytest.raises(DuplicateCommand) as info:
                await log.append(StreamAppend(stream, expected, [event()]), command=(stream, "c-2"))
            assert (info.value.stream, info.value.command_id, info.value.version) == (
                stream,
                "c-2",
                3,
            )
        assert await log.stream_version(stream) == 3

        # The same command id on another stream is a different command.
        other = new_stream()
        await log.append(StreamAppend(other, 0, [event()]), command=(other, "c-2"))

    async def test_concurrent_retries_of_one_command_apply_once(self, log: EventLog) -> None:
        """Copies of one command race (a client retrying at once): one applies, every other is
        answered as a duplicate, whether it lost at the command check, the version check (the
        first copy committed between the two) or the unique index."""
        for _ in range(5):
            stream = new_stream()
            results = await asyncio.gather(
                *(
                    log.append(StreamAppend(stream, 0, [event()]), command=(stream, "same"))
                    for _ in range(20)
                ),
                return_exceptions=True,
            )
            assert sum(isinstance(r, list) for r in results) == 1, results
            assert sum(isinstance(r, DuplicateCommand) for r in results) == 19, results
            assert all(r.version == 1 for r in results if isinstance(r, DuplicateCommand))
            assert await log.stream_version(stream) == 1

    async def test_read_all_pages_in_order_and_filters_by_prefix(self, log: EventLog) -> None:
        prefix = f"page-{uuid.uuid4().hex}-"
        start = await _log_end(log)
        for i in range(5):
            await log.append(StreamAppend(f"{prefix}{i}", 0, [event(), event()]))
            await log.append(StreamAppend(new_stream("noise"), 0, [event()]))
        await _log_end(log)  # everything appended is now below the horizon

        seen: list[RecordedEvent] = []
        after = start
        while page := await log.read_all(after=after, limit=3, stream_prefix=prefix):
            assert len(page) <= 3
            seen += page
            after = page[-1].cursor
        assert len(seen) == 10
        assert all(e.stream.startswith(prefix) for e in seen)
        cursors = [e.cursor for e in seen]
        assert cursors == sorted(set(cursors))
        # Appended one after another, the transactions' order is the positions' order.
        assert [e.position for e in seen] == sorted(e.position for e in seen)

        unfiltered = await log.read_all(after=start, limit=1000)
        assert {e.position for e in seen} < {e.position for e in unfiltered}
        assert await log.read_all(after=start, limit=0) == []

    async def test_read_events_decodes_a_window_of_a_stream_in_one_go(self, log: EventLog) -> None:
        stream = new_stream()
        await log.append(StreamAppend(stream, 0, [event(n=n) for n in range(1, 6)]))
        decode = msgspec.json.Decoder(list[dict[str, int]]).decode
        assert await log.read_events(stream, decode) == [{"n": n} for n in range(1, 6)]
        assert await log.read_events(stream, decode, after_version=3) == [{"n": 4}, {"n": 5}]
        window = await log.read_events(stream, decode, after_version=1, up_to_version=3)
        assert window == [{"n": 2}, {"n": 3}]
        assert await log.read_events(stream, decode, after_version=5) == []
        assert await log.read_events(new_stream(), decode) == []

    async def test_every_event_is_chained_to_the_one_before(self, log: EventLog) -> None:
        stream = new_stream()
        await log.append(StreamAppend(stream, 0, [event(n=1), event(n=2)]))
        await log.append(StreamAppend(stream, 2, [event(n=3)]), metadata={"actor": "a"})
        verdict = await log.verify_stream(stream)
        assert verdict.ok and verdict.verified == 3
        recorded = await log.read_stream(stream)
        assert verdict.head == recorded[-1].hash
        assert len({e.hash for e in recorded}) == 3
        assert (await log.verify_stream(stream, anchors={3: recorded[-1].hash})).ok
        assert not (await log.verify_stream(stream, anchors={2: bytes(32)})).ok
