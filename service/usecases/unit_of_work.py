"""One request's writes, committed together: the events of every stream it touches (each
expected at the version it was decided on), with the projection rows, timers and secrets that
must never lag behind them, in one `EventStore.append` (one transaction).

Everything decided inside one unit sees what was decided before it in the same unit: the
table, games, wallets and player records it has changed are kept folded here, and loaded
through the repository only the first time they are asked for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

import msgspec

from service.domain.codec import encode_canonical, tag_of
from service.domain.ledger import (
    StakeCommitted,
    StakeHeld,
    StakeReleased,
    WalletEventUnion,
    WalletState,
    evolve_wallet,
    record_game,
    wallet_event_type,
)
from service.domain.players import GameRecorded, PlayerRecord
from service.domain.ratings import RatingChanged
from service.domain.rules.engine import GameState, fold
from service.domain.rules.events import (
    DealCommitted,
    Event,
    GameEnded,
    GameStarted,
    StemChoiceRequired,
    TurnStarted,
    event_type,
)
from service.domain.table_events import (
    SeedContributed,
    SeedRevealed,
    TableEventUnion,
    table_event_type,
)
from service.domain.tables import TableState, evolve_table
from service.domain.transfers import TransferUnion
from service.store.log import NewEvent, StreamAppend
from service.store.rows import (
    DealSecret,
    GamesPlayed,
    LobbyListing,
    OwedTransfer,
    Row,
    StakeHold,
    StakeHoldEnded,
    Standing,
    TableMembers,
    Timer,
    TokenGuard,
    WalletBalance,
)
from service.usecases.context import stream
from service.usecases.repository import Repository

S = TypeVar("S")
E = TypeVar("E")


class _Stream(Generic[S, E]):
    """A stream's state before this unit, the events this unit adds, and the state after."""

    def __init__(self, before: S, version: int) -> None:
        self.version = version
        self.events: list[E] = []
        self.after: S = before


class UnitOfWork:
    def __init__(self, repository: Repository, table: TableState | None = None) -> None:
        """`table`: the table as decided on, if this unit changes it (its version is the one
        expected at commit)."""
        self.repository = repository
        self.before = table
        self.table = table or TableState()
        self.table_events: list[TableEventUnion] = []
        self._secrets: dict[str, bytes] = {}
        self._games: dict[str, _Stream[GameState, Event]] = {}
        self._wallets: dict[str, _Stream[WalletState, WalletEventUnion]] = {}
        self._records: dict[str, tuple[PlayerRecord, list[GameRecorded | RatingChanged]]] = {}
        self.transfers: list[TransferUnion] = []  # to wallets, through the table's outbox

    # --- the table ----------------------------------------------------------------------------

    def table_event(self, event: TableEventUnion) -> None:
        self.table_events.append(event)
        self.table = evolve_table(self.table, event)

    # --- games --------------------------------------------------------------------------------

    def game_events(
        self, before: GameState, events: Sequence[Event], after: GameState | None = None
    ) -> None:
        """`events` decided on `before` (the first time a game is named, its version is the one
        expected at commit; later calls continue from where this unit left it). `after`: the
        state they lead to, when the caller has it already (`play` folds as it decides), so
        they are not folded a second time."""
        game_id = before.game_id or _game_id_of(events)
        entry = self._games.get(game_id)
        if entry is None:
            entry = self._games[game_id] = _Stream(before, before.version)
        fresh = not entry.events and entry.after is before
        entry.events.extend(events)
        entry.after = after if after is not None and fresh else fold(events, entry.after)

    def game_state(self, game_id: str) -> GameState | None:
        entry = self._games.get(game_id)
        return entry.after if entry is not None else None

    async def game(self, game_id: str) -> GameState:
        return self.game_state(game_id) or await self.repository.game(game_id)

    def current_game(self) -> GameState | None:
        current = self.table.current_game
        return self.game_state(current) if current is not None else None

    def keep_secret(self, game_id: str, server_seed: bytes) -> None:
        self._secrets[game_id] = server_seed

    async def server_seed(self, game_id: str) -> bytes:
        return self._secrets.get(game_id) or await self.repository.server_seed(game_id)

    # --- wallets and records ------------------------------------------------------------------

    async def wallet(self, player_id: str) -> WalletState:
        entry = self._wallets.get(player_id)
        return entry.after if entry is not None else await self.repository.wallet(player_id)

    async def wallet_events(self, player_id: str, events: Sequence[WalletEventUnion]) -> None:
        entry = self._wallets.get(player_id)
        if entry is None:
            wallet = await self.repository.wallet(player_id)
            entry = self._wallets[player_id] = _Stream(wallet, wallet.version)
        for event in events:
            entry.events.append(event)
            entry.after = evolve_wallet(entry.after, event)

    async def player_record(self, player_id: str) -> PlayerRecord:
        """The person's record as loaded, with the rating this unit has changed it to."""
        if player_id not in self._records:
            self._records[player_id] = (await self.repository.player_record(player_id), [])
        loaded, recorded = self._records[player_id]
        changes = [e for e in recorded if isinstance(e, RatingChanged)]
        return msgspec.structs.replace(loaded, rating=changes[-1].after) if changes else loaded

    async def record(self, player_id: str, event: GameRecorded | RatingChanged) -> None:
        await self.player_record(player_id)
        self._records[player_id][1].append(event)

    def transfer(self, transfer: TransferUnion) -> None:
        """Coins the table owes a wallet: written to the table's outbox with the table's events
        and delivered once they are committed (`service.usecases.money`)."""
        self.transfers.append(transfer)

    # --- commit -------------------------------------------------------------------------------

    async def commit(
        self,
        metadata: dict[str, Any],
        *,
        command: tuple[str, str] | None = None,
        guard: TokenGuard | None = None,
    ) -> None:
        """Append everything in one transaction. Raises `ConcurrencyConflict` when any stream
        moved on since it was decided on (nothing is written), `DuplicateCommand` when
        `command` was processed before, `GuardRefused` when `guard` refused it."""
        keys = await self._seal_keys()
        await self.repository.ctx.store.append(
            *self._appends(keys),
            metadata=metadata,
            command=command,
            also=self._also(),
            guard=guard,
        )
        for game_id, entry in self._games.items():
            self.repository.games.put(game_id, entry.after)

    def games(self) -> list[GameState]:
        return [entry.after for entry in self._games.values()]

    async def _seal_keys(self) -> dict[str, bytes]:
        """The seal keys of the games whose hidden values this unit writes (chain v2): every
        game it appends to, and every game a seed event of the table seeds."""
        seeded = {
            e.game_id for e in self.table_events if isinstance(e, SeedContributed | SeedRevealed)
        }
        keys: dict[str, bytes] = {}
        for game_id in {*self._games, *seeded}:
            key = await self.repository.seal_key(game_id, self._secrets.get(game_id))
            if key is not None:
                keys[game_id] = key
        return keys

    def _appends(self, keys: dict[str, bytes]) -> list[StreamAppend]:
        appends = []
        if self.table_events and self.before is not None:
            appends.append(
                StreamAppend(
                    stream=stream("table", self.table.table_id),
                    expected_version=self.before.version,
                    events=[_new(table_event_type(e), e) for e in self.table_events],
                    seal_keys=keys,
                )
            )
        for game_id, game in self._games.items():
            appends.append(
                StreamAppend(
                    stream=stream("game", game_id),
                    expected_version=game.version,
                    events=[_new(event_type(e), e) for e in game.events],
                    seal_keys=keys,
                )
            )
        for player_id, wallet in self._wallets.items():
            appends.append(
                StreamAppend(
                    stream=stream("wallet", player_id),
                    expected_version=wallet.version,
                    events=[_new(wallet_event_type(e), e) for e in wallet.events],
                )
            )
        for player_id, (loaded, recorded) in self._records.items():
            appends.append(
                StreamAppend(
                    stream=stream("player", player_id),
                    expected_version=loaded.version,
                    events=[_new(tag_of(e), e) for e in recorded],
                )
            )
        return appends

    def _also(self) -> list[Row]:
        """The rows these events cause, committed with them: each prepared game's secret, a
        timer for every deadline set, each wallet's balance and holds, what the table owes
        wallets, each record's standing, and the table's lobby listing and members."""
        rows: list[Row] = [DealSecret(game_id=g, server_seed=s) for g, s in self._secrets.items()]
        rows += [
            Timer(game_id=game_id, deadline=event.deadline)
            for game_id, game in self._games.items()
            for event in game.events
            if isinstance(event, TurnStarted | StemChoiceRequired) and event.deadline is not None
        ]
        rows += [WalletBalance.of(player_id, w.after) for player_id, w in self._wallets.items()]
        rows += [  # each hold, for the sweeper of sit-downs that never finished
            StakeHold(
                player_id=player_id,
                hold_id=event.hold_id,
                table_id=event.table_id,
                amount=event.amount,
            )
            if isinstance(event, StakeHeld)
            else StakeHoldEnded(player_id=player_id, hold_id=event.hold_id)
            for player_id, w in self._wallets.items()
            for event in w.events
            if isinstance(event, StakeHeld | StakeReleased | StakeCommitted)
            and event.hold_id is not None
        ]
        rows += [OwedTransfer(transfer=t) for t in self.transfers]
        for player_id, (loaded, recorded) in self._records.items():
            stats = loaded.stats
            rating = loaded.rating
            for event in recorded:
                if isinstance(event, GameRecorded):
                    stats = record_game(stats, event.record)
                else:
                    rating = event.after
            rows.append(Standing.of(player_id, loaded.name, stats, rating))
        rows += [  # a game that ended, on the history of each person dealt into it
            GamesPlayed(
                game_id=game_id,
                table_id=game.after.table_id,
                mode=self.table.mode,
                rated=self.table.rated,
                people=tuple(
                    s.info.player_id
                    for s in game.after.seats
                    if not s.is_bee and s.info.player_id is not None
                ),
            )
            for game_id, game in self._games.items()
            if any(isinstance(e, GameEnded) for e in game.events)
        ]
        if self.table_events and self.table.opened and self.table.mode == "online":
            rows.append(LobbyListing.of(self.table))
        if self.table_events and self.table.opened:
            rows.append(TableMembers.of(self.table))
        return rows


def _new(type_: str, event: msgspec.Struct) -> NewEvent:
    """``event`` encoded once, to the bytes its row and its chain hash both use when they can
    be its canonical JSON (`encode_canonical`): as the events' codecs encode it otherwise."""
    data, canonical = encode_canonical(event)
    return NewEvent(type=type_, data=data, canonical=canonical)


def _game_id_of(events: Sequence[Event]) -> str:
    first = events[0]
    assert isinstance(first, DealCommitted | GameStarted)
    return first.game_id
