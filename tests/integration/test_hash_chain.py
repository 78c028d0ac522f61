"""The hash chain against a real PostgreSQL: appends chain their events, concurrent writers never
fork a stream, and tampering by someone with full database access is found at the right version.

Tampering tests work only on their own uuid streams, from a separate superuser connection, inside
one transaction (DDL is transactional, so no other session ever sees the triggers disabled) and
re-enable the triggers in a ``finally`` anyway.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import AsyncIterator

import asyncpg
import msgspec
import pytest

from service.domain import chain
from service.store.events import EventStore
from service.store.log import ConcurrencyConflict, NewEvent, RecordedEvent, StreamAppend


def new_stream(prefix: str = "chain") -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def event(type_: str = "Happened", **data: object) -> NewEvent:
    return NewEvent(type=type_, data=msgspec.json.encode(data))


async def stream_of(event_store: EventStore, n: int) -> str:
    stream = new_stream()
    await event_store.append(StreamAppend(stream, 0, [event(n=i) for i in range(1, n + 1)]))
    return stream


@pytest.fixture
async def superuser(database_url: str) -> AsyncIterator[asyncpg.Connection[asyncpg.Record]]:
    conn = await asyncpg.connect(database_url)
    try:
        if not await conn.fetchval("select rolsuper from pg_roles where rolname = current_user"):
            pytest.skip("the test database's login user is not a superuser")
        yield conn
    finally:
        await conn.close()


async def tamper(conn: asyncpg.Connection[asyncpg.Record], sql: str, *args: object) -> str:
    """Run ``sql`` on events with the immutability triggers off; return its status."""
    try:
        async with conn.transaction():
            await conn.execute("alter table events disable trigger user")
            status = await conn.execute(sql, *args)
            await conn.execute("alter table events enable trigger user")
            return status
    finally:
        await conn.execute("alter table events enable trigger user")


def v2_hash(prev: bytes, e: RecordedEvent) -> bytes:
    """The v2 link of a stored event of a stream that hides nothing (docs/fairness.md)."""
    body = chain.body_digest(
        e.stream, e.version, e.type, msgspec.json.decode(e.data), e.metadata, {}
    )
    return chain.link_hash_v2(prev, body, e.recorded_at)


async def test_appended_events_carry_hashes_that_verify(event_store: EventStore) -> None:
    stream, other = new_stream(), new_stream()
    first = await event_store.append(StreamAppend(stream, 0, [event("Created", seats=3)]))
    more = await event_store.append(
        StreamAppend(stream, 1, [event("Joined", seat=1), event("Joined", seat=2)]),
        StreamAppend(other, 0, [event("Created", seats=2)]),
        metadata={"actor": "p-1"},
    )
    recorded = first + [e for e in more if e.stream == stream]

    assert all(len(e.hash) == 32 and e.chain == chain.CHAIN_V2 for e in first + more)
    assert recorded[0].hash == v2_hash(chain.GENESIS, recorded[0])
    for prev, e in itertools.pairwise(recorded):
        assert e.hash == v2_hash(prev.hash, e)
        assert e.recorded_at >= prev.recorded_at
    assert await event_store.read_stream(stream) == recorded

    verdict = await event_store.verify_stream(stream)
    assert verdict == chain.ChainVerdict(ok=True, verified=3, head=recorded[-1].hash)
    assert (await event_store.verify_stream(other)).ok
    assert await event_store.verify_stream(new_stream()) == chain.ChainVerdict(
        ok=True, verified=0, head=chain.GENESIS
    )
    anchored = await event_store.verify_stream(stream, anchors={3: recorded[-1].hash})
    assert anchored.ok


async def test_a_stream_begun_under_v1_goes_on_under_v1(
    event_store: EventStore, superuser: asyncpg.Connection[asyncpg.Record]
) -> None:
    """A stream stored before migration 0015 keeps its chain version: its later events are
    chained under v1 too, so its old hashes stay valid and its chain unbroken."""
    stream = new_stream()
    digest = chain.event_hash(chain.GENESIS, stream, 1, "Created", chain.canonical_json({"n": 1}))
    await superuser.execute(
        "insert into events (stream, version, type, data, hash, chain)"
        " values ($1, 1, 'Created', '{\"n\": 1}', $2, 1)",
        stream,
        digest,
    )
    [second] = await EventStore(event_store._pool).append(StreamAppend(stream, 1, [event(n=2)]))
    assert second.chain == chain.CHAIN_V1
    assert second.hash == chain.event_hash(digest, stream, 2, "Happened", b'{"n":2}')
    assert (await event_store.verify_stream(stream)).ok


async def test_the_database_refuses_to_mix_chain_versions_in_a_stream(
    event_store: EventStore, superuser: asyncpg.Connection[asyncpg.Record]
) -> None:
    stream = await stream_of(event_store, 1)
    with pytest.raises(asyncpg.PostgresError, match="chained under v2"):
        await superuser.execute(
            "insert into events (stream, version, type, data, hash, chain)"
            " values ($1, 2, 'Happened', '{}', $2, 1)",
            stream,
            bytes(32),
        )


async def test_the_hash_covers_the_data_as_jsonb_stores_it(event_store: EventStore) -> None:
    # jsonb rewrites numbers (1e2 -> 100, 1e100 -> 1 and 100 zeros, -0.0 -> 0.0) and whitespace;
    # hashing the caller's bytes instead would make these events fail verification.
    sent = b'{"z": 1e2, "big": 1e100, "neg": -0.0, "keep": 1.50, "s": "\\u00e9", "a": [ 1 , 2 ]}'
    [recorded] = await event_store.append(StreamAppend(new_stream(), 0, [NewEvent("Odd", sent)]))
    assert chain.canonical_json(recorded.data) != chain.canonical_json(sent)
    verdict = await event_store.verify_stream(recorded.stream)
    assert verdict.ok, verdict


async def test_invalid_json_is_still_a_value_error_and_nothing_is_written(
    event_store: EventStore,
) -> None:
    stream = new_stream()
    for bad in (b"{not json", b'{"x": NaN}'):
        with pytest.raises(ValueError, match="not valid JSON"):
            await event_store.append(StreamAppend(stream, 0, [NewEvent("Bad", bad)]))
    assert await event_store.stream_version(stream) == 0


@pytest.mark.slow
async def test_concurrent_appends_never_fork_a_chain(event_store: EventStore) -> None:
    """Many writers race on one stream with whatever version they last saw: the conflicts are
    retried, and the final chain is one line through every event."""
    stream = new_stream()
    writers, appends_each = 24, 4
    conflicts = 0

    async def writer(w: int) -> None:
        nonlocal conflicts
        done = 0
        while done < appends_each:
            version = await event_store.stream_version(stream)
            try:
                await event_store.append(
                    StreamAppend(stream, version, [event(w=w, i=done), event(w=w, i=done, j=1)])
                )
            except ConcurrencyConflict:
                conflicts += 1
                await asyncio.sleep(0)
            else:
                done += 1

    await asyncio.gather(*(writer(w) for w in range(writers)))

    events = await event_store.read_stream(stream)
    assert [e.version for e in events] == list(range(1, writers * appends_each * 2 + 1))
    assert len({e.hash for e in events}) == len(events)
    verdict = await event_store.verify_stream(stream)
    assert verdict.ok and verdict.verified == len(events) and verdict.head == events[-1].hash
    assert conflicts > 0, "the writers were meant to race"


async def test_a_superuser_edit_of_event_data_fails_at_that_version(
    event_store: EventStore, superuser: asyncpg.Connection[asyncpg.Record]
) -> None:
    stream = await stream_of(event_store, 5)
    status = await tamper(
        superuser,
        "update events set data = '{\"n\": 30}' where stream = $1 and version = 3",
        stream,
    )
    assert status == "UPDATE 1"
    verdict = await event_store.verify_stream(stream)
    assert (verdict.ok, verdict.failed_version, verdict.reason) == (False, 3, "hash mismatch")
    assert verdict.verified == 2


async def test_a_superuser_edit_with_a_recomputed_hash_fails_at_the_next_version(
    event_store: EventStore, superuser: asyncpg.Connection[asyncpg.Record]
) -> None:
    stream = await stream_of(event_store, 5)
    events = await event_store.read_stream(stream)
    edited = msgspec.structs.replace(events[2], data=b'{"n":30}')
    await tamper(
        superuser,
        "update events set data = '{\"n\": 30}', hash = $2 where stream = $1 and version = 3",
        stream,
        v2_hash(events[1].hash, edited),
    )
    verdict = await event_store.verify_stream(stream)
    assert (verdict.failed_version, verdict.reason) == (4, "hash mismatch")


async def test_a_superuser_edit_of_a_time_stamp_fails_at_that_version(
    event_store: EventStore, superuser: asyncpg.Connection[asyncpg.Record]
) -> None:
    """v2 covers recorded_at: moving an event's time (here by one microsecond) breaks its link."""
    stream = await stream_of(event_store, 3)
    await tamper(
        superuser,
        "update events set recorded_at = recorded_at + interval '1 microsecond'"
        " where stream = $1 and version = 2",
        stream,
    )
    verdict = await event_store.verify_stream(stream)
    assert (verdict.failed_version, verdict.reason) == (2, "hash mismatch")


async def test_a_superuser_delete_of_a_middle_event_fails_at_that_version(
    event_store: EventStore, superuser: asyncpg.Connection[asyncpg.Record]
) -> None:
    stream = await stream_of(event_store, 5)
    status = await tamper(superuser, "delete from events where stream = $1 and version = 3", stream)
    assert status == "DELETE 1"
    verdict = await event_store.verify_stream(stream)
    assert (verdict.ok, verdict.failed_version, verdict.reason) == (False, 3, "version gap")


async def test_a_superuser_swap_of_two_events_fails_at_the_first(
    event_store: EventStore, superuser: asyncpg.Connection[asyncpg.Record]
) -> None:
    stream = await stream_of(event_store, 5)
    # Swap the contents (type, data, hash) of versions 2 and 3: the rows' order is the versions'.
    status = await tamper(
        superuser,
        "update events e set type = o.type, data = o.data, hash = o.hash from events o"
        " where e.stream = $1 and o.stream = $1"
        " and e.version in (2, 3) and o.version = 5 - e.version",
        stream,
    )
    assert status == "UPDATE 2"
    verdict = await event_store.verify_stream(stream)
    assert (verdict.failed_version, verdict.reason) == (2, "hash mismatch")


async def test_a_rewritten_suffix_or_removed_tail_needs_an_anchor(
    event_store: EventStore, superuser: asyncpg.Connection[asyncpg.Record]
) -> None:
    """The limit of a bare chain: the recipe is public, so whoever can write the table can
    delete the last event or recompute every hash after an edit. Only a hash kept outside the
    database (e.g. the head sent to players) catches that."""
    stream = await stream_of(event_store, 5)
    anchors = {5: (await event_store.read_stream(stream))[-1].hash}
    await tamper(superuser, "delete from events where stream = $1 and version = 5", stream)
    assert (await event_store.verify_stream(stream)).ok
    verdict = await event_store.verify_stream(stream, anchors=anchors)
    assert (verdict.failed_version, verdict.reason) == (5, "truncated")


async def test_rows_without_a_hash_are_refused(
    event_store: EventStore, superuser: asyncpg.Connection[asyncpg.Record]
) -> None:
    with pytest.raises(asyncpg.CheckViolationError):
        await superuser.execute(
            "insert into events (stream, version, type, data) values ($1, 1, 'NoHash', '{}')",
            new_stream(),
        )
    with pytest.raises(asyncpg.CheckViolationError):
        await superuser.execute(
            "insert into events (stream, version, type, data, hash)"
            " values ($1, 1, 'ShortHash', '{}', '\\x00')",
            new_stream(),
        )
