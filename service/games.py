"""Use cases: what a caller can do, each one load → decide → append → view.

This layer owns the streams: `player-<id>` (a guest's name), `table-<id>` (seats and the games
dealt there) and `game-<id>` (every move). It never hides a rule of its own: the rules are in
`service.domain.rules`, and what a caller may see is in `service.domain.views`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

import msgspec
import structlog

from service.domain import fairness
from service.domain.audit import FORMAT as EXPORT_FORMAT
from service.domain.audit import AuditReport, ExportedEvent, FairnessRecord, GameExport, audit
from service.domain.ledger import (
    CoinsGranted,
    GameRecord,
    PlayerStats,
    PotPaid,
    StakeCommitted,
    StakeReleased,
    WalletEventUnion,
    WalletState,
    decide_hold,
    decode_wallet_event,
    encode_wallet_event,
    evolve_wallet,
    record_game,
    reward,
    split_pot,
    wallet_event_type,
)
from service.domain.rules import errors as rule_errors
from service.domain.rules.bees import BEE_NAMES, bee_commands
from service.domain.rules.cards import MAX_PLAYERS, MIN_PLAYERS
from service.domain.rules.commands import (
    Command,
    ConfirmPick,
    ExpireClock,
    LeaveGame,
    StartGame,
    TakeStem,
    TapBee,
)
from service.domain.rules.engine import GameState, decide, evolve, fold, initial_state
from service.domain.rules.events import (
    ClockSettings,
    DealCommitted,
    DealProof,
    DealRevealed,
    EndReason,
    Event,
    GameEvent,
    GameStarted,
    SeatInfo,
    StemChoiceRequired,
    TurnStarted,
    decode_event,
    encode_event,
    event_type,
)
from service.domain.tables import (
    GameFinished,
    GameOpened,
    GamePrepared,
    PotFormed,
    PotSettled,
    Stake,
    TableClosedEvent,
    TableEvent,
    TableEventUnion,
    TableMode,
    TableOpened,
    TableState,
    TableStatus,
    decide_contribute,
    decide_fill_with_bees,
    decide_join,
    decide_leave,
    decide_open,
    decide_play_again,
    decide_start,
    decode_table_event,
    encode_table_event,
    evolve_table,
    should_start_when_full,
    table_event_type,
)
from service.domain.views import GameView, game_view, visible_event
from service.store.events import (
    ConcurrencyConflict,
    DuplicateCommand,
    EventStore,
    NewEvent,
    RecordedEvent,
    StreamAppend,
)
from service.store.pool import Pool
from service.store.projections import stats_row, wallet_row
from service.store.wakeups import Wakeups

log = structlog.get_logger(__name__)

Clock = Callable[[], datetime]
ServerSeeds = Callable[[], bytes]


def system_clock() -> datetime:
    return datetime.now(UTC)


def secure_server_seed() -> bytes:
    """A fresh 32-byte server seed per game, from the operating system's CSPRNG."""
    return fairness.new_server_seed()


# --- errors of this layer (the rules' own errors pass through unchanged) ---------------------


class NotFound(Exception):
    pass


class Unauthorized(Exception):
    pass


class Forbidden(Exception):
    pass


class Conflict(Exception):
    """The request is well formed but clashes with the table's state (not a game rule)."""


# --- what callers send and get ---------------------------------------------------------------


class Player(msgspec.Struct, frozen=True):
    player_id: str
    name: str
    registered: bool = False  # an account (not only a guest): needed for buy-in tables


class Move(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True):
    """A move by the caller's own seat. `move_id` is chosen by the client: sending the same move
    again returns the same result and writes nothing."""

    move_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class Tap(Move, frozen=True, tag="tap"):
    bee: int


class Confirm(Move, frozen=True, tag="confirm"):
    bee: int | None = None


class ChooseStem(Move, frozen=True, tag="take_stem"):
    stem: int


AnyMove = Tap | Confirm | ChooseStem


class TableView(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    mode: TableMode
    status: TableStatus  # open (waiting for players), playing, between_games, closed
    host: str  # the host's player id
    capacity: int
    stake: int  # coins each person puts in; 0 = a free table
    clock: ClockSettings | None  # the turn clock of this table's games (None: untimed)
    seats: tuple[SeatInfo, ...]  # in seat order; a game dealt now numbers its seats the same
    you: int | None  # your seat at the table, if you sit at it
    # Every game dealt here, oldest first; the last is the current one. A new game (the table
    # filled, the host started, or play again) appears here and as `game_opened` on the
    # table's event stream.
    games: tuple[str, ...]
    game: GameView | None  # your view of the current game, if you were dealt into it
    # The game that will be dealt next and the server's commitment to its deal, published
    # before anyone contributes a seed (docs/fairness.md); null while a game is being played.
    next_game: NextGame | None = None
    your_seed: str | None = None  # the seed you contributed to the next game, if any


class NextGame(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    commitment: str  # SHA-256, hex
    seeds: int  # how many people have contributed a seed so far


class LobbyEntry(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    host_name: str
    seats_taken: int
    people: int
    capacity: int
    stake: int
    status: TableStatus
    opened_at: datetime


class VisibleEvent(msgspec.Struct, frozen=True, kw_only=True):
    version: int  # position in the game's log, from 1
    type: str
    recorded_at: datetime
    data: dict[str, Any]


def _stream(kind: str, ident: str) -> str:
    return f"{kind}-{ident}"


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class _StateCache:
    """Recently used game states, so a move folds only the events it has not seen yet.

    Safe with several instances: a cached state is only a starting point, the store is always
    asked for what came after it, and every append checks the version it was decided on."""

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._states: OrderedDict[str, GameState] = OrderedDict()

    def get(self, game_id: str) -> GameState | None:
        state = self._states.get(game_id)
        if state is not None:
            self._states.move_to_end(game_id)
        return state

    def put(self, game_id: str, state: GameState) -> None:
        self._states[game_id] = state
        self._states.move_to_end(game_id)
        while len(self._states) > self.capacity:
            self._states.popitem(last=False)


def play(state: GameState, command: Command) -> tuple[GameState, list[Event]]:
    """Decide a command, then let every bee player that has to pick now pick."""
    events: list[Event] = []

    def apply(cmd: Command) -> None:
        nonlocal state
        for event in decide(cmd, state):
            events.append(event)
            state = evolve(state, event)

    apply(command)
    while picks := bee_commands(state):
        for pick in picks:
            if state.phase == "picking" and state.seat(pick.seat).confirmed is None:
                apply(msgspec.structs.replace(pick, at=command.at))
    return state, events


class GameService:
    MAX_RETRIES = 5

    def __init__(
        self,
        store: EventStore,
        pool: Pool,
        *,
        clock: Clock = system_clock,
        server_seeds: ServerSeeds = secure_server_seed,
        wakeups: Wakeups | None = None,
    ) -> None:
        self.store = store
        self.wakeups = wakeups
        self.pool = pool
        self.clock = clock
        self.server_seeds = server_seeds
        self._games = _StateCache()

    # --- players ------------------------------------------------------------------------------

    async def create_guest(self, name: str) -> tuple[Player, str]:
        player = Player(player_id=str(uuid.uuid4()), name=name)
        token = secrets.token_urlsafe(32)
        joined = NewEvent(
            type="guest_created",
            data=msgspec.json.encode({"player_id": player.player_id, "name": name}),
        )
        await self.store.append(
            StreamAppend(
                stream=_stream("player", player.player_id), expected_version=0, events=[joined]
            ),
            metadata={"actor": player.player_id},
        )
        # The token is written after the player exists, so a failure leaves no usable token.
        await self.pool.execute(
            "insert into access_tokens (token_hash, player_id, name, expires_at)"
            " values ($1, $2, $3, $4)",
            token_hash(token),
            player.player_id,
            name,
            self.clock() + TOKEN_LIFETIME,
        )
        return player, token

    async def authenticate(self, token: str) -> Player:
        """The player behind a bearer token, if it is known, unexpired and not revoked. Not
        cached: a logout on any instance must stop the token everywhere at once."""
        row = await self.pool.fetchrow(_AUTHENTICATE, token_hash(token), self.clock())
        if row is None:
            raise Unauthorized("The bearer token is not known, has expired or was revoked.")
        return Player(player_id=row["player_id"], name=row["name"], registered=row["registered"])

    # --- tables -------------------------------------------------------------------------------

    async def create_solo_table(self, player: Player, players: int) -> TableView:
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise rule_errors.InvalidSeats(f"A table has {MIN_PLAYERS} to {MAX_PLAYERS} seats.")
        table_id = str(uuid.uuid4())
        seats = (
            SeatInfo(seat=1, name=player.name, kind="person", player_id=player.player_id),
            *(SeatInfo(seat=i + 2, name=BEE_NAMES[i], kind="bee") for i in range(players - 1)),
        )
        opened = TableOpened(
            table_id=table_id, mode="solo", host=player.player_id, seats=seats, capacity=players
        )
        table, game = await self._save(player, TableState(), [opened], deal=True, cause="open")
        return self._table_view(table, game, player)

    async def create_table(
        self, player: Player, capacity: int, stake: int, clock: ClockSettings | None
    ) -> TableView:
        table_id = str(uuid.uuid4())
        opened = decide_open(
            table_id,
            player.player_id,
            player.name,
            capacity,
            stake,
            clock,
            registered=player.registered,
        )

        async def hold(batch: _Batch) -> None:
            await self._hold_stake(batch, player, table_id, stake)

        table, game = await self._save(player, TableState(), opened, cause="open", money=hold)
        return self._table_view(table, game, player)

    async def join_table(self, player: Player, table_id: str, seed: str | None) -> TableView:
        async def change(table: TableState) -> tuple[TableState, GameState | None]:
            joined = decide_join(table, player.player_id, player.name, registered=player.registered)
            events = joined + _seed(fold_table_from(table, joined), player, seed)
            full = should_start_when_full(fold_table_from(table, events))

            async def hold(batch: _Batch) -> None:
                await self._hold_stake(batch, player, table.table_id, table.stake)

            return await self._save(player, table, events, deal=full, cause="join", money=hold)

        return await self._table_change(player, table_id, change)

    async def start_game(self, player: Player, table_id: str, seed: str | None) -> TableView:
        async def change(table: TableState) -> tuple[TableState, GameState | None]:
            decide_start(table, player.player_id)
            events = _seed(table, player, seed)
            return await self._save(player, table, events, deal=True, cause="start")

        return await self._table_change(player, table_id, change)

    async def fill_with_bees(self, player: Player, table_id: str, seed: str | None) -> TableView:
        async def change(table: TableState) -> tuple[TableState, GameState | None]:
            bees = decide_fill_with_bees(table, player.player_id, BEE_NAMES)
            events = bees + _seed(table, player, seed)
            return await self._save(player, table, events, deal=True, cause="fill_with_bees")

        return await self._table_change(player, table_id, change)

    async def play_again(self, player: Player, table_id: str, seed: str | None) -> TableView:
        async def change(table: TableState) -> tuple[TableState, GameState | None]:
            decide_play_again(table, player.player_id)
            events = _seed(table, player, seed)
            return await self._save(player, table, events, deal=True, cause="play_again")

        return await self._table_change(player, table_id, change)

    async def contribute_seed(self, player: Player, table_id: str, seed: str) -> TableView:
        async def change(table: TableState) -> tuple[TableState, GameState | None]:
            contributed = decide_contribute(table, player.player_id, seed)
            return await self._save(player, table, contributed, cause="contribute_seed")

        return await self._table_change(player, table_id, change)

    async def leave_table(self, player: Player, table_id: str) -> TableView:
        async def change(table: TableState) -> tuple[TableState, GameState | None]:
            left = decide_leave(table, player.player_id)
            game_change = None
            if table.playing and table.current_game is not None:
                game = await self._load_game(table.current_game)
                seat = self._seat_in(game, player)
                if seat is not None and game.seat(seat).playing and game.phase != "ended":
                    game_change = (game, play(game, LeaveGame(seat=seat, at=self.clock()))[1])

            async def release(batch: _Batch) -> None:
                if table.holds_stakes and not table.playing:  # leaving before the start
                    wallet = await self._load_wallet(batch, player.player_id)
                    back = StakeReleased(table_id=table.table_id, amount=table.stake)
                    batch.wallet_events(player.player_id, wallet, [back])

            return await self._save(
                player, table, left, game_change=game_change, cause="leave", money=release
            )

        return await self._table_change(player, table_id, change)

    async def get_table(self, player: Player, table_id: str) -> TableView:
        table = await self._load_table(table_id)
        if table.mode == "solo":
            self._require_seated(table, player)
        state = await self._load_game(table.current_game) if table.current_game else None
        return self._table_view(table, state, player)

    async def list_tables(
        self, *, stake: str, has_free_seat: bool, limit: int, offset: int
    ) -> list[LobbyEntry]:
        rows = await self.pool.fetch(
            """
            select table_id, host_name, seats_taken, people, capacity, stake, status, opened_at
              from lobby
             where status <> 'closed'
               and ($1 = 'any' or ($1 = 'free') = (stake = 0))
               and (not $2 or seats_taken < capacity)
             order by opened_at desc, table_id
             limit $3 offset $4
            """,
            stake,
            has_free_seat,
            limit,
            offset,
        )
        return [LobbyEntry(**dict(row)) for row in rows]

    async def _table_change(
        self,
        player: Player,
        table_id: str,
        change: Callable[[TableState], Awaitable[tuple[TableState, GameState | None]]],
    ) -> TableView:
        for _ in range(self.MAX_RETRIES):
            table = await self._load_table(table_id)
            try:
                new_table, game = await change(table)
            except ConcurrencyConflict:
                continue  # someone changed the table or its game first: decide again
            if game is None and new_table.current_game is not None:
                game = await self._load_game(new_table.current_game)
            return self._table_view(new_table, game, player)
        raise Conflict("The table changed too often while deciding; try again.")

    async def _save(
        self,
        player: Player,
        before: TableState,
        table_events: Sequence[TableEventUnion],
        *,
        deal: bool = False,
        game_change: tuple[GameState, list[Event]] | None = None,
        cause: str,
        money: Callable[[_Batch], Awaitable[None]] | None = None,
    ) -> tuple[TableState, GameState | None]:
        """Append table events, and the games they prepare, start or change, in one
        transaction.

        A new table gets its first game prepared (its deal committed). `deal`: deal the prepared
        game to the table's seats. `game_change`: the current game's state and the events a
        table change caused in it (a person leaving); if they end it, the game is concluded."""
        batch = _Batch(before)
        closing = [e for e in table_events if isinstance(e, TableClosedEvent)]
        for event in table_events:
            if not isinstance(event, TableClosedEvent):
                batch.table_event(event)
        if before.version == 0:
            self._prepare(batch)
        if money is not None:
            await money(batch)
        if game_change is not None:
            game_before, game_events = game_change
            batch.game_events(game_before, game_events)
            await self._conclude_if_ended(batch, game_before.game_id, prepare=not closing)
        for event in closing:
            batch.table_event(event)
        if deal:
            await self._deal(batch)
        await self._commit(batch, {"actor": player.player_id, "causation": cause})
        return batch.table, batch.current_game()

    def _prepare(self, batch: _Batch) -> None:
        """Commit to the next game's deal: a fresh secret seed, kept out of the log until the
        game ends, and its commitment published now, before anyone can contribute a seed."""
        game_id = str(uuid.uuid4())
        seed = self.server_seeds()
        commitment = fairness.commitment(game_id, seed).hex()
        batch.table_event(GamePrepared(game_id=game_id, commitment=commitment))
        committed = DealCommitted(
            game_id=game_id, table_id=batch.table.table_id, commitment=commitment
        )
        batch.game_events(initial_state, [committed])
        batch.secrets[game_id] = seed
        batch.also.append((_INSERT_SECRET, (game_id, seed)))

    async def _deal(self, batch: _Batch) -> None:
        """Deal the prepared game to the seats at the table, from the server seed and every
        seat's contributed seed (docs/fairness.md)."""
        table = batch.table
        game_id, commitment = table.next_game, table.next_commitment
        assert game_id is not None and commitment is not None
        base = batch.game_state(game_id) or await self._load_game(game_id)
        seats = table.seat_infos()
        seeds = [table.seed_of(s.player_id) if s.kind == "person" else None for s in seats]
        server_seed = await self._server_seed(batch, game_id)
        published = fairness.derive(
            game_id,
            server_seed,
            [bytes.fromhex(seed) if seed is not None else None for seed in seeds],
        )
        assert published.commitment.hex() == commitment
        proof = DealProof(
            commitment=commitment,
            client_seeds=tuple(seeds),
            transcript=published.transcript.hex(),
            fingerprint=published.fingerprint.hex(),
        )
        if table.holds_stakes:  # the first deal of a buy-in table: the stakes go into the pot
            stakes = []
            for seat in seats:
                if seat.player_id is not None and seat.kind == "person":
                    wallet = await self._load_wallet(batch, seat.player_id)
                    committed = StakeCommitted(
                        table_id=table.table_id, game_id=game_id, amount=table.stake
                    )
                    batch.wallet_events(seat.player_id, wallet, [committed])
                    stakes.append(Stake(player_id=seat.player_id, amount=table.stake))
            batch.table_event(PotFormed(game_id=game_id, stakes=tuple(stakes)))
        batch.table_event(GameOpened(game_id=game_id, number=len(table.games) + 1))
        start = StartGame(
            game_id=game_id,
            table_id=table.table_id,
            seats=seats,
            deck_order=published.deck_order,
            clock=table.clock,
            proof=proof,
            at=self.clock(),
        )
        batch.game_events(base, play(base, start)[1])

    async def _conclude_if_ended(self, batch: _Batch, game_id: str, *, prepare: bool) -> None:
        """When a game has ended: publish its deal, tell the table, and prepare the next game
        (so people can contribute seeds to it before play again)."""
        game = batch.game_state(game_id)
        if game is None or game.phase != "ended" or game.server_seed is not None:
            return
        if game.commitment is not None and game.proof is not None:
            seed = await self._server_seed(batch, game_id)
            order = fairness.deck_order(seed, bytes.fromhex(game.proof.transcript), len(game.seats))
            batch.game_events(game, [DealRevealed(server_seed=seed.hex(), deck_order=order)])
        await self._settle_pot(batch, game)
        await self._reward(batch, game)
        batch.table_event(GameFinished(game_id=game_id, reason=_reason(game)))
        if prepare and not batch.table.closed:
            self._prepare(batch)

    # --- coins, XP and badges -----------------------------------------------------------------

    async def _hold_stake(self, batch: _Batch, player: Player, table_id: str, stake: int) -> None:
        if stake > 0:
            wallet = await self._load_wallet(batch, player.player_id)
            batch.wallet_events(player.player_id, wallet, decide_hold(wallet, table_id, stake))

    async def _settle_pot(self, batch: _Batch, game: GameState) -> None:
        """Pay the pot: to the winners (ties split it, remainders to the first in seat order),
        or back to every payer, leavers included, when the game was abandoned."""
        stakes = batch.table.pot
        if not stakes:
            return
        if game.end_reason == "abandoned":
            payouts = [(s.player_id, s.amount) for s in stakes]
            reason: Literal["won", "refund"] = "refund"
        else:
            winners = [
                pid for n in game.winners if (pid := game.seat(n).info.player_id) is not None
            ]
            payouts = split_pot(sum(s.amount for s in stakes), winners)
            reason = "won"
        for player_id, amount in payouts:
            wallet = await self._load_wallet(batch, player_id)
            paid = PotPaid(game_id=game.game_id, amount=amount, reason=reason)
            batch.wallet_events(player_id, wallet, [paid])
        batch.table_event(
            PotSettled(
                game_id=game.game_id,
                payouts=tuple(Stake(player_id=p, amount=a) for p, a in payouts),
                reason=reason,
            )
        )

    async def _reward(self, batch: _Batch, game: GameState) -> None:
        """Coins and XP for every person with an account who finished an online game (more
        for the winners), and the game on their record; leavers and solo games earn nothing."""
        if batch.table.mode != "online" or game.end_reason not in (
            "finished",
            "last_person_standing",
        ):
            return
        finishers = {s.info.player_id: s for s in game.seats if not s.is_bee and s.playing}
        rows = await self.pool.fetch(
            "select player_id from accounts where player_id = any($1::text[])",
            [pid for pid in finishers if pid is not None],
        )
        for row in rows:
            seat = finishers[row["player_id"]]
            won = seat.number in game.winners
            coins, xp = reward(won)
            wallet = await self._load_wallet(batch, row["player_id"])
            grant = CoinsGranted(amount=coins, reason="game_reward", game_id=game.game_id)
            batch.wallet_events(row["player_id"], wallet, [grant])
            record = GameRecord(
                game_id=game.game_id,
                stings=seat.stings,
                won=won,
                biggest_take=seat.biggest_take,
                xp=xp,
            )
            loaded = await self._load_record(row["player_id"])
            batch.record(row["player_id"], loaded, GameRecorded(record=record))

    async def _load_wallet(self, batch: _Batch, player_id: str) -> WalletState:
        known = batch.wallet_state(player_id)
        if known is not None:
            return known
        wallet = WalletState()
        for r in await self.store.read_stream(_stream("wallet", player_id)):
            wallet = evolve_wallet(wallet, decode_wallet_event(r.data))
        return wallet

    async def _load_record(self, player_id: str) -> _PlayerRecord:
        return player_record(await self.store.read_stream(_stream("player", player_id)))

    async def _server_seed(self, batch: _Batch, game_id: str) -> bytes:
        seed = batch.secrets.get(game_id)
        if seed is None:
            seed = await self.pool.fetchval(
                "select server_seed from deal_secrets where game_id = $1", game_id
            )
        assert isinstance(seed, bytes), f"no server seed for game {game_id}"
        return seed

    async def _commit(
        self,
        batch: _Batch,
        metadata: dict[str, Any],
        *,
        command: tuple[str, str] | None = None,
    ) -> None:
        await self.store.append(
            *batch.appends(),
            metadata=metadata,
            command=command,
            also=[
                *batch.also,
                *batch.timers(),
                *batch.projection_rows(),
                *(_lobby_upsert(batch.table) if batch.table_events else []),
            ],
        )
        for state in batch.game_states():
            self._games.put(state.game_id, state)

    def _table_view(self, table: TableState, state: GameState | None, player: Player) -> TableView:
        seat = table.seat_of(player.player_id)
        game = None
        if state is not None:
            game_seat = self._seat_in(state, player)
            # Only those dealt into the game see it from the table; never another's hand.
            game = game_view(state, game_seat, self.clock()) if game_seat is not None else None
        return TableView(
            table_id=table.table_id,
            mode=table.mode,
            status=table.status,
            host=table.host,
            capacity=table.capacity,
            stake=table.stake,
            clock=table.clock,
            seats=table.seat_infos(),
            you=seat,
            games=table.games,
            game=game,
            next_game=(
                NextGame(
                    game_id=table.next_game,
                    commitment=table.next_commitment,
                    seeds=len(table.seeds),
                )
                if table.next_game is not None and table.next_commitment is not None
                else None
            ),
            your_seed=table.seed_of(player.player_id),
        )

    async def _load_table(self, table_id: str) -> TableState:
        recorded = await self.store.read_stream(_stream("table", table_id))
        if not recorded:
            raise NotFound(f"No table {table_id}.")
        return fold_table_from(TableState(), [decode_table_event(r.data) for r in recorded])

    @staticmethod
    def _require_seated(table: TableState, player: Player) -> int:
        seat = table.seat_of(player.player_id)
        if seat is None:
            raise Forbidden("You do not sit at this table.")
        return seat

    # --- games --------------------------------------------------------------------------------

    async def _load_game(self, game_id: str) -> GameState:
        state = self._games.get(game_id) or initial_state
        recorded = await self.store.read_stream(
            _stream("game", game_id), after_version=state.version
        )
        if not recorded and state.version == 0:
            raise NotFound(f"No game {game_id}.")
        state = fold((decode_event(r.data) for r in recorded), state)
        self._games.put(game_id, state)
        return state

    async def _state_at(self, game_id: str, version: int) -> GameState:
        recorded = await self.store.read_stream(_stream("game", game_id), up_to_version=version)
        return fold(decode_event(r.data) for r in recorded)

    def _seat_in(self, state: GameState, player: Player) -> int | None:
        for seat in state.seats:
            if seat.info.player_id == player.player_id:
                return seat.number
        return None

    async def get_game(self, player: Player, game_id: str) -> GameView:
        state = await self._load_game(game_id)
        seat = self._seat_in(state, player)
        if seat is None:
            raise Forbidden("You do not sit at this game.")
        return game_view(state, seat, self.clock())

    async def submit_move(self, player: Player, game_id: str, move: AnyMove) -> GameView:
        seat: int | None = None

        def command(state: GameState) -> Command:
            nonlocal seat
            seat = self._seat_in(state, player)
            if seat is None:
                raise Forbidden("You do not sit at this game.")
            return _command_for(move, seat, self.clock())

        state = await self._decide(
            game_id,
            command,
            command_id=f"{player.player_id}:{move.move_id}",
            metadata={"causation": move.__struct_config__.tag, "actor": player.player_id},
        )
        return game_view(state, seat, self.clock())

    async def expire_clock(self, game_id: str, deadline: datetime) -> GameState:
        """A stored timer is due: let the clock play (a no-op if the game moved on). Its command
        id names the deadline, so a timer claimed twice (a crash between claim and delete, two
        instances) still changes the game once."""
        return await self._decide(
            game_id,
            lambda state: ExpireClock(deadline=deadline, at=self.clock()),
            command_id=f"clock:{deadline.isoformat()}",
            metadata={"causation": "expire_clock", "actor": "clock"},
        )

    async def _decide(
        self,
        game_id: str,
        command_for: Callable[[GameState], Command],
        *,
        command_id: str,
        metadata: dict[str, Any],
    ) -> GameState:
        """Load → decide (and let bee players pick) → append, retried when someone else moved
        first. Returns the state after the command, or after its first run if it was a
        repeat."""
        stream = _stream("game", game_id)
        for _ in range(self.MAX_RETRIES):
            state = await self._load_game(game_id)
            command = command_for(state)
            done = await self.store.command_version(stream, command_id)
            if done is not None:
                return await self._state_at(game_id, done)
            new_state, events = play(state, command)
            if not events:
                return state  # nothing happens (a clock that fired after the game moved on)
            batch = _Batch(None)
            if new_state.phase == "ended":
                # The table learns in the same transaction, so play again sees it at once.
                batch = _Batch(await self._load_table(new_state.table_id))
            batch.game_events(state, events)
            await self._conclude_if_ended(batch, game_id, prepare=True)
            try:
                await self._commit(
                    batch, {"command_id": command_id, **metadata}, command=(stream, command_id)
                )
            except ConcurrencyConflict:
                continue  # someone moved first: decide again on the new state
            except DuplicateCommand as duplicate:
                return await self._state_at(game_id, duplicate.version)
            final = batch.game_state(game_id)
            assert final is not None
            return final
        raise Conflict("The game changed too often while deciding; try again.")

    # --- the turn clock -----------------------------------------------------------------------

    async def fire_due_timers(self, limit: int = 50) -> int:
        """Claim the timers that are due by this service's clock and fire them. Several
        instances may call this at once: SKIP LOCKED gives each timer to one of them, and a
        timer that fires twice anyway (claimed again after a crash) changes its game once."""
        now = self.clock()
        fired = 0
        async with self.pool.acquire() as conn, conn.transaction():
            due = await conn.fetch(_CLAIM_TIMERS, now, limit)
            for row in due:
                try:
                    await self.expire_clock(row["game_id"], row["deadline"])
                except rule_errors.RuleViolation as refused:  # a bug, not a reason to retry
                    log.error("timer refused", game_id=row["game_id"], error=str(refused))
                await conn.execute(_DELETE_TIMER, row["game_id"], row["deadline"])
                fired += 1
        return fired

    async def next_deadline(self) -> datetime | None:
        deadline: datetime | None = await self.pool.fetchval("select min(deadline) from timers")
        return deadline

    async def list_game_events(
        self, player: Player, game_id: str, after: int, limit: int
    ) -> list[VisibleEvent]:
        state = await self._load_game(game_id)
        seat = self._seat_in(state, player)
        if seat is None:
            raise Forbidden("You do not sit at this game.")
        recorded = await self.store.read_stream(
            _stream("game", game_id), after_version=after, up_to_version=after + limit
        )
        return visible_events(recorded, seat, game_over=state.phase == "ended")

    async def export_game(self, game_id: str) -> GameExport:
        """The whole finished game: its events with their hashes, and the revealed deal.
        Anyone may export a game once it is over; before that it would give hands away."""
        state = await self._load_game(game_id)
        if state.phase != "ended":
            raise rule_errors.GameNotOver("A game is exported once it has ended.")
        recorded = await self.store.read_stream(_stream("game", game_id))
        events = [decode_event(r.data) for r in recorded]
        started = next(e for e in events if isinstance(e, GameStarted))
        revealed = next((e for e in events if isinstance(e, DealRevealed)), None)
        if started.proof is None or revealed is None:
            raise rule_errors.GameNotOver("This game was dealt before fair deals were recorded.")
        proof = started.proof
        return GameExport(
            format=EXPORT_FORMAT,
            game_id=game_id,
            table_id=state.table_id,
            events=tuple(
                ExportedEvent(
                    version=r.version,
                    type=r.type,
                    recorded_at=r.recorded_at,
                    hash=r.hash.hex(),
                    data=msgspec.json.decode(r.data),
                )
                for r in recorded
            ),
            fairness=FairnessRecord(
                scheme=proof.scheme,
                commitment=proof.commitment,
                client_seeds=proof.client_seeds,
                transcript=proof.transcript,
                fingerprint=proof.fingerprint,
                server_seed=revealed.server_seed,
                deck_order=revealed.deck_order,
                hands=started.hands,
                stems=started.stems,
            ),
        )

    async def verify_game(self, game_id: str) -> AuditReport:
        """The server's own verdict on a finished game: the same audit an outsider runs on the
        export, over the events as stored now."""
        return audit(msgspec.to_builtins(await self.export_game(game_id)))

    async def follow_game(
        self, player: Player, game_id: str, after: int, *, heartbeat: float
    ) -> AsyncIterator[VisibleEvent | None]:
        """The caller's live view of the game log after version `after`: each event as
        `list_game_events` would show it at that moment, and `None` for a heartbeat tick.

        Checks access now (so 403/404 come before any streaming); the iterator ends after
        `game_ended`."""
        state = await self._load_game(game_id)
        seat = self._seat_in(state, player)
        if seat is None:
            raise Forbidden("You do not sit at this game.")

        def render(recorded: Sequence[RecordedEvent], over: bool) -> list[VisibleEvent]:
            return visible_events(recorded, seat, game_over=over)

        return self._follow(
            _stream("game", game_id),
            after,
            heartbeat,
            render,
            last_type="game_ended",
            already_over=state.version if state.phase == "ended" else None,
        )

    async def follow_table(
        self, player: Player, table_id: str, after: int, *, heartbeat: float
    ) -> AsyncIterator[VisibleEvent | None]:
        """A table's events (seats taken and freed, host changes, games opened and finished)
        after version `after`; they hide nothing. Ends after `table_closed`."""
        table = await self._load_table(table_id)
        if table.mode == "solo":
            self._require_seated(table, player)

        def render(recorded: Sequence[RecordedEvent], over: bool) -> list[VisibleEvent]:
            return [
                VisibleEvent(
                    version=r.version,
                    type=r.type,
                    recorded_at=r.recorded_at,
                    data=msgspec.to_builtins(decode_table_event(r.data)),
                )
                for r in recorded
            ]

        return self._follow(
            _stream("table", table_id),
            after,
            heartbeat,
            render,
            last_type="table_closed",
            already_over=table.version if table.closed else None,
        )

    async def _follow(
        self,
        stream: str,
        after: int,
        heartbeat: float,
        render: Callable[[Sequence[RecordedEvent], bool], list[VisibleEvent]],
        *,
        last_type: str,
        already_over: int | None,
    ) -> AsyncIterator[VisibleEvent | None]:
        """Re-read `stream` from our own last version after every wake-up (a NOTIFY from
        whichever process appended) and on every heartbeat tick, in case one was missed."""
        last = after
        with (
            self.wakeups.subscribe(stream)
            if self.wakeups is not None
            else contextlib.nullcontext(asyncio.Event())
        ) as woken:
            while already_over is None or last < already_over:
                woken.clear()  # before reading, so a commit during the read wakes us again
                recorded = await self.store.read_stream(stream, after_version=last)
                if recorded:
                    over = any(r.type == last_type for r in recorded) or already_over is not None
                    for event in render(recorded, over):
                        yield event
                    last = recorded[-1].version
                    if over:
                        return
                    continue
                try:
                    await asyncio.wait_for(woken.wait(), heartbeat)
                except TimeoutError:
                    yield None


def visible_events(
    recorded: Sequence[RecordedEvent], seat: int | None, game_over: bool
) -> list[VisibleEvent]:
    return [
        VisibleEvent(
            version=r.version,
            type=r.type,
            recorded_at=r.recorded_at,
            data=visible_event(decode_event(r.data), seat, game_over),
        )
        for r in recorded
    ]


def _command_for(move: AnyMove, seat: int, at: datetime) -> Command:
    match move:
        case Tap():
            return TapBee(seat=seat, bee=move.bee, at=at)
        case Confirm():
            return ConfirmPick(seat=seat, bee=move.bee, at=at)
        case ChooseStem():
            return TakeStem(seat=seat, stem=move.stem, at=at)
    raise AssertionError(f"unknown move {move!r}")  # pragma: no cover


TOKEN_LIFETIME = timedelta(days=30)
_AUTHENTICATE = """
select t.player_id, coalesce(a.name, t.name) as name, a.player_id is not null as registered
  from access_tokens t
  left join accounts a on a.player_id = t.player_id
 where t.token_hash = $1
   and t.revoked_at is null
   and (t.expires_at is null or t.expires_at > $2)
"""


class GameRecorded(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="game_recorded"
):
    """A finished online game on a person's record (stream `player-<id>`): stats, XP and
    badges are folds of these."""

    record: GameRecord


class _PlayerRecord(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    name: str
    stats: PlayerStats


def player_record(recorded: Sequence[RecordedEvent]) -> _PlayerRecord:
    """Fold a `player-<id>` stream: the name it goes by and the stats of its recorded games.
    The same fold rebuilds the `player_stats` projection from scratch."""
    name, stats = "", PlayerStats()
    for r in recorded:
        if r.type == "game_recorded":
            stats = record_game(stats, msgspec.json.decode(r.data, type=GameRecorded).record)
        else:
            name = _PLAYER_EVENT.decode(r.data).get("name", name)
    return _PlayerRecord(version=len(recorded), name=name, stats=stats)


_encode = msgspec.json.Encoder().encode
_PLAYER_EVENT = msgspec.json.Decoder(dict[str, Any])


_INSERT_SECRET = "insert into deal_secrets (game_id, server_seed) values ($1, $2)"
_INSERT_TIMER = "insert into timers (game_id, deadline) values ($1, $2) on conflict do nothing"
_CLAIM_TIMERS = """
select game_id, deadline from timers
 where deadline <= $1
 order by deadline
 limit $2
   for update skip locked
"""
_DELETE_TIMER = "delete from timers where game_id = $1 and deadline = $2"


class _Batch:
    """Everything one request appends in one transaction: table events, the events of each
    game stream it touches (with the state they were decided on, whose version is the expected
    one), server seeds to keep, and projection rows."""

    def __init__(self, table: TableState | None) -> None:
        self.before = table
        self.table = table or TableState()
        self.table_events: list[TableEventUnion] = []
        self.secrets: dict[str, bytes] = {}
        self.also: list[tuple[str, tuple[Any, ...]]] = []
        self._games: dict[str, tuple[GameState, list[Event], GameState]] = {}
        self._wallets: dict[str, tuple[WalletState, list[WalletEventUnion], WalletState]] = {}
        self._records: dict[str, tuple[int, PlayerStats, str, list[GameRecorded]]] = {}

    def wallet_events(
        self, player_id: str, before: WalletState, events: Sequence[WalletEventUnion]
    ) -> None:
        first, so_far, after = self._wallets.get(player_id, (before, [], before))
        for event in events:
            after = evolve_wallet(after, event)
        self._wallets[player_id] = (first, [*so_far, *events], after)

    def wallet_state(self, player_id: str) -> WalletState | None:
        entry = self._wallets.get(player_id)
        return entry[2] if entry is not None else None

    def record(self, player_id: str, loaded: _PlayerRecord, event: GameRecorded) -> None:
        version, stats, name, so_far = self._records.get(
            player_id, (loaded.version, loaded.stats, loaded.name, [])
        )
        self._records[player_id] = (
            version,
            record_game(stats, event.record),
            name,
            [*so_far, event],
        )

    def projection_rows(self) -> list[tuple[str, tuple[Any, ...]]]:
        rows = [wallet_row(player_id, after) for player_id, (_, _, after) in self._wallets.items()]
        rows += [
            stats_row(player_id, name, stats)
            for player_id, (_, stats, name, _) in self._records.items()
        ]
        return rows

    def table_event(self, event: TableEventUnion) -> None:
        self.table_events.append(event)
        self.table = evolve_table(self.table, event)

    def game_events(self, before: GameState, events: Sequence[Event]) -> None:
        game_id = before.game_id or _game_id_of(events)
        if game_id in self._games:
            first, so_far, after = self._games[game_id]
            self._games[game_id] = (first, [*so_far, *events], fold(events, after))
        else:
            self._games[game_id] = (before, list(events), fold(events, before))

    def game_state(self, game_id: str) -> GameState | None:
        entry = self._games.get(game_id)
        return entry[2] if entry is not None else None

    def game_states(self) -> list[GameState]:
        return [after for _, _, after in self._games.values()]

    def current_game(self) -> GameState | None:
        current = self.table.current_game
        return self.game_state(current) if current is not None else None

    def timers(self) -> list[tuple[str, tuple[Any, ...]]]:
        """A durable timer for every deadline these events set (the turn clock)."""
        return [
            (_INSERT_TIMER, (game_id, event.deadline))
            for game_id, (_, events, _) in self._games.items()
            for event in events
            if isinstance(event, TurnStarted | StemChoiceRequired) and event.deadline is not None
        ]

    def appends(self) -> list[StreamAppend]:
        result = []
        if self.table_events and self.before is not None:
            result.append(
                StreamAppend(
                    stream=_stream("table", self.table.table_id),
                    expected_version=self.before.version,
                    events=[_table_new_event(e) for e in self.table_events],
                )
            )
        for game_id, (before, events, _) in self._games.items():
            result.append(
                StreamAppend(
                    stream=_stream("game", game_id),
                    expected_version=before.version,
                    events=[_game_new_event(e) for e in events],
                )
            )
        for player_id, (wallet, wallet_events, _) in self._wallets.items():
            result.append(
                StreamAppend(
                    stream=_stream("wallet", player_id),
                    expected_version=wallet.version,
                    events=[
                        NewEvent(type=wallet_event_type(e), data=encode_wallet_event(e))
                        for e in wallet_events
                    ],
                )
            )
        for player_id, (version, _, _, recorded) in self._records.items():
            result.append(
                StreamAppend(
                    stream=_stream("player", player_id),
                    expected_version=version,
                    events=[NewEvent(type="game_recorded", data=_encode(e)) for e in recorded],
                )
            )
        return result


def _seed(table: TableState, player: Player, seed: str | None) -> list[TableEventUnion]:
    return decide_contribute(table, player.player_id, seed) if seed is not None else []


def fold_table_from(state: TableState, events: Iterable[TableEventUnion]) -> TableState:
    for event in events:
        state = evolve_table(state, event)
    return state


def _reason(game: GameState) -> EndReason:
    assert game.end_reason is not None
    return game.end_reason


def _game_append(before: GameState, events: Sequence[Event]) -> StreamAppend:
    return StreamAppend(
        stream=_stream("game", before.game_id or _game_id_of(events)),
        expected_version=before.version,
        events=[_game_new_event(e) for e in events],
    )


def _game_id_of(events: Sequence[Event]) -> str:
    first = events[0]
    assert isinstance(first, DealCommitted | GameStarted)
    return first.game_id


_LOBBY_UPSERT = """
insert into lobby (table_id, host_name, seats_taken, people, capacity, stake, status)
values ($1, $2, $3, $4, $5, $6, $7)
on conflict (table_id) do update
   set host_name = excluded.host_name, seats_taken = excluded.seats_taken,
       people = excluded.people, status = excluded.status, updated_at = now()
"""


def _lobby_upsert(table: TableState) -> list[tuple[str, tuple[Any, ...]]]:
    """The lobby row of an online table, written in the same transaction as its events."""
    if table.mode != "online":
        return []
    host = next((s.name for s in table.seats if s.player_id == table.host), "")
    row = (
        table.table_id,
        host,
        len(table.seats),
        len(table.people),
        table.capacity,
        table.stake,
        table.status,
    )
    return [(_LOBBY_UPSERT, row)]


def _game_new_event(event: GameEvent) -> NewEvent:
    return NewEvent(type=event_type(event), data=encode_event(event))


def _table_new_event(event: TableEvent) -> NewEvent:
    return NewEvent(type=table_event_type(event), data=encode_table_event(event))
