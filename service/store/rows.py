"""What an append commits with its events, as data: the rows of the projections, timers, secrets,
holds, outbox and credentials that must never lag behind the events that cause them
(`EventLog.append(also=...)`), and the check a move's append must pass (`guard=`).

The use cases say *what* is written; each store says *how*: PostgreSQL turns every row into a
statement folded into the append's own round trip (`service.store.projections`), the in-memory
store applies them to its tables in the same step as the events (`service.store.memory`). The
same types come back from the ports' queries where a row is read (`StakeHold`, `Account`).
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from service.domain.ledger import PlayerStats, WalletState
from service.domain.ratings import NEW, Rating
from service.domain.rules.bees import DEFAULT_LEVEL
from service.domain.rules.events import BeeLevel
from service.domain.table_events import TableMode
from service.domain.tables import TableState, TableStatus
from service.domain.transfers import TransferUnion


class Row(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One row an append writes with its events."""


class DealSecret(Row, frozen=True, kw_only=True, gc=False):
    """A prepared game's server seed, secret until the game ends (`deal_secrets`)."""

    game_id: str
    server_seed: bytes


class Timer(Row, frozen=True, kw_only=True, gc=False):
    """A deadline a game set (`timers`); the same deadline twice is one timer."""

    game_id: str
    deadline: datetime


class WalletBalance(Row, frozen=True, kw_only=True, gc=False):
    """A wallet's fold (`wallets`), replaced at every wallet append."""

    player_id: str
    balance: int
    held: int
    granted: int
    version: int

    @classmethod
    def of(cls, player_id: str, wallet: WalletState) -> WalletBalance:
        return cls(
            player_id=player_id,
            balance=wallet.balance,
            held=wallet.held,
            granted=wallet.granted,
            version=wallet.version,
        )


class Standing(Row, frozen=True, kw_only=True, gc=False):
    """A person's record (`player_stats`): what profiles and the leaderboard read."""

    player_id: str
    name: str
    games_played: int = 0
    games_won: int = 0
    xp: int = 0
    badges: tuple[str, ...] = ()
    rating_mu: float = NEW.mu
    rating_sigma: float = NEW.sigma
    rated_games: int = 0

    @classmethod
    def of(cls, player_id: str, name: str, stats: PlayerStats, rating: Rating = NEW) -> Standing:
        return cls(
            player_id=player_id,
            name=name,
            games_played=stats.games_played,
            games_won=stats.games_won,
            xp=stats.xp,
            badges=tuple(stats.badges),
            rating_mu=rating.mu,
            rating_sigma=rating.sigma,
            rated_games=rating.games,
        )

    @property
    def rating(self) -> Rating:
        return Rating(mu=self.rating_mu, sigma=self.rating_sigma, games=self.rated_games)

    @property
    def stats(self) -> PlayerStats:
        """The record as the rules count it (`of`'s other way)."""
        return PlayerStats(
            games_played=self.games_played,
            games_won=self.games_won,
            xp=self.xp,
            badges=self.badges,
        )


class StakeHold(Row, frozen=True, kw_only=True, gc=False):
    """A stake a wallet holds for a table (`stake_holds`), for the sweeper of sit-downs that
    never finished."""

    player_id: str
    hold_id: str
    table_id: str
    amount: int


class StakeHoldEnded(Row, frozen=True, kw_only=True, gc=False):
    """The wallet released or committed that hold: its row goes."""

    player_id: str
    hold_id: str


class OwedTransfer(Row, frozen=True, kw_only=True, gc=False):
    """A transfer in its table's outbox (`money_outbox`), until delivered."""

    transfer: TransferUnion


class LobbyListing(Row, frozen=True, kw_only=True, gc=False):
    """An online table as the lobby lists it (`lobby`); opened when first written."""

    table_id: str
    host_id: str
    host_name: str
    seats_taken: int
    people: int
    capacity: int
    stake: int
    status: TableStatus
    bee_levels: tuple[BeeLevel, ...] = ()

    @classmethod
    def of(cls, table: TableState) -> LobbyListing:
        return cls(
            table_id=table.table_id,
            host_id=table.host,
            host_name=next((s.name for s in table.seats if s.player_id == table.host), ""),
            seats_taken=len(table.seats),
            people=len(table.people),
            capacity=table.capacity,
            stake=table.stake,
            status=table.status,
            bee_levels=tuple(s.level or DEFAULT_LEVEL for s in table.seats if s.kind == "bee"),
        )


class TableMembers(Row, frozen=True, kw_only=True, gc=False):
    """Who sits at a table now (`table_members`, listMyGames): those who left, and everyone
    at a closed table, are no longer members."""

    table_id: str
    people: tuple[str, ...]
    mode: TableMode

    @classmethod
    def of(cls, table: TableState) -> TableMembers:
        people = () if table.closed else tuple(s.player_id for s in table.people if s.player_id)
        return cls(table_id=table.table_id, people=people, mode=table.mode)


class GamesPlayed(Row, frozen=True, kw_only=True, gc=False):
    """A game that ended, on the history of every person dealt into it (`player_games`, one
    row each; My games' history and the export of a player's games)."""

    game_id: str
    table_id: str
    mode: TableMode
    rated: bool
    people: tuple[str, ...]


class Account(Row, frozen=True, kw_only=True, gc=False):
    """An account (`accounts`): unique by player and by `name_key` (`UniqueViolation` with
    `ACCOUNT_TAKEN` or `NAME_TAKEN` otherwise, and nothing of the append is written). A row
    from before name keys has none."""

    player_id: str
    name: str
    password_hash: str
    name_key: str | None


class AccessToken(Row, frozen=True, kw_only=True, gc=False):
    """A bearer token, by its SHA-256 (`access_tokens`)."""

    token_hash: bytes
    player_id: str
    name: str
    expires_at: datetime


# The unique constraints an append's rows can meet (`UniqueViolation.constraint`).
ACCOUNT_TAKEN = "accounts_pkey"
NAME_TAKEN = "accounts_name_key"

Rows = (
    DealSecret
    | Timer
    | WalletBalance
    | Standing
    | StakeHold
    | StakeHoldEnded
    | OwedTransfer
    | LobbyListing
    | TableMembers
    | GamesPlayed
    | Account
    | AccessToken
)


class TokenGuard(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The check a move's append must pass (`guard=`): the bearer token is known, belongs to
    `player_id`, is not revoked and has not expired at `at`; else `GuardRefused` and nothing is
    written."""

    token_hash: bytes
    player_id: str
    at: datetime


# --- what the ports' queries answer, besides rows ---------------------------------------------


class ListedTable(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A lobby row as read: the listing and when the table was first listed."""

    listing: LobbyListing
    opened_at: datetime


class PlayedGame(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A finished game on a person's history, as read: when it ended."""

    game_id: str
    table_id: str
    mode: TableMode
    rated: bool
    ended_at: datetime


class PublicStanding(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A person's record as others see it: their shown name, and whether they have an account
    (`Standing`'s counts are zero for a person with no record yet)."""

    standing: Standing
    registered: bool


class TokenOwner(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Whose a valid bearer token (or a stream ticket's token) is."""

    player_id: str
    name: str  # the account's name, else the one the token was issued with
    registered: bool
    token_hash: bytes


class Reach:
    """What a read across shards left out (`service.store.citus_reads`): given to a read that
    may answer without the shards of a worker that is away (the lobby, My games, the history),
    it collects the workers that did not answer. None missing: the answer is whole (always so
    on plain PostgreSQL and in memory, where a read is whole or fails)."""

    def __init__(self) -> None:
        self.missing: set[str] = set()

    @property
    def partial(self) -> bool:
        return bool(self.missing)


class ShardsAway(ConnectionError):
    """A read needs a shard whose worker is away: answered 503 `database-unavailable` (a
    `ConnectionError`, as the driver's own are) at once instead of after Citus' timeouts."""

    def __init__(self, workers: list[str]) -> None:
        super().__init__(f"shards on workers away: {', '.join(workers)}")
        self.workers = workers
