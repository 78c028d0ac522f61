"""The contract of the store's ports (`service.store.port`), one suite for every store, as
pyeventsourcing runs one persistence suite against every recorder. `EventLogContract` (the
fixture `log`): PostgreSQL's runs in tests/integration/test_event_store.py, the in-memory
store's in tests/unit/test_memory_event_store.py. `PortsContract` (the fixture `ports`, every
other port and the rows an append writes): tests/integration/test_store_ports.py and
tests/unit/test_memory_ports.py."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import msgspec
import pytest

from service.domain.table_events import TableMode
from service.domain.transfers import ReleaseStake, TransferUnion
from service.store.log import (
    ConcurrencyConflict,
    DuplicateCommand,
    GuardRefused,
    LogCursor,
    NewEvent,
    RecordedEvent,
    StreamAppend,
    UniqueViolation,
)
from service.store.port import EventLog, OutboxClaim, Ports
from service.store.rows import (
    ACCOUNT_TAKEN,
    NAME_TAKEN,
    AccessToken,
    Account,
    DealSecret,
    GamesPlayed,
    LobbyListing,
    OwedTransfer,
    PublicStanding,
    Reach,
    Row,
    StakeHold,
    StakeHoldEnded,
    Standing,
    TableMembers,
    Timer,
    TokenGuard,
    TokenOwner,
    WalletBalance,
)


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

    # Positions in one order across the whole log (every store on one node). On Citus each
    # node numbers its own (tests/citus): positions grow within a stream, not across shards.
    GLOBAL_ORDER = True

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
        assert recorded[0].position > before or not self.GLOBAL_ORDER
        assert msgspec.json.decode(recorded[0].data) == {"seats": 3}
        assert all(e.metadata == {"correlation_id": "c-1"} for e in recorded)
        assert await log.read_stream(stream) == recorded
        assert await log.stream_version(stream) == 2
        assert await log.last_position() >= recorded[-1].position or not self.GLOBAL_ORDER

        more = await log.append(StreamAppend(stream, 2, [event(n=3), event(n=4)]))
        assert [e.version for e in more] == [3, 4]
        window = await log.read_stream(stream, after_version=1, up_to_version=3)
        assert [e.version for e in window] == [2, 3]
        assert await log.read_stream(new_stream()) == []

    async def test_a_head_link_is_the_stored_events_hash_and_chain(self, log: EventLog) -> None:
        stream = new_stream()
        recorded = await log.append(StreamAppend(stream, 0, [event(n=1), event(n=2)]))
        # Known from the append (the head), and read for a version that is not the head.
        assert await log.head_link(stream, 2) == (recorded[1].hash, recorded[1].chain)
        assert await log.head_link(stream, 1) == (recorded[0].hash, recorded[0].chain)
        await log.append(StreamAppend(stream, 2, [event(n=3)]))
        assert await log.head_link(stream, 2) == (recorded[1].hash, recorded[1].chain)
        assert await log.head_link(stream, 4) is None
        assert await log.head_link(new_stream(), 1) is None

    async def test_data_is_stored_as_jsonb_and_returned_as_json_bytes(self, log: EventLog) -> None:
        stream = new_stream()
        payload: dict[str, object] = {"b": [1, 2, {"c": None}], "a": "é ✓", "big": 2**53 + 1}
        [recorded] = await log.append(StreamAppend(stream, 0, [event("Happened", **payload)]))
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
        # Appended one after another, the transactions' order is the positions' order (on one
        # node; on Citus each node numbers its own, and the log is read shard after shard).
        positions = [e.position for e in seen]
        assert positions == sorted(positions) or not self.GLOBAL_ORDER

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


# --- the other ports (`service.store.port.Ports`) ---------------------------------------------
#
# One suite for `postgres_ports` (tests/integration/test_store_ports.py) and `memory_ports`
# (tests/unit/test_memory_ports.py). The PostgreSQL database is shared with other tests: every
# id here is fresh, deadlines are in the year 2000 (no test's clock is there), what a query may
# also find of other tests is filtered out, never assumed absent, and each test leaves nothing
# a sweeper, a relay, a clock or a lobby of another test would meet (timers fired, transfers
# delivered, holds settled, tables closed, records below any real game's).

LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)
# Timers the claim tests write are due only by the `now` they pass: a clock that runs on the same
# database meanwhile (another test's server) never claims them, by its real time.
FAR_AHEAD = datetime(9000, 1, 1, tzinfo=UTC)


def new_id(prefix: str = "c") -> str:
    return f"{prefix}{uuid.uuid4().hex}"


def token_row(player_id: str, *, name: str = "Guest", days: int = 30) -> AccessToken:
    return AccessToken(
        token_hash=uuid.uuid4().bytes * 2,
        player_id=player_id,
        name=name,
        expires_at=datetime.now(UTC) + timedelta(days=days),
    )


def release(table_id: str, player_id: str | None = None) -> ReleaseStake:
    return ReleaseStake(
        player_id=player_id or new_id("p"), table_id=table_id, hold_id=new_id("h"), amount=5
    )


def listing(table_id: str, **fields: Any) -> LobbyListing:
    values: dict[str, Any] = {
        "table_id": table_id,
        "host_id": new_id("p"),
        "host_name": "Host",
        "seats_taken": 1,
        "people": 1,
        "capacity": 4,
        "stake": 0,
        "status": "open",
    }
    return LobbyListing(**{**values, **fields})


async def write(ports: Ports, *rows: Row, command: tuple[str, str] | None = None) -> str:
    """Append one event with `rows`; the stream written."""
    stream = new_stream()
    await ports.log.append(StreamAppend(stream, 0, [event()]), also=rows, command=command)
    return stream


class PortsContract:
    """What every store promises beyond the log. Subclasses provide the `ports` fixture."""

    # --- rows written with the events --------------------------------------------------------

    async def test_rows_commit_with_their_events_or_not_at_all(self, ports: Ports) -> None:
        game, player = new_id("g"), new_id("p")
        seed = uuid.uuid4().bytes * 2
        # Nothing held: a wallet holding more than its hold rows is a legacy holder, which the
        # sweeper of another test would meet (the database is shared).
        wallet = WalletBalance(player_id=player, balance=7, held=0, granted=10, version=1)
        stream = await write(ports, DealSecret(game_id=game, server_seed=seed), wallet)
        assert await ports.secrets.server_seed(game) == seed
        assert await ports.standings.coins(player) == wallet
        assert await ports.secrets.server_seed(new_id("g")) is None

        # A refused append (a stale version, a repeated command) writes none of its rows.
        other = new_id("p")
        coins = WalletBalance(player_id=other, balance=1, held=0, granted=1, version=1)
        with pytest.raises(ConcurrencyConflict):
            await ports.log.append(StreamAppend(stream, 0, [event()]), also=[coins])
        await ports.log.append(StreamAppend(stream, 1, [event()]), command=(stream, "once"))
        with pytest.raises(DuplicateCommand):
            await ports.log.append(
                StreamAppend(stream, 2, [event()]), command=(stream, "once"), also=[coins]
            )
        assert await ports.standings.coins(other) is None

        # A row that breaks a unique key writes no events, and none of the other rows.
        again = DealSecret(game_id=game, server_seed=uuid.uuid4().bytes * 2)
        with pytest.raises(UniqueViolation):
            await ports.log.append(StreamAppend(stream, 2, [event()]), also=[coins, again])
        assert await ports.log.stream_version(stream) == 2
        assert await ports.standings.coins(other) is None
        assert await ports.secrets.server_seed(game) == seed

        # A wallet's row is replaced by its next one.
        later = msgspec.structs.replace(wallet, balance=2, granted=12, version=2)
        await write(ports, later)
        assert await ports.standings.coins(player) == later

    async def test_an_account_is_unique_by_player_and_by_name_key(self, ports: Ports) -> None:
        player, key = new_id("p"), new_id("k")
        account = Account(player_id=player, name="Ada", password_hash="h", name_key=key)
        await write(ports, account)
        for clash, constraint in (
            (msgspec.structs.replace(account, name_key=new_id("k")), ACCOUNT_TAKEN),
            (msgspec.structs.replace(account, player_id=new_id("p")), NAME_TAKEN),
        ):
            stream = new_stream()
            with pytest.raises(UniqueViolation) as refused:
                await ports.log.append(StreamAppend(stream, 0, [event()]), also=[clash])
            assert refused.value.constraint == constraint
            assert await ports.log.stream_version(stream) == 0
        assert await ports.accounts.registered(player)
        assert not await ports.accounts.registered(new_id("p"))

    async def test_a_guard_lets_an_append_through_only_with_a_valid_token(
        self, ports: Ports
    ) -> None:
        player = new_id("p")
        valid, revoked = token_row(player), token_row(player)
        for token in (valid, revoked):
            await ports.tokens.issue(token)
        now = datetime.now(UTC)
        await ports.tokens.revoke(revoked.token_hash, now)
        stream, game = new_stream(), new_id("g")
        timer = Timer(game_id=game, deadline=LONG_AGO)
        for token_hash, who, at in (
            (revoked.token_hash, player, now),
            (valid.token_hash, new_id("p"), now),  # someone else's
            (valid.token_hash, player, now + timedelta(days=31)),  # expired by then
            (uuid.uuid4().bytes * 2, player, now),  # unknown
        ):
            with pytest.raises(GuardRefused):
                await ports.log.append(
                    StreamAppend(stream, 0, [event()]),
                    command=(stream, "move"),
                    also=[timer],
                    guard=TokenGuard(token_hash=token_hash, player_id=who, at=at),
                )
        assert await ports.log.stream_version(stream) == 0
        assert await ports.log.command_version(stream, "move") is None
        async with ports.timers.claim_due(LONG_AGO, 10_000) as claim:
            assert timer not in claim.due

        guard = TokenGuard(token_hash=valid.token_hash, player_id=player, at=now)
        await ports.log.append(
            StreamAppend(stream, 0, [event()]), command=(stream, "move"), guard=guard
        )
        assert await ports.log.command_version(stream, "move") == 1

    # --- timers ------------------------------------------------------------------------------

    async def test_due_timers_are_claimed_once_and_fired_ones_go(self, ports: Ports) -> None:
        game = new_id("g")
        timers = [Timer(game_id=game, deadline=FAR_AHEAD + timedelta(seconds=s)) for s in (3, 1, 2)]
        await write(ports, *timers, timers[0])  # the same deadline twice is one timer
        later = Timer(game_id=game, deadline=FAR_AHEAD + timedelta(days=1))
        await write(ports, later)
        first, second, third = sorted(timers, key=lambda t: t.deadline)
        next_deadline = await ports.timers.next_deadline()
        assert next_deadline is not None and next_deadline <= first.deadline

        def ours(due: Sequence[Timer]) -> list[Timer]:
            return [t for t in due if t.game_id == game]

        now = FAR_AHEAD + timedelta(hours=1)
        async with ports.timers.claim_due(now, 10_000) as claim:
            assert ours(claim.due) == [first, second, third]  # due ones, earliest first
            async with ports.timers.claim_due(now, 10_000) as rival:
                assert ours(rival.due) == []  # held by the first claim
            await claim.fired([first, third])
        async with ports.timers.claim_due(now, 10_000) as claim:
            assert ours(claim.due) == [second]  # not fired: still there
            await claim.fired([second])
        with pytest.raises(RuntimeError):
            async with ports.timers.claim_due(FAR_AHEAD + timedelta(days=2), 10_000) as claim:
                assert ours(claim.due) == [later]
                await claim.fired([later])
                raise RuntimeError("the claim fails: nothing it fired is gone")
        async with ports.timers.claim_due(FAR_AHEAD + timedelta(days=2), 10_000) as claim:
            assert ours(claim.due) == [later]
            await claim.fired([later])
        async with ports.timers.claim_due(FAR_AHEAD + timedelta(days=2), 10_000) as claim:
            assert ours(claim.due) == []

    # --- the outbox and holds ----------------------------------------------------------------

    async def test_the_outbox_keeps_transfers_until_delivered(self, ports: Ports) -> None:
        table = new_id("t")
        owed = [release(table) for _ in range(3)]
        for transfer in owed:
            await write(ports, OwedTransfer(transfer=transfer))
        assert await ports.outbox.any_due(timedelta(0))

        def ours(claim: OutboxClaim) -> list[TransferUnion]:
            return [t for t in claim.transfers if t.table_id == table]

        async with ports.outbox.claim_due(timedelta(hours=1), 10_000) as claim:
            assert ours(claim) == []  # too young to relay
        async with ports.outbox.claim_due(timedelta(0), 10_000) as claim:
            assert ours(claim) == owed  # oldest first
            async with ports.outbox.claim_due(timedelta(0), 10_000) as rival:
                assert ours(rival) == []
            await claim.delivered(owed[0])
        assert await ports.outbox.owed(table, owed[1].transfer_id) == owed[1]
        await ports.outbox.delivered(owed[1])  # by the request that wrote it
        assert await ports.outbox.owed(table, owed[1].transfer_id) is None
        assert await ports.outbox.owed(new_id("t"), owed[2].transfer_id) is None  # its table's
        async with ports.outbox.claim_due(timedelta(0), 10_000) as claim:
            assert ours(claim) == [owed[2]]
            await claim.delivered(owed[2])
        async with ports.outbox.claim_due(timedelta(0), 10_000) as claim:
            assert ours(claim) == []
        with pytest.raises(UniqueViolation):  # a transfer is owed once
            await write(ports, OwedTransfer(transfer=owed[0]), OwedTransfer(transfer=owed[0]))

    async def test_holds_are_swept_settled_and_summed(self, ports: Ports) -> None:
        player, table, other = new_id("p"), new_id("t"), new_id("t")
        holds = [
            StakeHold(player_id=player, hold_id=new_id("h"), table_id=t, amount=a)
            for t, a in ((table, 50), (table, 20), (other, 30))
        ]
        wallet = WalletBalance(player_id=player, balance=0, held=100, granted=200, version=3)
        await write(ports, wallet, holds[0])
        for hold in holds[1:]:  # one append each: holds of one append are equally old
            await write(ports, hold)

        async def unsettled(older_than: timedelta) -> list[StakeHold]:
            rows = await ports.holds.unsettled(older_than, 10_000)
            return [h for h in rows if h.player_id == player]

        assert await unsettled(timedelta(hours=1)) == []  # too young to sweep
        assert await unsettled(timedelta(0)) == holds  # oldest first
        await ports.holds.settle(player, holds[0].hold_id)
        assert await unsettled(timedelta(0)) == holds[1:]
        assert await ports.holds.held_by_table(player) == {table: 70, other: 30}
        assert player not in await ports.holds.legacy_holders(10_000)  # 100 held, 100 in rows

        ended = StakeHoldEnded(player_id=player, hold_id=holds[1].hold_id)
        await write(ports, msgspec.structs.replace(wallet, version=4), ended)
        assert await ports.holds.held_by_table(player) == {table: 50, other: 30}
        assert player in await ports.holds.legacy_holders(10_000)  # 100 held, 80 in rows
        assert await ports.holds.held_by_table(new_id("p")) == {}

        # Left as a sweeper would want it (the database is shared): all settled, nothing held
        # beyond the rows.
        await ports.holds.settle(player, holds[2].hold_id)
        await write(ports, msgspec.structs.replace(wallet, held=80, version=5))
        assert await unsettled(timedelta(0)) == []
        assert player not in await ports.holds.legacy_holders(10_000)

    # --- accounts, logins, sign-ups, tokens, tickets -----------------------------------------

    async def test_accounts_are_found_by_name_key_or_an_old_exact_name(self, ports: Ports) -> None:
        keyed, old, neither = new_id("p"), new_id("p"), new_id("p")
        key, name = new_id("k"), new_id("Old")
        await write(
            ports,
            Account(player_id=keyed, name="Ada", password_hash="a", name_key=key),
            Account(player_id=old, name=name, password_hash="b", name_key=None),
        )
        assert await ports.accounts.name_taken(key)
        assert not await ports.accounts.name_taken(new_id("k"))
        found = await ports.accounts.by_name(key, "whatever")
        assert found is not None and (found.player_id, found.password_hash) == (keyed, "a")
        old_key = new_id("k")
        found = await ports.accounts.by_name(old_key, name)  # no key yet: by its exact name
        assert found is not None and found.player_id == old and found.name_key is None
        assert await ports.accounts.by_name(new_id("k"), new_id("Nobody")) is None

        assert not await ports.accounts.set_name_key(old, key)  # Ada's: refused
        assert await ports.accounts.set_name_key(old, old_key)
        found = await ports.accounts.by_name(old_key, "another name")
        assert found is not None and found.player_id == old and found.name_key == old_key
        assert sorted(await ports.accounts.holders([keyed, neither, old])) == sorted([keyed, old])

    async def test_failed_logins_block_until_an_attempt_succeeds(self, ports: Ports) -> None:
        keys = sorted([f"name:{new_id()}", f"addr:{new_id()}"])
        start = datetime.now(UTC)
        times = [start + timedelta(seconds=s) for s in range(4)]
        since = start - timedelta(minutes=15)
        assert await ports.logins.attempt(keys, times[0], since, 3) is None
        assert await ports.logins.attempt(keys, times[1], since, 3) is None
        assert await ports.logins.attempt(keys[:1], times[2], since, 3) is None
        # keys[0] has 3 failures now: blocked from its 3rd most recent; nothing counted.
        assert await ports.logins.attempt(keys, times[3], since, 3) == times[0]
        assert await ports.logins.attempt(keys[1:], times[3], since, 3) is None  # 3rd for it
        # Outside the window, failures no longer count: with only 2 inside, this one counts.
        assert await ports.logins.attempt(keys[:1], times[3], times[0], 3) is None

        token = token_row(new_id("p"))
        await ports.logins.succeeded(keys[:1], times[3], token)  # withdraws only its own
        assert await ports.logins.attempt(keys[:1], times[3], since, 3) == times[0]
        assert await ports.logins.attempt(keys[:1], times[3], times[0], 3) is None
        owner = await ports.tokens.owner(token.token_hash, times[3])
        assert owner is not None and owner.player_id == token.player_id

    async def test_sign_ups_are_limited_per_key_and_window(self, ports: Ports) -> None:
        key, start = new_id("guest:"), datetime.now(UTC)
        times = [start + timedelta(minutes=m) for m in range(5)]
        for at in times[:2]:
            assert await ports.sign_ups.count(key, at, at - timedelta(hours=1), 2) is None
        assert (
            await ports.sign_ups.count(key, times[2], times[2] - timedelta(hours=1), 2)
            == (times[0])
        )
        assert await ports.sign_ups.count(new_id("guest:"), times[2], times[0], 2) is None
        # An hour on, the first has left the window: one more is counted.
        later = times[0] + timedelta(hours=1, seconds=1)
        assert await ports.sign_ups.count(key, later, later - timedelta(hours=1), 2) is None
        assert await ports.sign_ups.count(key, later, later - timedelta(hours=1), 2) == times[1]

    async def test_a_token_is_valid_until_revoked_or_expired(self, ports: Ports) -> None:
        player = new_id("p")
        token = token_row(player, name="Guesty")
        await ports.tokens.issue(token)
        now = datetime.now(UTC)
        owner = await ports.tokens.owner(token.token_hash, now)
        assert owner == TokenOwner(
            player_id=player, name="Guesty", registered=False, token_hash=token.token_hash
        )
        assert await ports.tokens.valid(token.token_hash, now)
        assert not await ports.tokens.valid(token.token_hash, now + timedelta(days=31))
        assert await ports.tokens.owner(token.token_hash, now + timedelta(days=31)) is None
        assert not await ports.tokens.valid(uuid.uuid4().bytes * 2, now)

        # Registered since: the account's name, and registered.
        await write(ports, Account(player_id=player, name="Ada", password_hash="h", name_key=None))
        owner = await ports.tokens.owner(token.token_hash, now)
        assert owner is not None and (owner.name, owner.registered) == ("Ada", True)
        with pytest.raises(UniqueViolation):
            await ports.tokens.issue(token)

        await ports.tokens.announce(f"token-{token.token_hash.hex()}")
        await ports.tokens.revoke(token.token_hash, now)
        assert await ports.tokens.owner(token.token_hash, now) is None
        assert not await ports.tokens.valid(token.token_hash, now)

    async def test_a_stream_ticket_is_its_streams_while_its_token_is_valid(
        self, ports: Ports
    ) -> None:
        token = token_row(new_id("p"))
        await ports.tokens.issue(token)
        now = datetime.now(UTC)
        ticket, stream = uuid.uuid4().bytes * 2, new_stream("game")
        await ports.tickets.issue(ticket, token.token_hash, stream, now + timedelta(minutes=5), now)
        owner = await ports.tickets.redeem(ticket, stream, now)
        assert owner is not None and owner.token_hash == token.token_hash
        assert owner.player_id == token.player_id
        assert await ports.tickets.redeem(ticket, stream, now) == owner  # again, until expiry
        assert await ports.tickets.redeem(ticket, new_stream("game"), now) is None
        assert await ports.tickets.redeem(ticket, stream, now + timedelta(minutes=6)) is None
        assert await ports.tickets.redeem(uuid.uuid4().bytes * 2, stream, now) is None
        await ports.tokens.revoke(token.token_hash, now)
        assert await ports.tickets.redeem(ticket, stream, now) is None

    # --- what the lobby, listMyGames, profiles and the leaderboard read ----------------------

    async def test_the_lobby_lists_open_tables_newest_first(self, ports: Ports) -> None:
        host = new_id("p")
        tables = [new_id("t") for _ in range(4)]
        free = listing(tables[0], host_id=host)
        paid = listing(tables[1], host_id=host, stake=50)
        full = listing(tables[2], seats_taken=4, people=4, status="playing")
        closed = listing(tables[3], host_id=host, status="closed")
        for row in (free, paid, full, closed):
            await write(ports, row)

        async def page(stake: str = "any", has_free_seat: bool = False) -> list[LobbyListing]:
            listed = await ports.lobby.page(stake, has_free_seat, 10_000, 0)
            mine = [t.listing for t in listed if t.listing.table_id in tables]
            # Read as the API reads it (a `Reach`: on Citus, each worker on its own): the same.
            reach = Reach()
            across = await ports.lobby.page(stake, has_free_seat, 10_000, 0, reach)
            assert [t.listing for t in across if t.listing.table_id in tables] == mine
            assert not reach.partial
            return mine

        assert await page() == [full, paid, free]
        assert await page("free") == [full, free]
        assert await page("buy_in") == [paid]
        assert await page(has_free_seat=True) == [paid, free]
        assert await ports.lobby.hosting(host) == 2
        assert await ports.lobby.hosting(new_id("p")) == 0

        [before] = [t for t in await ports.lobby.page("any", False, 10_000, 0) if t.listing == free]
        joined = msgspec.structs.replace(free, seats_taken=2, people=2)
        await write(ports, joined)
        [after] = [
            t for t in await ports.lobby.page("any", False, 10_000, 0) if t.listing == joined
        ]
        assert after.opened_at == before.opened_at  # listed when it opened, not when it changed
        assert await page() == [full, paid, joined]
        window = await ports.lobby.page("any", False, 2, 1)
        assert len(window) <= 2
        assert len(await ports.lobby.page("any", False, 2, 1, Reach())) <= 2
        for row in (joined, paid, full):  # closed: out of every other test's lobby
            await write(ports, msgspec.structs.replace(row, status="closed"))
        assert await page() == []

    async def test_members_are_who_sits_at_a_table_now(self, ports: Ports) -> None:
        ada, bo = new_id("p"), new_id("p")
        first, second = new_id("t"), new_id("t")
        await write(ports, TableMembers(table_id=first, people=(ada, bo), mode="online"))
        await write(ports, TableMembers(table_id=second, people=(ada,), mode="solo"))
        assert await ports.members.tables_of(ada, 100) == [second, first]  # latest joined first
        assert await ports.members.tables_of(ada, 1) == [second]
        reach = Reach()  # as the API reads it: on Citus, each worker on its own
        assert await ports.members.tables_of(ada, 100, reach) == [second, first]
        assert await ports.members.tables_of(ada, 1, reach) == [second]
        assert not reach.partial
        assert await ports.members.tables_of(bo, 100) == [first]
        await write(ports, TableMembers(table_id=first, people=(ada,), mode="online"))  # Bo left
        assert await ports.members.tables_of(bo, 100) == []
        assert await ports.members.tables_of(ada, 100) == [second, first]  # Ada's seat kept
        await write(ports, TableMembers(table_id=second, people=(), mode="solo"))  # closed
        assert await ports.members.tables_of(ada, 100) == [first]

    async def test_a_persons_finished_games_page_newest_first_and_filter(
        self, ports: Ports
    ) -> None:
        ada, bo = new_id("p"), new_id("p")
        games = [new_id("g") for _ in range(4)]
        kinds: list[tuple[TableMode, bool]] = [
            ("online", True),
            ("online", False),
            ("solo", False),
            ("online", True),
        ]
        for game_id, (mode, rated) in zip(games, kinds, strict=True):
            people = (ada,) if mode == "solo" else (ada, bo)
            await write(
                ports,
                GamesPlayed(
                    game_id=game_id, table_id=new_id("t"), mode=mode, rated=rated, people=people
                ),
            )
        everything = await ports.members.games_of(ada, limit=100)
        assert {g.game_id for g in everything} == set(games)
        order = [(g.ended_at, g.game_id) for g in everything]
        assert order == sorted(order, reverse=True)  # newest first, then by game id
        assert [g.game_id for g in await ports.members.games_of(ada, limit=2, offset=1)] == [
            g.game_id for g in everything[1:3]
        ]
        reach = Reach()  # as the API reads it: on Citus, each worker on its own
        assert await ports.members.games_of(ada, limit=100, reach=reach) == everything
        assert await ports.members.games_of(ada, limit=2, offset=1, reach=reach) == everything[1:3]
        for only in (True, False):
            assert await ports.members.games_of(
                ada, rated=only, limit=100, reach=reach
            ) == await ports.members.games_of(ada, rated=only, limit=100)
        newest_first = everything[0].ended_at
        assert await ports.members.games_of(
            ada, online_only=True, since=newest_first, limit=100, reach=reach
        ) == await ports.members.games_of(ada, online_only=True, since=newest_first, limit=100)
        assert await ports.members.games_of(
            ada, until=newest_first, limit=100, reach=reach
        ) == await ports.members.games_of(ada, until=newest_first, limit=100)
        assert not reach.partial
        rated_only = await ports.members.games_of(ada, rated=True, limit=100)
        assert {g.game_id for g in rated_only} == {games[0], games[3]}
        casual = await ports.members.games_of(ada, rated=False, limit=100)
        assert {g.game_id for g in casual} == {games[1], games[2]}
        online = await ports.members.games_of(ada, online_only=True, limit=100)
        assert games[2] not in {g.game_id for g in online} and len(online) == 3
        assert len(await ports.members.games_of(bo, limit=100)) == 3
        newest = everything[0].ended_at
        later = await ports.members.games_of(ada, since=newest, limit=100)
        assert later and all(g.ended_at >= newest for g in later)
        assert all(
            g.ended_at < newest for g in await ports.members.games_of(ada, until=newest, limit=100)
        )
        # Written twice (a retried append's rows): still one game.
        first = everything[-1]
        again = GamesPlayed(
            game_id=first.game_id,
            table_id=first.table_id,
            mode=first.mode,
            rated=first.rated,
            people=(ada,),
        )
        await write(ports, again)
        assert len(await ports.members.games_of(ada, limit=100)) == 4

    async def test_standings_give_profiles_and_the_leaderboard(self, ports: Ports) -> None:
        guest, member, stranger = new_id("p"), new_id("p"), new_id("p")
        await ports.tokens.issue(token_row(guest, name="Gus"))
        assert await ports.standings.public(stranger) is None
        public = await ports.standings.public(guest)
        assert public == PublicStanding(
            standing=Standing(player_id=guest, name="Gus"), registered=False
        )
        assert await ports.standings.standing(guest) is None
        assert await ports.standings.coins(guest) is None

        record = Standing(
            player_id=member, name="Rec", games_played=3, games_won=2, xp=1200, badges=("a", "b")
        )
        await write(ports, record)
        assert await ports.standings.standing(member) == record
        public = await ports.standings.public(member)
        assert public == PublicStanding(standing=record, registered=False)
        await write(ports, Account(player_id=member, name="Mem", password_hash="h", name_key=None))
        public = await ports.standings.public(member)
        assert public is not None and public.registered and public.standing.name == "Mem"
        assert public.standing.xp == 1200 and public.standing.badges == ("a", "b")

        # The leaderboard, among these (the database may hold others, and other tests' records
        # must keep the lead they set): by wins then XP, or by XP then wins; ties by id.
        ids = sorted(new_id("p") for _ in range(3))
        rows = [
            Standing(player_id=ids[0], name="A", games_won=1, xp=10),
            Standing(player_id=ids[1], name="B", games_won=1, xp=20),
            Standing(player_id=ids[2], name="C", games_won=0, xp=30),
        ]
        await write(ports, *rows)

        async def board(by: Literal["wins", "xp", "rating"]) -> list[str]:
            page = await ports.standings.leaderboard(by, 1_000_000, 0)
            return [s.name for s in page if s.player_id in ids]

        assert await board("wins") == ["B", "A", "C"]
        assert await board("xp") == ["C", "B", "A"]

        # By rating: only people with a rated game, settled ratings before provisional ones.
        rated = sorted(new_id("p") for _ in range(3))
        ids = rated
        await write(
            ports,
            Standing(player_id=rated[0], name="New", rating_mu=40.0, rated_games=1),
            Standing(
                player_id=rated[1], name="Sure", rating_mu=30.0, rating_sigma=2.0, rated_games=80
            ),
            Standing(player_id=rated[2], name="Unrated", xp=5),
        )
        assert await board("rating") == ["Sure", "New"]
        stored = await ports.standings.standing(rated[1])
        assert stored is not None and stored.rating.sigma == 2.0 and stored.rating.games == 80
        found = await ports.standings.ratings([rated[1], rated[2], new_id("p")])
        assert found == {
            rated[1]: stored.rating,
            rated[2]: Standing(player_id="x", name="x").rating,
        }
        reach = Reach()  # as the lobby reads it: on Citus, each worker on its own
        assert await ports.standings.ratings([rated[1], rated[2], new_id("p")], reach) == found
        assert await ports.standings.ratings([], reach) == {} and not reach.partial
        assert len(await ports.standings.leaderboard("xp", 2, 1)) <= 2
