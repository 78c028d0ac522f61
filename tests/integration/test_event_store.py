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
from service.domain.codec import encode_canonical, tag_of
from service.domain.rules.events import (
    BeeLanded,
    Pick,
    PickConfirmed,
    PicksRevealed,
    TurnStarted,
    encode_event,
)
from service.store.events import EventStore
from service.store.log import (
    ConcurrencyConflict,
    DuplicateCommand,
    GuardRefused,
    LogCursor,
    NewEvent,
    RecordedEvent,
    StreamAppend,
    UniqueViolation,
    stored_canonical,
)
from service.store.pool import Pool, open_pool
from tests.store_contract import EventLogContract, _log_end, event, new_stream


async def _slow_insert(
    conn: asyncpg.pool.PoolConnectionProxy[asyncpg.Record], stream: str, version: int
) -> None:
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


async def test_paging_without_the_horizon_hands_each_row_once_while_writers_append(
    event_store: EventStore, pool: Pool
) -> None:
    """What `swarm ratings` does (pages of the whole log, `horizon=False`) while six writers
    append to two streams at a time: a row may be skipped (a late commit), never handed twice.
    (In `make test` it once was, when the server's transaction ids passed a power of ten: the
    test below.)"""
    prefix = f"player-{uuid.uuid4().hex[:8]}-"
    done = asyncio.Event()

    async def writer(w: int) -> int:
        n = 0
        while not done.is_set():
            n += 1
            await event_store.append(
                StreamAppend(f"{prefix}{w}-{n}", 0, [event("rating_changed"), event()]),
                StreamAppend(f"{prefix}{w}-{n}b", 0, [event("rating_changed")]),
            )
        return n

    writers = [asyncio.create_task(writer(w)) for w in range(6)]
    seen: list[RecordedEvent] = []
    after = LogCursor()
    for _ in range(300):
        page = await event_store.read_all(after=after, limit=7, stream_prefix=prefix, horizon=False)
        if page:
            after = page[-1].cursor
            seen += page
        await asyncio.sleep(0)
    done.set()
    appends = sum(await asyncio.gather(*writers))
    keys = [(e.stream, e.version) for e in seen]
    assert appends > 0 and len(seen) > 100
    twice = {k for k in keys if keys.count(k) > 1}
    read = sorted(
        (e.stream, e.version, e.txid, e.position) for e in seen if (e.stream, e.version) in twice
    )
    stored = await pool.fetch(
        "select stream, version, txid::text, position from events"
        " where stream = any($1::text[]) order by stream, version, position",
        sorted({s for s, _ in twice}),
    )
    assert not twice, {"read": read, "stored": [tuple(r) for r in stored]}


async def test_pages_follow_transaction_ids_past_a_power_of_ten(own_database: str) -> None:
    """Transactions 99 and 100 are read in that order, each row once, a page at a time. The
    page's sort once took ``txid`` for its text output column, so "100" sorted before "99": a
    page could end on a lower txid than it held, and the next page handed its rows again."""
    prefix = f"paging-{uuid.uuid4().hex}-"
    rows = [(99, f"{prefix}a"), (99, f"{prefix}b"), (100, f"{prefix}c")]
    owner = await asyncpg.connect(own_database)
    try:  # the table's owner may set txid (the app role may not): transactions long ended
        for txid, stream in rows:
            await owner.execute(
                "insert into events (stream, version, type, data, hash, txid)"
                " values ($1, 1, 'Happened', '{}', sha256('x'), $2::text::xid8)",
                stream,
                str(txid),
            )
    finally:
        await owner.close()
    pool = await open_pool(own_database, max_size=2)
    try:
        store = EventStore(pool)
        for horizon in (True, False):
            seen: list[RecordedEvent] = []
            after = LogCursor()
            while page := await store.read_all(
                after=after, limit=2, stream_prefix=prefix, horizon=horizon
            ):
                seen += page
                after = page[-1].cursor
            assert [(e.txid, e.stream) for e in seen] == rows
        whole = await store.read_all(stream_prefix=prefix)
        assert [(e.txid, e.stream) for e in whole] == rows
    finally:
        await pool.close()


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


async def test_the_hashed_form_of_numbers_is_what_jsonb_stores(pool: Pool) -> None:
    """The store hashes the data as jsonb will store it without asking PostgreSQL first
    (``stored_canonical``): it must agree with jsonb on every number, including exponents,
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
        assert stored_canonical(sent) == chain.canonical_json(as_stored), sent


async def test_the_hashed_form_of_objects_is_what_verification_recomputes(pool: Pool) -> None:
    """Objects without a float take ``stored_canonical``'s fast path (msgspec, not the standard
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
        assert stored_canonical(sent) == chain.canonical_json(as_stored), sent


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
            "select * from append_events_quiet("
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
    await event_store.append_statements(StreamAppend(stream, 0, [event()]), also=[timer, other])
    count = "select count(*) from timers where game_id = $1"
    assert await pool.fetchval(count, game) == 2

    # A refused append writes none of its statements...
    game2 = str(uuid.uuid4())
    with pytest.raises(ConcurrencyConflict):
        await event_store.append_statements(
            StreamAppend(stream, 0, [event()]),
            also=[("insert into timers (game_id, deadline) values ($1, $2)", (game2, deadline))],
        )
    with pytest.raises(DuplicateCommand):
        await event_store.append_statements(
            StreamAppend(stream, 1, [event()]), command=(stream, "c")
        )
        await event_store.append_statements(
            StreamAppend(stream, 2, [event()]),
            command=(stream, "c"),
            also=[("insert into timers (game_id, deadline) values ($1, $2)", (game2, deadline))],
        )
    assert await pool.fetchval(count, game2) == 0
    # ...and a statement that fails writes no events.
    with pytest.raises(UniqueViolation):
        await event_store.append_statements(StreamAppend(stream, 2, [event()]), also=[timer])
    assert await event_store.stream_version(stream) == 2
    # A statement that cannot be a CTE (its own WITH) runs in the same transaction instead.
    game3 = str(uuid.uuid4())
    nested = (
        "with d as (select $2::timestamptz as at) insert into timers (game_id, deadline)"
        " select $1, at from d",
        (game3, deadline),
    )
    with pytest.raises(ConcurrencyConflict):
        await event_store.append_statements(StreamAppend(stream, 0, [event()]), also=[nested])
    assert await pool.fetchval(count, game3) == 0
    await event_store.append_statements(
        StreamAppend(stream, 2, [event()]), also=[nested, timer_for(game3)]
    )
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
                await event_store.append_statements(
                    StreamAppend(stream, 0, [event()]),
                    command=(stream, "move"),
                    also=also,
                    guard=(check, args),
                )
    assert await event_store.stream_version(stream) == 0
    assert await pool.fetchval(count, game) == 0
    assert await event_store.command_version(stream, "move") is None

    await event_store.append_statements(
        StreamAppend(stream, 0, [event()]),
        command=(stream, "move"),
        also=[timer],
        guard=(check, (valid, player, now)),
    )
    await event_store.append_statements(
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
    login = await asyncpg.connect(database_url)
    try:
        assert await login.fetchval("select current_user") != "swarm_app"
        with pytest.raises(asyncpg.RestrictViolationError, match="events are immutable"):
            await login.execute(statement, *args)
    finally:
        await login.close()

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


class TestEventStoreOnPostgres(EventLogContract):
    """The contract suite (tests/store_contract.py) on PostgreSQL."""

    @pytest.fixture
    def log(self, event_store: EventStore) -> EventStore:
        return event_store


async def test_an_event_encoded_once_stores_the_same_row_and_verifies(
    event_store: EventStore,
) -> None:
    """The unit of work writes an event once, as its canonical JSON (``encode_canonical``,
    issue 28), where it wrote the codec's bytes: jsonb stores the same value and the same
    text, and the hash computed from those bytes as they are is the one verification
    recomputes from the row."""
    events = [
        TurnStarted(turn=3, deadline=datetime(2031, 5, 1, 12, 0, 20, 123456, tzinfo=UTC)),
        PickConfirmed(seat=2, bee=47, by_clock="tapped"),
        PicksRevealed(turn=3, picks=(Pick(seat=2, bee=47), Pick(seat=1, bee=12))),
        BeeLanded(seat=1, bee=12, stem=3, taken=(5, 9, 30, 41, 66)),
    ]
    once = [NewEvent(tag_of(e), *encode_canonical(e)) for e in events]
    before = [NewEvent(tag_of(e), encode_event(e)) for e in events]
    assert all(e.canonical for e in once) and once[0].data != before[0].data
    rows = []
    for news in (once, before):
        stream = f"wallet-{uuid.uuid4().hex}"  # nothing hidden: no seal key needed
        rows.append(await event_store.append(StreamAppend(stream, 0, news)))
        verdict = await event_store.verify_stream(stream)
        assert verdict.ok and verdict.verified == len(events), verdict
    assert [e.data for e in rows[0]] == [e.data for e in rows[1]]
    assert (
        rows[0][1].data == b'{"bee": 47, "seat": 2, "type": "pick_confirmed", "by_clock": "tapped"}'
    )
