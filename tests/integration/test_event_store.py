"""The event store against a real PostgreSQL (see tests/conftest.py for where it comes from)."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import msgspec
import pytest

from service.store.events import (
    APPEND_LOCK_KEY,
    ConcurrencyConflict,
    DuplicateCommand,
    EventStore,
    NewEvent,
    RecordedEvent,
    StreamAppend,
)
from service.store.pool import Pool


def new_stream(prefix: str = "test") -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def event(type_: str = "Happened", **data: object) -> NewEvent:
    return NewEvent(type=type_, data=msgspec.json.encode(data))


async def test_append_and_read_back(event_store: EventStore) -> None:
    stream = new_stream()
    assert await event_store.stream_version(stream) == 0
    before = await event_store.last_position()

    recorded = await event_store.append(
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
    assert await event_store.read_stream(stream) == recorded
    assert await event_store.stream_version(stream) == 2
    assert await event_store.last_position() >= recorded[-1].position

    more = await event_store.append(StreamAppend(stream, 2, [event(n=3), event(n=4)]))
    assert [e.version for e in more] == [3, 4]
    window = await event_store.read_stream(stream, after_version=1, up_to_version=3)
    assert [e.version for e in window] == [2, 3]
    assert await event_store.read_stream(new_stream()) == []


async def test_data_is_stored_as_jsonb_and_returned_as_json_bytes(event_store: EventStore) -> None:
    stream = new_stream()
    payload = {"b": [1, 2, {"c": None}], "a": "é ✓", "big": 2**53 + 1}
    [recorded] = await event_store.append(StreamAppend(stream, 0, [event(**payload)]))
    assert isinstance(recorded.data, bytes)
    assert msgspec.json.decode(recorded.data) == payload
    [read] = await event_store.read_stream(stream)
    assert read.data == recorded.data
    assert read.metadata == {}


async def test_invalid_json_is_a_value_error(event_store: EventStore) -> None:
    stream = new_stream()
    with pytest.raises(ValueError, match="not valid JSON"):
        await event_store.append(StreamAppend(stream, 0, [NewEvent("Bad", b"{not json")]))
    assert await event_store.stream_version(stream) == 0


async def test_wrong_expected_version_conflicts(event_store: EventStore) -> None:
    stream = new_stream()
    await event_store.append(StreamAppend(stream, 0, [event()]))
    for expected in (0, 2):
        with pytest.raises(ConcurrencyConflict) as info:
            await event_store.append(StreamAppend(stream, expected, [event()]))
        assert (info.value.stream, info.value.expected_version, info.value.actual_version) == (
            stream,
            expected,
            1,
        )
    assert await event_store.stream_version(stream) == 1


async def test_concurrent_appends_at_the_same_version_one_wins(event_store: EventStore) -> None:
    stream = new_stream()
    expected = 0
    for round_ in range(3):
        results = await asyncio.gather(
            *(
                event_store.append(StreamAppend(stream, expected, [event(w=w), event(w=w)]))
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
    versions = [e.version for e in await event_store.read_stream(stream)]
    assert versions == list(range(1, expected + 1))


async def test_multi_stream_append_is_atomic(event_store: EventStore) -> None:
    first, second = new_stream(), new_stream()
    await event_store.append(StreamAppend(second, 0, [event()]))

    with pytest.raises(ConcurrencyConflict) as info:
        await event_store.append(
            StreamAppend(first, 0, [event(), event()]),
            StreamAppend(second, 0, [event()]),  # stale: second is at 1
        )
    assert info.value.stream == second
    assert await event_store.stream_version(first) == 0
    assert await event_store.read_stream(first) == []

    recorded = await event_store.append(
        StreamAppend(first, 0, [event(), event()]),
        StreamAppend(second, 1, [event()]),
    )
    assert [(e.stream, e.version) for e in recorded] == [(first, 1), (first, 2), (second, 2)]
    assert [e.position for e in recorded] == sorted(e.position for e in recorded)


async def test_append_rejects_the_same_stream_twice(event_store: EventStore) -> None:
    stream = new_stream()
    with pytest.raises(ValueError):
        await event_store.append(StreamAppend(stream, 0, [event()]), StreamAppend(stream, 1, []))


async def test_duplicate_command_writes_nothing(event_store: EventStore) -> None:
    stream = new_stream()
    await event_store.append(StreamAppend(stream, 0, [event("Created")]), command=(stream, "c-1"))
    await event_store.append(StreamAppend(stream, 1, [event(), event()]), command=(stream, "c-2"))
    assert await event_store.command_version(stream, "c-1") == 1
    assert await event_store.command_version(stream, "c-2") == 3
    assert await event_store.command_version(stream, "c-3") is None

    # A retry of c-2, whether its expected version is now stale or current.
    for expected in (1, 3):
        with pytest.raises(DuplicateCommand) as info:
            await event_store.append(
                StreamAppend(stream, expected, [event()]), command=(stream, "c-2")
            )
        assert (info.value.stream, info.value.command_id, info.value.version) == (stream, "c-2", 3)
    assert await event_store.stream_version(stream) == 3

    # The same command id on another stream is a different command.
    other = new_stream()
    await event_store.append(StreamAppend(other, 0, [event()]), command=(other, "c-2"))


async def test_concurrent_retries_of_one_command_apply_once(event_store: EventStore) -> None:
    stream = new_stream()
    results = await asyncio.gather(
        *(
            event_store.append(StreamAppend(stream, 0, [event()]), command=(stream, "same"))
            for _ in range(10)
        ),
        return_exceptions=True,
    )
    assert sum(isinstance(r, list) for r in results) == 1
    assert sum(isinstance(r, DuplicateCommand) for r in results) == 9
    assert await event_store.stream_version(stream) == 1


async def test_read_all_pages_in_position_order_and_filters_by_prefix(
    event_store: EventStore,
) -> None:
    prefix = f"page-{uuid.uuid4().hex}-"
    start = await event_store.last_position()
    for i in range(5):
        await event_store.append(StreamAppend(f"{prefix}{i}", 0, [event(), event()]))
        await event_store.append(StreamAppend(new_stream("noise"), 0, [event()]))

    seen: list[RecordedEvent] = []
    after = start
    while page := await event_store.read_all(after_position=after, limit=3, stream_prefix=prefix):
        assert len(page) <= 3
        seen += page
        after = page[-1].position
    assert len(seen) == 10
    assert all(e.stream.startswith(prefix) for e in seen)
    positions = [e.position for e in seen]
    assert positions == sorted(set(positions))

    unfiltered = await event_store.read_all(after_position=start, limit=1000)
    assert {e.position for e in seen} < {e.position for e in unfiltered}
    assert await event_store.read_all(after_position=start, limit=0) == []


@pytest.mark.slow
async def test_tailing_reader_never_misses_a_late_commit(
    event_store: EventStore, pool: Pool
) -> None:
    """Writers race, some holding their transaction open before commit; a reader tailing the
    global log must see positions strictly increasing and, in the end, every event."""
    prefix = f"tail-{uuid.uuid4().hex}-"
    start = await event_store.last_position()
    writers_done = asyncio.Event()

    async def fast_writer(w: int) -> None:
        stream = f"{prefix}fast-{w}"
        for version in range(12):
            await event_store.append(StreamAppend(stream, version, [event(w=w)]))
            await asyncio.sleep(0.001 * (w % 3))

    async def slow_writer(w: int) -> None:
        # Follows the append protocol (the lock first) but commits late, as a slow client would.
        stream = f"{prefix}slow-{w}"
        async with pool.acquire() as conn:
            for version in range(1, 6):
                async with conn.transaction():
                    await conn.execute("select pg_advisory_xact_lock($1)", APPEND_LOCK_KEY)
                    await conn.execute(
                        # Not a valid chain hash (the chain is not this test's concern).
                        "insert into events (stream, version, type, data, hash)"
                        " values ($1, $2, $3, $4, sha256('slow'))",
                        stream,
                        version,
                        "Slow",
                        '{"slow": true}',
                    )
                    await conn.execute("select pg_sleep(0.03)")
                await asyncio.sleep(0.005)

    async def reader() -> list[RecordedEvent]:
        seen: list[RecordedEvent] = []
        after = start
        while True:
            finished = writers_done.is_set()
            page = await event_store.read_all(after_position=after, limit=7, stream_prefix=prefix)
            for e in page:
                assert e.position > after, "positions must strictly increase"
                after = e.position
            seen += page
            if finished and not page:
                return seen
            await asyncio.sleep(0.002)

    async def writers() -> None:
        try:
            await asyncio.gather(
                *(fast_writer(w) for w in range(4)), slow_writer(0), slow_writer(1)
            )
        finally:
            writers_done.set()

    seen, _ = await asyncio.gather(reader(), writers())

    final = await event_store.read_all(after_position=start, limit=10_000, stream_prefix=prefix)
    assert len(final) == 4 * 12 + 2 * 5
    assert [e.position for e in seen] == [e.position for e in final]


async def test_pool_connections_run_as_the_app_role(pool: Pool) -> None:
    for _ in range(3):  # the role survives the pool's reset between acquisitions
        async with pool.acquire() as conn:
            assert await conn.fetchval("select current_user") == "swarm_app"
            await conn.execute("reset all")
            assert await conn.fetchval("select current_user") == "swarm_app"


@pytest.mark.parametrize(
    "statement",
    [
        "update events set type = 'Tampered' where stream = $1",
        "delete from events where stream = $1",
        "truncate events",
    ],
)
async def test_events_are_immutable(
    event_store: EventStore, pool: Pool, database_url: str, statement: str
) -> None:
    stream = new_stream()
    await event_store.append(StreamAppend(stream, 0, [event()]))
    args = (stream,) if "$1" in statement else ()

    # By privilege, as the application role.
    async with pool.acquire() as conn:
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(statement, *args)

    # By trigger, as the (superuser) login user.
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("select current_user") != "swarm_app"
        with pytest.raises(asyncpg.RestrictViolationError, match="events are immutable"):
            await conn.execute(statement, *args)
    finally:
        await conn.close()

    assert [e.type for e in await event_store.read_stream(stream)] == ["Happened"]


@pytest.mark.fault
async def test_unique_constraints_back_up_the_checks_for_writers_that_skip_the_lock(
    event_store: EventStore, database_url: str
) -> None:
    """A rogue writer that ignores the append lock commits while an append is in flight: the
    unique indexes still turn the race into ConcurrencyConflict / DuplicateCommand."""
    stream = new_stream()
    rogue = await asyncpg.connect(database_url)
    try:
        rogue_inserts: list[tuple[str, type[Exception]]] = [
            (
                "insert into events (stream, version, type, data, hash)"
                " values ($1, 1, 'Rogue', '{}', sha256('rogue'))",
                ConcurrencyConflict,
            ),
            (
                "insert into processed_commands (stream, command_id, version)"
                " values ($1, 'cmd', 7)",
                DuplicateCommand,
            ),
        ]
        for rogue_insert, expected_error in rogue_inserts:
            tx = rogue.transaction()
            await tx.start()
            await rogue.execute(rogue_insert, stream)
            expected = await event_store.stream_version(stream)
            append = asyncio.create_task(
                event_store.append(
                    StreamAppend(stream, expected, [event()]), command=(stream, "cmd")
                )
            )
            await asyncio.sleep(0.2)  # the append now waits on the rogue row's index entry
            assert not append.done()
            await tx.commit()
            with pytest.raises(expected_error) as info:
                await append
            if isinstance(info.value, ConcurrencyConflict):
                assert (info.value.expected_version, info.value.actual_version) == (0, 1)
            else:
                assert isinstance(info.value, DuplicateCommand)
                assert info.value.version == 7
    finally:
        await rogue.close()
    assert [e.type for e in await event_store.read_stream(stream)] == ["Rogue"]
