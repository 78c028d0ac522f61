"""Use cases: what a caller can do, each one load → decide → append → view.

This layer owns the streams: `player-<id>` (a guest's name), `table-<id>` (seats and the games
dealt there) and `game-<id>` (every move). It never hides a rule of its own: the rules are in
`service.rules`, and what a caller may see is in `service.views`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec

from service.rules import errors as rule_errors
from service.rules.bees import BEE_NAMES, bee_commands
from service.rules.cards import MAX_PLAYERS, MIN_PLAYERS
from service.rules.commands import Command, ConfirmPick, LeaveGame, StartGame, TakeStem, TapBee
from service.rules.engine import GameState, decide, evolve, fold, initial_state
from service.rules.events import (
    ClockSettings,
    EndReason,
    Event,
    GameEvent,
    GameStarted,
    SeatInfo,
    decode_event,
    encode_event,
    event_type,
)
from service.store.events import (
    ConcurrencyConflict,
    DuplicateCommand,
    EventStore,
    NewEvent,
    RecordedEvent,
    StreamAppend,
)
from service.store.pool import Pool
from service.store.wakeups import Wakeups
from service.tables import (
    GameFinished,
    GameOpened,
    TableClosedEvent,
    TableEvent,
    TableEventUnion,
    TableMode,
    TableOpened,
    TableState,
    TableStatus,
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
from service.views import GameView, game_view, visible_event

Clock = Callable[[], datetime]
Dealer = Callable[[int], tuple[int, ...]]


def system_clock() -> datetime:
    return datetime.now(UTC)


def secure_dealer(players: int) -> tuple[int, ...]:
    """A uniformly shuffled deck from the operating system's CSPRNG."""
    order = list(range(1, 10 * players + 5))
    secrets.SystemRandom().shuffle(order)
    return tuple(order)


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
        dealer: Dealer = secure_dealer,
        wakeups: Wakeups | None = None,
    ) -> None:
        self.store = store
        self.wakeups = wakeups
        self.pool = pool
        self.clock = clock
        self.dealer = dealer
        self._games = _StateCache()
        self._tokens: dict[bytes, Player] = {}

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
            "INSERT INTO access_tokens (token_hash, player_id, name) VALUES ($1, $2, $3)",
            token_hash(token),
            player.player_id,
            name,
        )
        return player, token

    async def authenticate(self, token: str) -> Player:
        digest = token_hash(token)
        cached = self._tokens.get(digest)
        if cached is not None:
            return cached
        row = await self.pool.fetchrow(
            "SELECT player_id, name FROM access_tokens WHERE token_hash = $1", digest
        )
        if row is None:
            raise Unauthorized("The bearer token is not known.")
        player = Player(player_id=row["player_id"], name=row["name"])
        self._tokens[digest] = player
        return player

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
        opened = decide_open(table_id, player.player_id, player.name, capacity, stake, clock)
        table, game = await self._save(player, TableState(), opened, cause="open")
        return self._table_view(table, game, player)

    async def join_table(self, player: Player, table_id: str) -> TableView:
        async def change(table: TableState) -> tuple[TableState, GameState | None]:
            joined = decide_join(table, player.player_id, player.name)
            full = should_start_when_full(fold_table_from(table, joined))
            return await self._save(player, table, joined, deal=full, cause="join")

        return await self._table_change(player, table_id, change)

    async def start_game(self, player: Player, table_id: str) -> TableView:
        async def change(table: TableState) -> tuple[TableState, GameState | None]:
            decide_start(table, player.player_id)
            return await self._save(player, table, [], deal=True, cause="start")

        return await self._table_change(player, table_id, change)

    async def fill_with_bees(self, player: Player, table_id: str) -> TableView:
        async def change(table: TableState) -> tuple[TableState, GameState | None]:
            bees = decide_fill_with_bees(table, player.player_id, BEE_NAMES)
            return await self._save(player, table, bees, deal=True, cause="fill_with_bees")

        return await self._table_change(player, table_id, change)

    async def play_again(self, player: Player, table_id: str) -> TableView:
        async def change(table: TableState) -> tuple[TableState, GameState | None]:
            decide_play_again(table, player.player_id)
            return await self._save(player, table, [], deal=True, cause="play_again")

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
            return await self._save(player, table, left, game_change=game_change, cause="leave")

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
    ) -> tuple[TableState, GameState | None]:
        """Append table events, and the game they start or change, in one transaction.

        `deal`: deal a new game to the table's seats (after `table_events`). `game_change`: the
        state of the current game and the events a table change caused in it (a person leaving);
        if they end the game, the table records that too."""
        events = list(table_events)
        appends: list[StreamAppend] = []
        game: GameState | None = None
        if game_change is not None:
            game_before, game_events = game_change
            game = fold(game_events, game_before)
            appends.append(_game_append(game_before, game_events))
            if game.phase == "ended":
                closing = [e for e in events if isinstance(e, TableClosedEvent)]
                events = [e for e in events if not isinstance(e, TableClosedEvent)]
                events += [GameFinished(game_id=game.game_id, reason=_reason(game)), *closing]
        table = fold_table_from(before, events)
        if deal:
            game_id = str(uuid.uuid4())
            opened = GameOpened(game_id=game_id, number=len(table.games) + 1)
            events.append(opened)
            table = evolve_table(table, opened)
            start = StartGame(
                game_id=game_id,
                table_id=table.table_id,
                seats=table.seat_infos(),
                deck_order=self.dealer(len(table.seats)),
                clock=table.clock,
                at=self.clock(),
            )
            game, game_events = play(initial_state, start)
            appends.append(_game_append(initial_state, game_events))
            if game.phase == "ended":  # cannot happen at a deal, but the table must not miss it
                events.append(GameFinished(game_id=game_id, reason=_reason(game)))
                table = evolve_table(table, events[-1])
        table_append = StreamAppend(
            stream=_stream("table", table.table_id),
            expected_version=before.version,
            events=[_table_new_event(e) for e in events],
        )
        await self.store.append(
            table_append,
            *appends,
            metadata={"actor": player.player_id, "causation": cause},
            also=_lobby_upsert(table),
        )
        if game is not None:
            self._games.put(game.game_id, game)
        return table, game

    def _table_view(self, table: TableState, state: GameState | None, player: Player) -> TableView:
        seat = table.seat_of(player.player_id)
        game = None
        if state is not None:
            game_seat = self._seat_in(state, player)
            # Only those dealt into the game see it from the table; never another's hand.
            game = game_view(state, game_seat) if game_seat is not None else None
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
        return game_view(state, seat)

    async def submit_move(self, player: Player, game_id: str, move: AnyMove) -> GameView:
        stream = _stream("game", game_id)
        command_id = f"{player.player_id}:{move.move_id}"
        for _ in range(self.MAX_RETRIES):
            state = await self._load_game(game_id)
            seat = self._seat_in(state, player)
            if seat is None:
                raise Forbidden("You do not sit at this game.")
            done = await self.store.command_version(stream, command_id)
            if done is not None:
                return game_view(await self._state_at(game_id, done), seat)
            command = _command_for(move, seat, self.clock())
            new_state, events = play(state, command)
            appends = [_game_append(state, events)]
            also: list[tuple[str, tuple[Any, ...]]] = []
            if new_state.phase == "ended":
                # The table learns in the same transaction, so play again sees it at once.
                table = await self._load_table(new_state.table_id)
                finished = GameFinished(game_id=game_id, reason=_reason(new_state))
                appends.append(
                    StreamAppend(
                        stream=_stream("table", table.table_id),
                        expected_version=table.version,
                        events=[_table_new_event(finished)],
                    )
                )
                also = _lobby_upsert(evolve_table(table, finished))
            try:
                await self.store.append(
                    *appends,
                    metadata={
                        "command_id": command_id,
                        "causation": move.__struct_config__.tag,
                        "actor": player.player_id,
                    },
                    command=(stream, command_id),
                    also=also,
                )
            except ConcurrencyConflict:
                continue  # someone moved first: decide again on the new state
            except DuplicateCommand as duplicate:
                return game_view(await self._state_at(game_id, duplicate.version), seat)
            self._games.put(game_id, new_state)
            return game_view(new_state, seat)
        raise Conflict("The game changed too often while deciding; try again.")

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
    started = events[0]
    assert isinstance(started, GameStarted)
    return started.game_id


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
