"""Every port in memory (`memory_ports`): the second implementation of `service.store.port`,
for fast tests of the use cases. The service runs on PostgreSQL only.

It keeps the PostgreSQL store's promises, checked by the same contract suite
(`tests/store_contract.py`):

* **The log** (`InMemoryEventStore`): each stream's versions 1, 2, 3… with the expected version
  checked (`ConcurrencyConflict`), several streams appended at once or not at all, a command
  applied once (`DuplicateCommand`, with the version it produced), the data as `jsonb` would
  give it back, metadata on every event, the whole log in `(txid, position)` order, and each
  event's hash chained exactly as PostgreSQL chains it (chain v2), so `verify_stream` and the
  audit work on it.
* **The rows an append commits** (`service.store.rows`) are written in the same step as its
  events, or (a unique key broken: `UniqueViolation` with PostgreSQL's constraint name; a
  `TokenGuard` refused: `GuardRefused`) nothing is.
* **Claims** (timers, the outbox) hold their rows until they end, so a second claimer skips
  them, as `FOR UPDATE SKIP LOCKED` does; what takes turns per key in PostgreSQL (an advisory
  lock) is one step here.

Every step that must be atomic runs with no `await` inside, so steps that race are serialised,
as PostgreSQL's transactions are. Times the database would stamp (`now()`) come from the
store's `clock`; give it the use cases' fake clock to drive the relay and the sweeper.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeVar

import msgspec

from service.domain import chain
from service.domain.ratings import Rating
from service.domain.transfers import TransferUnion
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
    stored_value,
)
from service.store.port import Ports
from service.store.rows import (
    ACCOUNT_TAKEN,
    NAME_TAKEN,
    AccessToken,
    Account,
    DealSecret,
    GamesPlayed,
    ListedTable,
    LobbyListing,
    OwedTransfer,
    PlayedGame,
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

T = TypeVar("T")


def _now() -> datetime:
    return datetime.now(UTC)


# --- the tables beside the log ---------------------------------------------------------------


@dataclass
class _Held:
    row: StakeHold
    held_at: datetime
    settled_at: datetime | None = None


@dataclass
class _Owed:
    transfer: TransferUnion
    created_at: datetime
    order: int


@dataclass
class _Token:
    row: AccessToken
    created_at: datetime
    revoked_at: datetime | None = None


@dataclass
class _Ticket:
    token_hash: bytes
    stream: str
    expires_at: datetime


@dataclass
class MemoryTables:
    """Every table but the log's, as PostgreSQL keeps them (keys as its primary keys)."""

    clock: Callable[[], datetime] = _now
    secrets: dict[str, bytes] = field(default_factory=dict)
    timers: dict[tuple[str, datetime], Timer] = field(default_factory=dict)
    wallets: dict[str, WalletBalance] = field(default_factory=dict)
    standings: dict[str, Standing] = field(default_factory=dict)
    holds: dict[tuple[str, str], _Held] = field(default_factory=dict)
    outbox: dict[tuple[str, str], _Owed] = field(default_factory=dict)
    lobby: dict[str, ListedTable] = field(default_factory=dict)
    members: dict[tuple[str, str], datetime] = field(default_factory=dict)  # joined at
    played: dict[tuple[str, str], PlayedGame] = field(default_factory=dict)  # (player, game)
    accounts: dict[str, Account] = field(default_factory=dict)
    tokens: dict[bytes, _Token] = field(default_factory=dict)
    tickets: dict[bytes, _Ticket] = field(default_factory=dict)
    login_failures: list[tuple[str, datetime]] = field(default_factory=list)
    sign_ups: list[tuple[str, datetime]] = field(default_factory=list)
    announced: list[str] = field(default_factory=list)  # wake-ups sent (`AccessTokens.announce`)
    locked: set[object] = field(default_factory=set)  # rows a claim holds
    _order: int = 0

    def check(self, rows: Sequence[Row]) -> None:
        """Raise what PostgreSQL would for these rows (a unique key, a constraint), before
        anything is written."""
        new: dict[str, set[object]] = {}

        def unique(constraint: str, key: object, taken: bool) -> None:
            seen = new.setdefault(constraint, set())
            if taken or key in seen:
                raise UniqueViolation(constraint)
            seen.add(key)

        for row in rows:
            if isinstance(row, DealSecret):
                unique("deal_secrets_pkey", row.game_id, row.game_id in self.secrets)
                if len(row.server_seed) != 32:
                    raise ValueError("deal_secrets_server_seed_check")
            elif isinstance(row, WalletBalance):
                if min(row.balance, row.held, row.granted) < 0:
                    raise ValueError(f"wallets: a negative amount for {row.player_id}")
            elif isinstance(row, StakeHold):
                key = (row.player_id, row.hold_id)
                unique("stake_holds_pkey", key, key in self.holds)
                if row.amount <= 0:
                    raise ValueError("stake_holds_amount_check")
            elif isinstance(row, OwedTransfer):
                key = (row.transfer.table_id, row.transfer.transfer_id)
                unique("money_outbox_pkey", key, key in self.outbox)
            elif isinstance(row, Account):
                unique(ACCOUNT_TAKEN, row.player_id, row.player_id in self.accounts)
                if row.name_key is not None:
                    taken = any(a.name_key == row.name_key for a in self.accounts.values())
                    unique(NAME_TAKEN, row.name_key, taken)
            elif isinstance(row, AccessToken):
                unique("access_tokens_pkey", row.token_hash, row.token_hash in self.tokens)

    def write(self, rows: Iterable[Row], now: datetime) -> None:
        for row in rows:
            if isinstance(row, DealSecret):
                self.secrets[row.game_id] = row.server_seed
            elif isinstance(row, Timer):
                self.timers.setdefault((row.game_id, row.deadline), row)
            elif isinstance(row, WalletBalance):
                self.wallets[row.player_id] = row
            elif isinstance(row, Standing):
                self.standings[row.player_id] = row
            elif isinstance(row, StakeHold):
                self.holds[(row.player_id, row.hold_id)] = _Held(row, held_at=now)
            elif isinstance(row, StakeHoldEnded):
                self.holds.pop((row.player_id, row.hold_id), None)
            elif isinstance(row, OwedTransfer):
                self._order += 1
                key = (row.transfer.table_id, row.transfer.transfer_id)
                self.outbox[key] = _Owed(row.transfer, created_at=now, order=self._order)
            elif isinstance(row, LobbyListing):
                known = self.lobby.get(row.table_id)
                opened = known.opened_at if known is not None else now
                self.lobby[row.table_id] = ListedTable(listing=row, opened_at=opened)
            elif isinstance(row, TableMembers):
                for key in [k for k in self.members if k[0] == row.table_id]:
                    if key[1] not in row.people:
                        del self.members[key]
                for person in row.people:
                    self.members.setdefault((row.table_id, person), now)
            elif isinstance(row, GamesPlayed):
                for person in row.people:
                    self.played.setdefault(
                        (person, row.game_id),
                        PlayedGame(
                            game_id=row.game_id,
                            table_id=row.table_id,
                            mode=row.mode,
                            rated=row.rated,
                            ended_at=now,
                        ),
                    )
            elif isinstance(row, Account):
                self.accounts[row.player_id] = row
            elif isinstance(row, AccessToken):
                self.tokens[row.token_hash] = _Token(row, created_at=now)
            else:  # pragma: no cover - every row type is written above
                raise TypeError(f"no table for {type(row).__name__}")

    def token_owner(self, token_hash: bytes, at: datetime) -> TokenOwner | None:
        token = self.tokens.get(token_hash)
        if token is None or token.revoked_at is not None or token.row.expires_at <= at:
            return None
        account = self.accounts.get(token.row.player_id)
        return TokenOwner(
            player_id=token.row.player_id,
            name=account.name if account is not None else token.row.name,
            registered=account is not None,
            token_hash=token_hash,
        )


# --- the log ---------------------------------------------------------------------------------


class InMemoryEventStore:
    """`port.EventLog` in memory; its rows go to `tables`."""

    def __init__(
        self, clock: Callable[[], datetime] = _now, tables: MemoryTables | None = None
    ) -> None:
        self._clock = clock
        self.tables = tables if tables is not None else MemoryTables(clock=clock)
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
        also: Sequence[Row] = (),
        guard: TokenGuard | None = None,
    ) -> list[RecordedEvent]:
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
        bodies = iter(hashes(appends, heads, meta))  # checks the data, too
        self.tables.check(also)
        if guard is not None:
            if not any(a.events for a in appends):
                raise ValueError("a guard needs events to append")
            owner = self.tables.token_owner(guard.token_hash, guard.at)
            if owner is None or owner.player_id != guard.player_id:
                raise GuardRefused("the bearer token is not known, has expired or was revoked")
        recorded_at = self._stamp()
        self._txid += 1
        recorded: list[RecordedEvent] = []
        for a in appends:
            prev = heads[a.stream][0] or chain.GENESIS
            for version, event in enumerate(a.events, start=a.expected_version + 1):
                value, _ = stored_value(event.data.decode("utf-8"))
                if event.canonical and chain.canonical_value(value) != event.data:
                    # What the event store would hash, and the audit then fail to recompute.
                    raise ValueError(f"{event.type} v{version}: data marked canonical is not")
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
        self.tables.write(also, recorded_at)
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

    async def colocated_id(self, key: str) -> str:
        return str(uuid.uuid4())  # one node: every id is beside every other

    async def verify_stream(
        self,
        stream: str,
        *,
        anchors: Mapping[int, bytes] | None = None,
        seal_keys: Mapping[str, bytes] | None = None,
    ) -> chain.ChainVerdict:
        events = await self.read_stream(stream)
        if seal_keys is None:  # as PostgreSQL's: the games' keys from their secrets
            seal_keys = self._seal_keys(stream, events)
        links = [link(e) for e in events]
        return chain.verify_chain(links, stream=stream, anchors=anchors, seal_keys=seal_keys)

    def _seal_keys(self, stream: str, events: Sequence[RecordedEvent]) -> dict[str, bytes]:
        kind, _, ident = stream.partition("-")
        games = {ident} if kind == "game" else set()
        for e in events:
            if kind == "table" and chain.HIDDEN["table"].get(e.type):
                games.add(str(msgspec.json.decode(e.data).get("game_id")))
        secrets = self.tables.secrets
        return {g: chain.seal_key(g, secrets[g]) for g in sorted(games) if g in secrets}

    async def head_link(self, stream: str, version: int) -> tuple[bytes, int] | None:
        events = await self.read_stream(stream, after_version=version - 1, up_to_version=version)
        return (events[-1].hash, events[-1].chain) if events else None

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


# --- the other ports, each on the same tables --------------------------------------------------


class InMemoryDealSecrets:
    def __init__(self, tables: MemoryTables | None = None) -> None:
        self.tables = tables if tables is not None else MemoryTables()

    async def server_seed(self, game_id: str) -> bytes | None:
        return self.tables.secrets.get(game_id)


class _TimerClaim:
    def __init__(self, due: list[Timer]) -> None:
        self.due = due
        self.done: list[Timer] = []

    async def fired(self, timers: Sequence[Timer]) -> None:
        self.done.extend(timers)


class InMemoryTimers:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    @asynccontextmanager
    async def claim_due(self, now: datetime, limit: int) -> AsyncIterator[_TimerClaim]:
        tables = self.tables
        due = sorted(
            (t for k, t in tables.timers.items() if t.deadline <= now and k not in tables.locked),
            key=lambda t: t.deadline,
        )[:limit]
        keys = {(t.game_id, t.deadline) for t in due}
        tables.locked |= keys
        claim = _TimerClaim(due)
        try:
            yield claim
            for t in claim.done:  # the claim committed
                tables.timers.pop((t.game_id, t.deadline), None)
        finally:
            tables.locked -= keys

    async def next_deadline(self) -> datetime | None:
        return min((t.deadline for t in self.tables.timers.values()), default=None)


class _OutboxClaim:
    def __init__(self, transfers: list[TransferUnion]) -> None:
        self.transfers = transfers
        self.done: list[TransferUnion] = []

    async def delivered(self, transfer: TransferUnion) -> None:
        self.done.append(transfer)


class InMemoryOutbox:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    def _due(self, older_than: timedelta) -> list[tuple[tuple[str, str], _Owed]]:
        cutoff = self.tables.clock() - older_than
        due = [(k, o) for k, o in self.tables.outbox.items() if o.created_at <= cutoff]
        return sorted(due, key=lambda item: (item[1].created_at, item[1].order))

    async def any_due(self, older_than: timedelta) -> bool:
        return bool(self._due(older_than))

    @asynccontextmanager
    async def claim_due(self, older_than: timedelta, limit: int) -> AsyncIterator[_OutboxClaim]:
        tables = self.tables
        due = [(k, o) for k, o in self._due(older_than) if k not in tables.locked][:limit]
        keys = {k for k, _ in due}
        tables.locked |= keys
        claim = _OutboxClaim([o.transfer for _, o in due])
        try:
            yield claim
            for t in claim.done:
                tables.outbox.pop((t.table_id, t.transfer_id), None)
        finally:
            tables.locked -= keys

    async def unknown_due(self, older_than: timedelta) -> dict[str, int]:
        return {}  # rows here are this version's own transfers: every kind known

    async def delivered(self, transfer: TransferUnion) -> None:
        self.tables.outbox.pop((transfer.table_id, transfer.transfer_id), None)

    async def owed(self, table_id: str, transfer_id: str) -> TransferUnion | None:
        owed = self.tables.outbox.get((table_id, transfer_id))
        return None if owed is None else owed.transfer


class InMemoryStakeHolds:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    async def unsettled(self, older_than: timedelta, limit: int) -> list[StakeHold]:
        cutoff = self.tables.clock() - older_than
        held = [h for h in self.tables.holds.values() if h.settled_at is None]
        return [h.row for h in sorted(held, key=lambda h: h.held_at) if h.held_at <= cutoff][:limit]

    async def settle(self, player_id: str, hold_id: str) -> None:
        held = self.tables.holds.get((player_id, hold_id))
        if held is not None:
            held.settled_at = self.tables.clock()

    async def legacy_holders(self, limit: int) -> list[str]:
        holders = []
        for player_id, wallet in self.tables.wallets.items():
            if wallet.held > sum((await self.held_by_table(player_id)).values()):
                holders.append(player_id)
        return holders[:limit]

    async def held_by_table(self, player_id: str) -> dict[str, int]:
        held: dict[str, int] = {}
        for (owner, _), h in self.tables.holds.items():
            if owner == player_id:
                held[h.row.table_id] = held.get(h.row.table_id, 0) + h.row.amount
        return held


class InMemoryAccounts:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    async def registered(self, player_id: str) -> bool:
        return player_id in self.tables.accounts

    async def name_taken(self, name_key: str) -> bool:
        return any(a.name_key == name_key for a in self.tables.accounts.values())

    async def by_name(self, name_key: str, name: str) -> Account | None:
        accounts = self.tables.accounts.values()
        keyed = next((a for a in accounts if a.name_key == name_key), None)
        return keyed or next((a for a in accounts if a.name_key is None and a.name == name), None)

    async def set_name_key(self, player_id: str, name_key: str) -> bool:
        if await self.name_taken(name_key):
            return False
        account = self.tables.accounts.get(player_id)
        if account is not None and account.name_key is None:
            self.tables.accounts[player_id] = msgspec.structs.replace(account, name_key=name_key)
        return True

    async def holders(self, player_ids: Sequence[str]) -> list[str]:
        return [p for p in dict.fromkeys(player_ids) if p in self.tables.accounts]


class InMemoryLoginAttempts:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    async def attempt(
        self, keys: Sequence[str], at: datetime, since: datetime, allowed: int
    ) -> datetime | None:
        failures = self.tables.login_failures
        blocking: datetime | None = None
        for key in keys:
            recent = sorted((t for k, t in failures if k == key and t > since), reverse=True)
            if len(recent) >= allowed:
                failed_at = recent[allowed - 1]
                blocking = failed_at if blocking is None else max(blocking, failed_at)
        if blocking is None:
            failures.extend((key, at) for key in keys)
        return blocking

    async def succeeded(self, keys: Sequence[str], at: datetime, token: AccessToken) -> None:
        self.tables.check([token])
        for key in keys:
            if (key, at) in self.tables.login_failures:
                self.tables.login_failures.remove((key, at))
        self.tables.write([token], self.tables.clock())


class InMemorySignUps:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    async def count(self, key: str, at: datetime, since: datetime, allowed: int) -> datetime | None:
        tables = self.tables
        tables.sign_ups = [(k, t) for k, t in tables.sign_ups if k != key or t > since]
        counted = [t for k, t in tables.sign_ups if k == key]
        if len(counted) >= allowed:
            return min(counted)
        tables.sign_ups.append((key, at))
        return None


class InMemoryAccessTokens:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    async def issue(self, token: AccessToken) -> None:
        self.tables.check([token])
        self.tables.write([token], self.tables.clock())

    async def revoke(self, token_hash: bytes, at: datetime) -> None:
        token = self.tables.tokens.get(token_hash)
        if token is not None and token.revoked_at is None:
            token.revoked_at = at

    async def owner(self, token_hash: bytes, at: datetime) -> TokenOwner | None:
        return self.tables.token_owner(token_hash, at)

    async def valid(self, token_hash: bytes, at: datetime) -> bool:
        return self.tables.token_owner(token_hash, at) is not None

    async def announce(self, name: str) -> None:
        self.tables.announced.append(name)


class InMemoryStreamTickets:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    async def issue(
        self,
        ticket_hash: bytes,
        token_hash: bytes,
        stream: str,
        expires_at: datetime,
        now: datetime,
    ) -> None:
        tickets = self.tables.tickets
        if token_hash not in self.tables.tokens:
            raise ValueError("stream_tickets_token_hash_fkey")
        if ticket_hash in tickets:
            raise UniqueViolation("stream_tickets_pkey")
        for key in [k for k, t in tickets.items() if t.token_hash == token_hash]:
            if tickets[key].expires_at <= now:
                del tickets[key]
        tickets[ticket_hash] = _Ticket(token_hash, stream, expires_at)

    async def redeem(self, ticket_hash: bytes, stream: str, at: datetime) -> TokenOwner | None:
        ticket = self.tables.tickets.get(ticket_hash)
        if ticket is None or ticket.stream != stream or ticket.expires_at <= at:
            return None
        return self.tables.token_owner(ticket.token_hash, at)


class InMemoryLobby:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    async def page(
        self,
        stake: str,
        has_free_seat: bool,
        limit: int,
        offset: int,
        reach: Reach | None = None,  # every read here is whole
    ) -> list[ListedTable]:
        def listed(entry: ListedTable) -> bool:
            t = entry.listing
            return (
                t.status != "closed"
                and (stake == "any" or (stake == "free") == (t.stake == 0))
                and (not has_free_seat or t.seats_taken < t.capacity)
            )

        found = sorted(
            (e for e in self.tables.lobby.values() if listed(e)), key=lambda e: e.listing.table_id
        )
        found.sort(key=lambda e: e.opened_at, reverse=True)  # stable: ties stay by id
        return found[offset : offset + limit]

    async def hosting(self, host_id: str) -> int:
        return sum(
            1
            for e in self.tables.lobby.values()
            if e.listing.host_id == host_id and e.listing.status != "closed"
        )


class InMemoryTableMembership:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    async def tables_of(self, player_id: str, limit: int, reach: Reach | None = None) -> list[str]:
        mine = sorted((t, at) for (t, p), at in self.tables.members.items() if p == player_id)
        mine.sort(key=lambda item: item[1], reverse=True)  # stable: ties stay by table id
        return [table_id for table_id, _ in mine[:limit]]

    async def games_of(
        self,
        player_id: str,
        *,
        rated: bool | None = None,
        online_only: bool = False,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int,
        offset: int = 0,
        reach: Reach | None = None,
    ) -> list[PlayedGame]:
        mine = [
            g
            for (p, _), g in self.tables.played.items()
            if p == player_id
            and (rated is None or g.rated == rated)
            and (not online_only or g.mode == "online")
            and (since is None or g.ended_at >= since)
            and (until is None or g.ended_at < until)
        ]
        mine.sort(key=lambda g: (g.ended_at, g.game_id), reverse=True)
        return mine[offset : offset + limit]


class InMemoryStandings:
    def __init__(self, tables: MemoryTables) -> None:
        self.tables = tables

    async def coins(self, player_id: str) -> WalletBalance | None:
        return self.tables.wallets.get(player_id)

    async def standing(self, player_id: str) -> Standing | None:
        return self.tables.standings.get(player_id)

    async def ratings(
        self, player_ids: Sequence[str], reach: Reach | None = None
    ) -> dict[str, Rating]:
        known = self.tables.standings
        return {p: known[p].rating for p in player_ids if p in known}

    async def public(self, player_id: str) -> PublicStanding | None:
        tables = self.tables
        account = tables.accounts.get(player_id)
        standing = tables.standings.get(player_id)
        tokens = sorted(
            (t for t in tables.tokens.values() if t.row.player_id == player_id),
            key=lambda t: t.created_at,
        )
        name = (
            account.name
            if account is not None
            else standing.name
            if standing is not None
            else tokens[0].row.name
            if tokens
            else None
        )
        if name is None:
            return None
        shown = msgspec.structs.replace(
            standing or Standing(player_id=player_id, name=name), name=name
        )
        return PublicStanding(standing=shown, registered=account is not None)

    async def leaderboard(
        self, by: Literal["wins", "xp", "rating"], limit: int, offset: int
    ) -> list[Standing]:
        def order(s: Standing) -> tuple[float, float, str]:
            if by == "rating":  # settled ratings first (PostgreSQL's sigma < 6), then by mu
                return (float(s.rating.provisional), -s.rating_mu, s.player_id)
            first, second = (s.games_won, s.xp) if by == "wins" else (s.xp, s.games_won)
            return (-first, -second, s.player_id)

        standings = [s for s in self.tables.standings.values() if by != "rating" or s.rated_games]
        return sorted(standings, key=order)[offset : offset + limit]


def memory_ports(clock: Callable[[], datetime] = _now) -> Ports:
    """Every port on one set of in-memory tables; `clock` stamps what PostgreSQL's `now()`
    would (the log's times, a hold's or a transfer's age)."""
    tables = MemoryTables(clock=clock)
    return Ports(
        log=InMemoryEventStore(clock, tables),
        secrets=InMemoryDealSecrets(tables),
        timers=InMemoryTimers(tables),
        outbox=InMemoryOutbox(tables),
        holds=InMemoryStakeHolds(tables),
        accounts=InMemoryAccounts(tables),
        logins=InMemoryLoginAttempts(tables),
        sign_ups=InMemorySignUps(tables),
        tokens=InMemoryAccessTokens(tables),
        tickets=InMemoryStreamTickets(tables),
        lobby=InMemoryLobby(tables),
        members=InMemoryTableMembership(tables),
        standings=InMemoryStandings(tables),
    )
