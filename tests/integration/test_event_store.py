"""The event store against a real PostgreSQL (see tests/conftest.py for where it comes from)."""

from __future__ import annotations

import asyncio
import random
import uuid
from datetime import UTC, datetime

import asyncpg
import msgspec
import pytest

from service.domain import chain
from service.store.events import (
    ConcurrencyConflict,
    DuplicateCommand,
    EventStore,
    GuardRefused,
    LogCursor,
    NewEvent,
    RecordedEvent,
    StreamAppend,
    _stored_canonical,
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
    """Copies of one command race (a client retrying at once): one applies, every other is
    answered as a duplicate, whether it lost at the command check, the version check (the
    first copy committed between the two) or the unique index."""
    for _ in range(5):
        stream = new_stream()
        results = await asyncio.gather(
            *(
                event_store.append(StreamAppend(stream, 0, [event()]), command=(stream, "same"))
                for _ in range(20)
            ),
            return_exceptions=True,
        )
        assert sum(isinstance(r, list) for r in results) == 1, results
        assert sum(isinstance(r, DuplicateCommand) for r in results) == 19, results
        assert all(r.version == 1 for r in results if isinstance(r, DuplicateCommand))
        assert await event_store.stream_version(stream) == 1


async def _log_end(event_store: EventStore) -> LogCursor:
    """A cursor past everything committed so far (waiting out the horizon: other sessions on
    the same server may hold it back for a moment)."""
    cursor = LogCursor()
    for _ in range(200):
        page = await event_store.read_all(after=cursor, limit=10_000)
        if page:
            cursor = page[-1].cursor
        elif await event_store.read_all(after=cursor, limit=1, horizon=False) == []:
            return cursor
        else:
            await asyncio.sleep(0.05)
    raise AssertionError("the horizon never passed the log's end")


async def test_read_all_pages_in_order_and_filters_by_prefix(event_store: EventStore) -> None:
    prefix = f"page-{uuid.uuid4().hex}-"
    start = await _log_end(event_store)
    for i in range(5):
        await event_store.append(StreamAppend(f"{prefix}{i}", 0, [event(), event()]))
        await event_store.append(StreamAppend(new_stream("noise"), 0, [event()]))
    await _log_end(event_store)  # everything appended is now below the horizon

    seen: list[RecordedEvent] = []
    after = start
    while page := await event_store.read_all(after=after, limit=3, stream_prefix=prefix):
        assert len(page) <= 3
        seen += page
        after = page[-1].cursor
    assert len(seen) == 10
    assert all(e.stream.startswith(prefix) for e in seen)
    cursors = [e.cursor for e in seen]
    assert cursors == sorted(set(cursors))
    # Appended one after another, the transactions' order is the positions' order.
    assert [e.position for e in seen] == sorted(e.position for e in seen)

    unfiltered = await event_store.read_all(after=start, limit=1000)
    assert {e.position for e in seen} < {e.position for e in unfiltered}
    assert await event_store.read_all(after=start, limit=0) == []


async def _slow_insert(conn: asyncpg.Connection[asyncpg.Record], stream: str, version: int) -> None:
    # A raw row, as an append whose commit is late would leave it (not a valid chain hash: the
    # chain is not these tests' concern).
    await conn.execute(
        "insert into events (stream, version, type, data, hash)"
        " values ($1, $2, 'Slow', '{\"slow\": true}', sha256('slow'))",
        stream,
        version,
    )


async def _tail(
    event_store: EventStore,
    prefix: str,
    start: LogCursor,
    done: asyncio.Event,
    expected: int,
    *,
    horizon: bool,
) -> list[RecordedEvent]:
    """Follow the log from ``start`` (pages of 7) until the writers are done and ``expected``
    events are read, or (a reader that skipped some) until it finds nothing new for a while."""
    seen: list[RecordedEvent] = []
    after = start
    idle_since: float | None = None
    loop = asyncio.get_running_loop()
    while True:
        page = await event_store.read_all(
            after=after, limit=7, stream_prefix=prefix, horizon=horizon
        )
        for e in page:
            assert e.cursor > after, "the order must strictly increase"
            after = e.cursor
        seen += page
        if done.is_set() and not page:
            if len(seen) >= expected:
                return seen
            idle_since = idle_since or loop.time()
            if loop.time() - idle_since > 2.0:
                return seen
        else:
            idle_since = None
        await asyncio.sleep(0.002)


@pytest.mark.slow
async def test_tailing_reader_never_misses_a_late_commit(
    event_store: EventStore, pool: Pool
) -> None:
    """Writers race, some holding their transaction open before commit; a reader tailing the
    whole log must see its order strictly increasing and, in the end, every event."""
    prefix = f"tail-{uuid.uuid4().hex}-"
    start = await _log_end(event_store)
    writers_done = asyncio.Event()

    async def fast_writer(w: int) -> None:
        stream = f"{prefix}fast-{w}"
        for version in range(12):
            await event_store.append(StreamAppend(stream, version, [event(w=w)]))
            await asyncio.sleep(0.001 * (w % 3))

    async def slow_writer(w: int) -> None:
        # Commits late, as a slow client would: fast writers commit later positions meanwhile.
        stream = f"{prefix}slow-{w}"
        async with pool.acquire() as conn:
            for version in range(1, 6):
                async with conn.transaction():
                    await _slow_insert(conn, stream, version)
                    await conn.execute("select pg_sleep(0.03)")
                await asyncio.sleep(0.005)

    async def writers() -> None:
        try:
            await asyncio.gather(
                *(fast_writer(w) for w in range(4)), slow_writer(0), slow_writer(1)
            )
        finally:
            writers_done.set()

    expected = 4 * 12 + 2 * 5
    seen, _ = await asyncio.gather(
        _tail(event_store, prefix, start, writers_done, expected, horizon=True), writers()
    )

    final = await event_store.read_all(after=start, limit=10_000, stream_prefix=prefix)
    assert len(final) == expected
    assert [e.cursor for e in seen] == [e.cursor for e in final]


async def test_without_the_horizon_a_tailing_reader_skips_a_late_commit(
    event_store: EventStore, pool: Pool
) -> None:
    """What the horizon is for: a transaction takes a position, a later one commits first.
    A reader without the horizon reads past the first one's row and never sees it; with the
    horizon, it waits for the late commit and reads both, in order."""
    prefix = f"late-{uuid.uuid4().hex}-"
    start = await _log_end(event_store)
    unsafe_seen: list[RecordedEvent] = []
    safe_seen: list[RecordedEvent] = []
    unsafe, safe = start, start
    async with pool.acquire() as late:
        tx = late.transaction()
        await tx.start()
        try:
            await _slow_insert(late, f"{prefix}late", 1)  # takes the lower position, uncommitted
            [early] = await event_store.append(StreamAppend(f"{prefix}early", 0, [event()]))
            for reader in ("unsafe", "safe"):
                page = await event_store.read_all(
                    after=unsafe if reader == "unsafe" else safe,
                    stream_prefix=prefix,
                    horizon=reader == "safe",
                )
                if reader == "unsafe":
                    unsafe_seen += page
                    unsafe = page[-1].cursor if page else unsafe
                else:
                    safe_seen += page
                    safe = page[-1].cursor if page else safe
            assert [e.stream for e in unsafe_seen] == [early.stream]  # read past the late row
            assert safe_seen == []  # held back: a transaction below it is still open
        finally:
            await tx.commit()

    unsafe_seen += await event_store.read_all(after=unsafe, stream_prefix=prefix, horizon=False)
    for _ in range(200):  # other sessions on the server may hold the horizon for a moment
        safe_seen += await event_store.read_all(after=safe, stream_prefix=prefix)
        if len(safe_seen) == 2:
            break
        safe = safe_seen[-1].cursor if safe_seen else safe
        await asyncio.sleep(0.05)
    assert [e.stream for e in unsafe_seen] == [early.stream]  # the late commit was skipped
    assert [e.stream for e in safe_seen] == [f"{prefix}late", early.stream]
    assert safe_seen[0].position < safe_seen[1].position


async def test_read_events_decodes_a_window_of_a_stream_in_one_go(
    event_store: EventStore,
) -> None:
    stream = new_stream()
    await event_store.append(StreamAppend(stream, 0, [event(n=n) for n in range(1, 6)]))
    decode = msgspec.json.Decoder(list[dict[str, int]]).decode
    assert await event_store.read_events(stream, decode) == [{"n": n} for n in range(1, 6)]
    assert await event_store.read_events(stream, decode, after_version=3) == [{"n": 4}, {"n": 5}]
    window = await event_store.read_events(stream, decode, after_version=1, up_to_version=3)
    assert window == [{"n": 2}, {"n": 3}]
    assert await event_store.read_events(stream, decode, after_version=5) == []
    assert await event_store.read_events(new_stream(), decode) == []


async def test_the_hashed_form_of_numbers_is_what_jsonb_stores(pool: Pool) -> None:
    """The store hashes the data as jsonb will store it without asking PostgreSQL first
    (``_stored_canonical``): it must agree with jsonb on every number, including exponents,
    signed zeros, long fractions, huge and tiny values."""
    rng = random.Random(12)
    texts = [
        "1e2",
        "1E+2",
        "1.50e1",
        "1e-2",
        "-0",
        "-0.0",
        "-0e0",
        "0.0e5",
        "-1e-400",
        "1e400",
        "2.50",
        "0.1000000000000000055511151231257827",
        "1.7976931348623157e308",
        "5e-324",
        "123456789012345678901234567890",
        "-12.5e-3",
        '[1.0e0, -0.00, {"a": 3e0}]',
    ]
    for _ in range(400):
        mantissa = f"{rng.choice(['', '-'])}{rng.randint(0, 10 ** rng.randint(0, 20))}"
        if rng.random() < 0.6:
            mantissa += f".{rng.randint(0, 10 ** rng.randint(0, 18)):0{rng.randint(1, 18)}d}"
        exponent = (
            f"e{rng.choice(['', '+', '-'])}{rng.randint(0, 30)}" if rng.random() < 0.5 else ""
        )
        texts.append(mantissa + exponent)
    stored = await pool.fetchval(
        "select array(select t::jsonb::text from unnest($1::text[]) with ordinality as u(t, n)"
        " order by n)",
        texts,
    )
    for sent, as_stored in zip(texts, stored, strict=True):
        assert _stored_canonical(sent) == chain.canonical_json(as_stored), sent


async def test_the_hashed_form_of_objects_is_what_verification_recomputes(pool: Pool) -> None:
    """Objects without a float take ``_stored_canonical``'s fast path (msgspec, not the standard
    library's json): for every kind of string (every escape, control and non-ASCII character,
    astral ones, keys in code-point order), integers of any size, nesting and repeated keys,
    it gives the bytes verification computes from what jsonb stores (``chain.canonical_json`` of
    ``data::text``), so an appended chain always verifies."""
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(1, 0x250)] + [
        "\u2028",
        "\u2029",
        "\ufeff",
        "\uffff",
        "\U00010000",
        "\U0001f41d",
        "\U0010ffff",
        "/",
    ]
    texts = [
        '{"b": 1, "a": {"d": [1, -2, 0], "c": null}, "": true, "B": false}',
        '{"a": 1, "a": 2}',
        '{"n": -0, "big": 123456789012345678901234567890, "neg": -98765432109876543210987}',
        '{"u64": 18446744073709551615, "past": 18446744073709551616, "i64": -9223372036854775809}',
        '{"esc": "\\u00e9\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\\/\\"\\\\"}',
        '{"\\ud83d\\udc1d": "\\ud83d\\udc1d", "\\uffff": 1, "\\ud800\\udc00": 2}',
        ' { "spaced" : [ ] , "empty" : { } } ',
    ]
    for _ in range(300):
        value = {
            "".join(rng.choices(alphabet, k=rng.randint(0, 4))): rng.choice(
                [
                    "".join(rng.choices(alphabet, k=rng.randint(0, 12))),
                    rng.randint(-(2**70), 2**70),
                    [rng.randint(-5, 5), None, True, {"x": "".join(rng.choices(alphabet, k=3))}],
                ]
            )
            for _ in range(rng.randint(1, 6))
        }
        texts.append(msgspec.json.encode(value).decode())
    stored = await pool.fetchval(
        "select array(select t::jsonb::text from unnest($1::text[]) with ordinality as u(t, n)"
        " order by n)",
        texts,
    )
    for sent, as_stored in zip(texts, stored, strict=True):
        assert _stored_canonical(sent) == chain.canonical_json(as_stored), sent


async def test_a_head_hash_that_is_not_the_stored_one_is_refused(
    event_store: EventStore, pool: Pool
) -> None:
    """The database checks the head each append continues from: a writer that hashed on
    another head (a forged or stale one) writes nothing; the store re-reads and chains right."""
    stream = new_stream()
    [first] = await event_store.append(StreamAppend(stream, 0, [event(n=1)]))
    forged = bytes(32)
    with pytest.raises(asyncpg.PostgresError) as info:
        await pool.fetch(
            "select * from append_events("
            "$1, $2, $3, $4, $5, $6, $7, $8, '{}', null, null, null, '{2}'::smallint[])",
            [stream],
            [1],
            [forged],
            [stream],
            [2],
            ["Forged"],
            ["{}"],
            [forged],
        )
    assert info.value.sqlstate == "SWHED"
    assert await event_store.stream_version(stream) == 1

    # A second store (another instance) whose idea of the head is wrong recovers by itself.
    other = EventStore(pool)
    other._heads.saw(stream, 1, forged, chain.CHAIN_V2)
    await other.append(StreamAppend(stream, 1, [event(n=2)]))
    verdict = await event_store.verify_stream(stream)
    assert verdict.ok and verdict.verified == 2, verdict
    assert first.hash != verdict.head


async def test_two_instances_racing_never_fork_a_chain(pool: Pool) -> None:
    """Two stores (two service instances, each with its own head cache) append to one stream
    at once with whatever version they last read; the chain is one line."""
    stream = new_stream()
    stores = [EventStore(pool), EventStore(pool)]

    async def writer(store: EventStore, w: int) -> None:
        done = 0
        while done < 5:
            version = len(await store.read_stream(stream))
            try:
                await store.append(StreamAppend(stream, version, [event(w=w, i=done)]))
                done += 1
            except ConcurrencyConflict:
                await asyncio.sleep(0)

    await asyncio.gather(*(writer(stores[w % 2], w) for w in range(10)))
    verdict = await stores[0].verify_stream(stream)
    assert verdict.ok and verdict.verified == 50, verdict


async def test_also_statements_commit_with_the_events_or_not_at_all(
    event_store: EventStore, pool: Pool
) -> None:
    stream = new_stream()
    game = str(uuid.uuid4())
    deadline = datetime(2030, 1, 1, tzinfo=UTC)
    timer = ("insert into timers (game_id, deadline) values ($1, $2)", (game, deadline))

    def timer_for(game_id: str) -> tuple[str, tuple[object, ...]]:
        return (
            "insert into timers (game_id, deadline) values ($1, $2)",
            (game_id, deadline.replace(year=2032)),
        )

    other = (
        "insert into timers (game_id, deadline) values ($1, $2)",
        (game, deadline.replace(year=2031)),
    )
    await event_store.append(StreamAppend(stream, 0, [event()]), also=[timer, other])
    count = "select count(*) from timers where game_id = $1"
    assert await pool.fetchval(count, game) == 2

    # A refused append writes none of its statements...
    game2 = str(uuid.uuid4())
    with pytest.raises(ConcurrencyConflict):
        await event_store.append(
            StreamAppend(stream, 0, [event()]),
            also=[("insert into timers (game_id, deadline) values ($1, $2)", (game2, deadline))],
        )
    with pytest.raises(DuplicateCommand):
        await event_store.append(StreamAppend(stream, 1, [event()]), command=(stream, "c"))
        await event_store.append(
            StreamAppend(stream, 2, [event()]),
            command=(stream, "c"),
            also=[("insert into timers (game_id, deadline) values ($1, $2)", (game2, deadline))],
        )
    assert await pool.fetchval(count, game2) == 0
    # ...and a statement that fails writes no events.
    with pytest.raises(asyncpg.UniqueViolationError):
        await event_store.append(StreamAppend(stream, 2, [event()]), also=[timer])
    assert await event_store.stream_version(stream) == 2
    # A statement that cannot be a CTE (its own WITH) runs in the same transaction instead.
    game3 = str(uuid.uuid4())
    nested = (
        "with d as (select $2::timestamptz as at) insert into timers (game_id, deadline)"
        " select $1, at from d",
        (game3, deadline),
    )
    with pytest.raises(ConcurrencyConflict):
        await event_store.append(StreamAppend(stream, 0, [event()]), also=[nested])
    assert await pool.fetchval(count, game3) == 0
    await event_store.append(StreamAppend(stream, 2, [event()]), also=[nested, timer_for(game3)])
    assert await pool.fetchval(count, game3) == 2
    assert await event_store.stream_version(stream) == 3


async def test_a_guard_refuses_the_whole_append_or_lets_it_through(
    event_store: EventStore, pool: Pool
) -> None:
    """``guard=`` (``require_token``, migration 0014) is checked in the append's own statement,
    or its transaction when a statement cannot be folded: refused, nothing is kept (events,
    statements, the processed command); passed, everything is."""
    player, now = str(uuid.uuid4()), datetime.now(UTC)
    valid, revoked = uuid.uuid4().bytes * 2, uuid.uuid4().bytes * 2
    for token, revoked_at in ((valid, None), (revoked, now)):
        await pool.execute(
            "insert into access_tokens (token_hash, player_id, name, expires_at, revoked_at)"
            " values ($1, $2, 'G', $3, $4)",
            token,
            player,
            now.replace(year=now.year + 1),
            revoked_at,
        )
    check = "select require_token($1, $2, $3)"
    stream, game = new_stream(), str(uuid.uuid4())
    count = "select count(*) from timers where game_id = $1"
    # Deadlines far ahead: no clock of another test may find these timers due (no such game).
    later = now.replace(year=2040)
    timer = ("insert into timers (game_id, deadline) values ($1, $2)", (game, later))
    nested = (
        "with d as (select $2::timestamptz as at) insert into timers (game_id, deadline)"
        " select $1, at from d",
        (game, now.replace(year=2041)),
    )
    refusals = [
        (revoked, player, now),  # revoked
        (valid, str(uuid.uuid4()), now),  # someone else's
        (valid, player, now.replace(year=now.year + 2)),  # expired by then
        (uuid.uuid4().bytes * 2, player, now),  # unknown
    ]
    for args in refusals:
        for also in ([timer], [nested, timer]):
            with pytest.raises(GuardRefused):
                await event_store.append(
                    StreamAppend(stream, 0, [event()]),
                    command=(stream, "move"),
                    also=also,
                    guard=(check, args),
                )
    assert await event_store.stream_version(stream) == 0
    assert await pool.fetchval(count, game) == 0
    assert await event_store.command_version(stream, "move") is None

    await event_store.append(
        StreamAppend(stream, 0, [event()]),
        command=(stream, "move"),
        also=[timer],
        guard=(check, (valid, player, now)),
    )
    await event_store.append(
        StreamAppend(stream, 1, [event()]), also=[nested], guard=(check, (valid, player, now))
    )
    assert await event_store.stream_version(stream) == 2
    assert await pool.fetchval(count, game) == 2
    assert await event_store.command_version(stream, "move") == 1
    assert (await event_store.verify_stream(stream)).ok


async def test_the_app_role_cannot_choose_position_time_or_transaction(pool: Pool) -> None:
    for column, value in (("txid", "'1'"), ("recorded_at", "now()"), ("position", "1")):
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await pool.execute(
                f"insert into events (stream, version, type, data, hash, {column})"
                f" overriding system value values ($1, 1, 'X', '{{}}', sha256('x'), {value})",
                new_stream(),
            )


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
