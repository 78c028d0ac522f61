"""What the use cases need from the store, as ports, one per capability, bundled in `Ports`:

* `EventLog`: the event log; an append also commits the rows its events cause
  (`service.store.rows`: projections, timers, secrets, holds, the outbox, credentials) and may
  carry a `TokenGuard`, all in one step.
* `DealSecrets`: each prepared game's server seed, kept out of the log until the game ends.
* `Timers`: every deadline a game set, claimed when due (the turn clock).
* `Outbox` and `StakeHolds`: what tables owe wallets until delivered; the holds wallets keep,
  for the sweeper.
* `AccountIndex`, `LoginAttempts`, `SignUps`, `AccessTokens`, `StreamTickets`: accounts by
  name, failed logins, sign-ups by address, bearer tokens and stream tickets.
* `Lobby`, `TableMembership`, `Standings`: what `listTables`, `listMyGames`, profiles and the
  leaderboard read.

Two implementations pass the same contract suite (`tests/store_contract.py`):
`service.store.postgres.postgres_ports` (the one the service runs on) and
`service.store.memory.memory_ports` (for fast tests of the use cases). The types they share are
`log.py`'s (`StreamAppend`, `RecordedEvent`, the refusals, the hashing) and `rows.py`'s; neither
store imports the other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol, TypeVar

from service.domain import chain
from service.domain.ratings import Rating
from service.domain.transfers import TransferUnion
from service.store.log import LogCursor, RecordedEvent, StreamAppend
from service.store.rows import (
    AccessToken,
    Account,
    ListedTable,
    PlayedGame,
    PublicStanding,
    Reach,
    Row,
    StakeHold,
    Standing,
    Timer,
    TokenGuard,
    TokenOwner,
    WalletBalance,
)

T = TypeVar("T")


class PoolExhausted(TimeoutError):
    """No database connection became free within the acquire timeout: the store is saturated
    (answered with 503 `overloaded`, see service/api/problems.py; a stream's follower skips a
    read on it)."""


class EventLog(Protocol):
    async def append(
        self,
        *appends: StreamAppend,
        metadata: Mapping[str, Any] | None = None,
        command: tuple[str, str] | None = None,
        also: Sequence[Row] = (),
        guard: TokenGuard | None = None,
    ) -> list[RecordedEvent]:
        """Append to one or several streams atomically (each at its `expected_version`, else
        `ConcurrencyConflict`); `command=(stream, id)`: once only (`DuplicateCommand`); `also`:
        the rows written with the events (`UniqueViolation` if one breaks a unique key);
        `guard`: refused (`GuardRefused`) unless the token passes. A refusal writes nothing."""
        ...

    async def read_stream(
        self, stream: str, *, after_version: int = 0, up_to_version: int | None = None
    ) -> list[RecordedEvent]: ...

    async def read_events(
        self,
        stream: str,
        decode: Callable[[str], list[T]],
        *,
        after_version: int = 0,
        up_to_version: int | None = None,
    ) -> list[T]: ...

    async def verify_stream(
        self,
        stream: str,
        *,
        anchors: Mapping[int, bytes] | None = None,
        seal_keys: Mapping[str, bytes] | None = None,
    ) -> chain.ChainVerdict: ...

    async def stream_version(self, stream: str) -> int: ...

    async def colocated_id(self, key: str) -> str:
        """A fresh id (a uuid) whose stream shares the shard of the stream ``key`` names, on a
        store that shards (Citus: a game's id beside its table's); any fresh uuid elsewhere."""
        ...

    async def head_link(self, stream: str, version: int) -> tuple[bytes, int] | None:
        """The hash of event `version` of `stream` and its chain version (None when there is
        no such event), without a read when the store already knows it as the stream's head."""
        ...

    async def command_version(self, stream: str, command_id: str) -> int | None: ...

    async def read_all(
        self,
        *,
        after: LogCursor | None = None,
        limit: int = 1000,
        stream_prefix: str | None = None,
        horizon: bool = True,
    ) -> list[RecordedEvent]: ...

    async def last_position(self) -> int: ...


class Followers(Protocol):
    def subscribe(self, stream: str) -> AbstractContextManager[asyncio.Event]:
        """An event set whenever `stream` (or a name announced with `AccessTokens.announce`)
        is appended to, anywhere, for as long as the context lasts: a stream's follower waits
        on it before it reads again (`service.store.wakeups.Wakeups`, LISTEN on PostgreSQL)."""
        ...


class DealSecrets(Protocol):
    async def server_seed(self, game_id: str) -> bytes | None:
        """The secret seed a prepared game is dealt from (`rows.DealSecret`); None for a game
        that has none (dealt before fair deals, or unknown)."""
        ...


class TimerClaim(Protocol):
    @property
    def due(self) -> Sequence[Timer]:
        """The claimed timers, earliest first: no other claim gets them while this one lasts."""
        ...

    async def fired(self, timers: Sequence[Timer]) -> None:
        """These timers are done: they are gone once the claim ends (the others stay)."""
        ...


class Timers(Protocol):
    def claim_due(self, now: datetime, limit: int) -> AbstractAsyncContextManager[TimerClaim]:
        """Up to `limit` timers with `deadline <= now` that no other claim holds."""
        ...

    async def next_deadline(self) -> datetime | None: ...


class OutboxClaim(Protocol):
    @property
    def transfers(self) -> Sequence[TransferUnion]:
        """The claimed transfers, oldest first: no other claim gets them while this lasts."""
        ...

    async def delivered(self, transfer: TransferUnion) -> None:
        """Delivered: gone from the outbox once the claim ends."""
        ...


class Outbox(Protocol):
    async def any_due(self, older_than: timedelta) -> bool:
        """Whether any transfer has waited longer than `older_than` (cheap: the usual answer
        is no)."""
        ...

    def claim_due(
        self, older_than: timedelta, limit: int
    ) -> AbstractAsyncContextManager[OutboxClaim]:
        """The oldest due transfers of the kinds this version knows (`transfers.KINDS`), each
        to one claim at a time; a row of another kind (a newer version's, in a rolling deploy)
        is never claimed here, and one this version cannot decode is left where it is."""
        ...

    async def unknown_due(self, older_than: timedelta) -> dict[str, int]:
        """Due transfers of kinds this version does not know, counted by kind: left for a
        newer instance (the relay logs them)."""
        ...

    async def delivered(self, transfer: TransferUnion) -> None:
        """Delivered by the request that wrote it: gone from the outbox."""
        ...

    async def owed(self, table_id: str, transfer_id: str) -> TransferUnion | None:
        """The transfer, while it is still in the outbox (not known delivered); else None."""
        ...


class StakeHolds(Protocol):
    async def unsettled(self, older_than: timedelta, limit: int) -> list[StakeHold]:
        """Holds older than `older_than` whose fate the table has not been asked about yet,
        oldest first."""
        ...

    async def settle(self, player_id: str, hold_id: str) -> None:
        """The table has decided this hold's fate: the sweeper need not ask again."""
        ...

    async def legacy_holders(self, limit: int) -> list[str]:
        """Wallets (`rows.WalletBalance`) that hold more than their hold rows account for:
        holds from before holds had ids."""
        ...

    async def held_by_table(self, player_id: str) -> dict[str, int]:
        """What the player's hold rows add up to, table by table."""
        ...


class AccountIndex(Protocol):
    async def registered(self, player_id: str) -> bool: ...

    async def name_taken(self, name_key: str) -> bool: ...

    async def by_name(self, name_key: str, name: str) -> Account | None:
        """The account with this name key; else one from before name keys, by its exact
        name."""
        ...

    async def set_name_key(self, player_id: str, name_key: str) -> bool:
        """Give a keyless account its key; False (nothing changed) if another has it."""
        ...

    async def holders(self, player_ids: Sequence[str]) -> list[str]:
        """Those of `player_ids` who have an account."""
        ...


class LoginAttempts(Protocol):
    async def attempt(
        self, keys: Sequence[str], at: datetime, since: datetime, allowed: int
    ) -> datetime | None:
        """Count a login attempt against every key, as a failure until it succeeds, taking
        turns per key. Refused while a key has `allowed` failures after `since`: then nothing
        is counted and the answer is the latest of the keys' `allowed`-th most recent
        failures (the block lasts a window from it); else None."""
        ...

    async def succeeded(self, keys: Sequence[str], at: datetime, token: AccessToken) -> None:
        """The attempt counted at `at` succeeded: withdraw its count (only its own) and issue
        its token, together."""
        ...


class SignUps(Protocol):
    async def count(self, key: str, at: datetime, since: datetime, allowed: int) -> datetime | None:
        """Count one sign-up under `key` at `at`, taking turns per key, unless `allowed` were
        counted after `since`: then nothing is counted and the answer is the oldest of them.
        Sign-ups up to `since` are forgotten."""
        ...


class AccessTokens(Protocol):
    async def issue(self, token: AccessToken) -> None: ...

    async def revoke(self, token_hash: bytes, at: datetime) -> None: ...

    async def owner(self, token_hash: bytes, at: datetime) -> TokenOwner | None:
        """Whose the token is, if it is known, unrevoked and unexpired at `at` (an account's
        name before the name the token was issued with)."""
        ...

    async def valid(self, token_hash: bytes, at: datetime) -> bool: ...

    async def announce(self, name: str) -> None:
        """Wake every instance's followers of `name` (`service.store.wakeups`)."""
        ...


class StreamTickets(Protocol):
    async def issue(
        self,
        ticket_hash: bytes,
        token_hash: bytes,
        stream: str,
        expires_at: datetime,
        now: datetime,
    ) -> None:
        """Keep a ticket for `stream`, tied to its token; the token's expired tickets go."""
        ...

    async def redeem(self, ticket_hash: bytes, stream: str, at: datetime) -> TokenOwner | None:
        """Whose the ticket is, if it is for `stream`, unexpired, and its token still valid."""
        ...


class Lobby(Protocol):
    async def page(
        self,
        stake: str,
        has_free_seat: bool,
        limit: int,
        offset: int,
        reach: Reach | None = None,
    ) -> list[ListedTable]:
        """Tables not closed, newest first (then by id); `stake`: "any", "free" (0) or else
        buy-in tables only; `has_free_seat`: only those with a seat left. With `reach`, the
        tables of the shards that answer, the others noted in it (`Reach`)."""
        ...

    async def hosting(self, host_id: str) -> int:
        """How many tables not closed this player hosts."""
        ...


class TableMembership(Protocol):
    async def tables_of(self, player_id: str, limit: int, reach: Reach | None = None) -> list[str]:
        """The tables the player sits at, most recently joined first (then by id); with
        `reach`, those of the shards that answer."""
        ...

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
        """The finished games the player was dealt into, newest first (then by game id):
        `rated` True or False keeps rated or casual ones only; `online_only` drops solo
        games; `since` (included) and `until` (excluded) bound when they ended. With `reach`,
        those of the shards that answer."""
        ...


class Standings(Protocol):
    async def coins(self, player_id: str) -> WalletBalance | None: ...

    async def standing(self, player_id: str) -> Standing | None: ...

    async def ratings(
        self, player_ids: Sequence[str], reach: Reach | None = None
    ) -> dict[str, Rating]:
        """The ratings of those of `player_ids` who have a record (people with accounts); with
        `reach`, of those whose shards answer."""
        ...

    async def public(self, player_id: str) -> PublicStanding | None:
        """A person's record with the name others see (the account's, the record's, or the
        first token's); None if nothing is known of them."""
        ...

    async def leaderboard(
        self, by: Literal["wins", "xp", "rating"], limit: int, offset: int
    ) -> list[Standing]:
        """By games won then XP, or XP then games won; or, of the people with a rated game,
        settled ratings then provisional ones, each by mu; ties by player id. Whole or
        `ShardsAway`: a rank counts everyone."""
        ...


@dataclass(frozen=True)
class Ports:
    """Every port, as one store implements them (`postgres_ports`, `memory_ports`)."""

    log: EventLog
    secrets: DealSecrets
    timers: Timers
    outbox: Outbox
    holds: StakeHolds
    accounts: AccountIndex
    logins: LoginAttempts
    sign_ups: SignUps
    tokens: AccessTokens
    tickets: StreamTickets
    lobby: Lobby
    members: TableMembership
    standings: Standings
