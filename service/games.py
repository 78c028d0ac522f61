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
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec

from service.rules import errors as rule_errors
from service.rules.bees import BEE_NAMES, bee_commands
from service.rules.cards import MAX_PLAYERS, MIN_PLAYERS
from service.rules.commands import Command, ConfirmPick, StartGame, TakeStem, TapBee
from service.rules.engine import GameState, decide, evolve, fold, initial_state
from service.rules.events import (
    Event,
    GameEvent,
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
    GameOpened,
    TableEvent,
    TableEventUnion,
    TableOpened,
    TableState,
    decode_table_event,
    encode_table_event,
    evolve_table,
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
    mode: str
    host: str
    seats: tuple[SeatInfo, ...]
    games: tuple[str, ...]  # every game dealt here, oldest first; the last is current
    game: GameView | None


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
        opened = TableOpened(table_id=table_id, mode="solo", host=player.player_id, seats=seats)
        return await self._open_game(player, TableState(), [opened])

    async def play_again(self, player: Player, table_id: str) -> TableView:
        for _ in range(self.MAX_RETRIES):
            table = await self._load_table(table_id)
            self._require_seated(table, player)
            if table.current_game is not None:
                current = await self._load_game(table.current_game)
                if current.phase != "ended":
                    raise Conflict("The current game has not ended yet.")
            try:
                return await self._open_game(player, table, [])
            except ConcurrencyConflict:
                continue
        raise Conflict("The table changed while dealing; try again.")

    async def _open_game(
        self, player: Player, table: TableState, table_events: list[TableEventUnion]
    ) -> TableView:
        """Deal a new game; `table` is the table's state before `table_events`."""
        expected_version = table.version
        for event in table_events:
            table = evolve_table(table, event)
        game_id = str(uuid.uuid4())
        opened = GameOpened(game_id=game_id, number=len(table.games) + 1)
        start = StartGame(
            game_id=game_id,
            table_id=table.table_id,
            seats=table.seats,
            deck_order=self.dealer(len(table.seats)),
            at=self.clock(),
        )
        state, events = play(initial_state, start)
        all_table_events: list[TableEventUnion] = [*table_events, opened]
        await self.store.append(
            StreamAppend(
                stream=_stream("table", table.table_id),
                expected_version=expected_version,
                events=[_table_new_event(e) for e in all_table_events],
            ),
            StreamAppend(
                stream=_stream("game", game_id),
                expected_version=0,
                events=[_game_new_event(e) for e in events],
            ),
            metadata={"actor": player.player_id, "causation": "open_game"},
        )
        self._games.put(game_id, state)
        return self._table_view(evolve_table(table, opened), state, player)

    async def get_table(self, player: Player, table_id: str) -> TableView:
        table = await self._load_table(table_id)
        self._require_seated(table, player)
        state = await self._load_game(table.current_game) if table.current_game else None
        return self._table_view(table, state, player)

    def _table_view(self, table: TableState, state: GameState | None, player: Player) -> TableView:
        return TableView(
            table_id=table.table_id,
            mode=table.mode,
            host=table.host,
            seats=table.seats,
            games=table.games,
            game=game_view(state, table.seat_of(player.player_id)) if state else None,
        )

    async def _load_table(self, table_id: str) -> TableState:
        recorded = await self.store.read_stream(_stream("table", table_id))
        if not recorded:
            raise NotFound(f"No table {table_id}.")
        state = TableState()
        for record in recorded:
            state = evolve_table(state, decode_table_event(record.data))
        return state

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
            try:
                await self.store.append(
                    StreamAppend(
                        stream=stream,
                        expected_version=state.version,
                        events=[_game_new_event(e) for e in events],
                    ),
                    metadata={
                        "command_id": command_id,
                        "causation": move.__struct_config__.tag,
                        "actor": player.player_id,
                    },
                    command=(stream, command_id),
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
        `game_ended`. It re-reads the stream after every wake-up (a NOTIFY from whichever
        process appended) and on every heartbeat tick, in case a notification was missed.
        """
        state = await self._load_game(game_id)
        seat = self._seat_in(state, player)
        if seat is None:
            raise Forbidden("You do not sit at this game.")
        stream = _stream("game", game_id)
        ended_at = state.version if state.phase == "ended" else None

        async def follow() -> AsyncIterator[VisibleEvent | None]:
            last = after
            with (
                self.wakeups.subscribe(stream)
                if self.wakeups is not None
                else contextlib.nullcontext(asyncio.Event())
            ) as woken:
                while ended_at is None or last < ended_at:
                    woken.clear()  # before reading, so a commit during the read wakes us again
                    recorded = await self.store.read_stream(stream, after_version=last)
                    if recorded:
                        over = any(r.type == "game_ended" for r in recorded) or ended_at is not None
                        for event in visible_events(recorded, seat, game_over=over):
                            yield event
                        last = recorded[-1].version
                        if over:
                            return
                        continue
                    try:
                        await asyncio.wait_for(woken.wait(), heartbeat)
                    except TimeoutError:
                        yield None

        return follow()


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


def _game_new_event(event: GameEvent) -> NewEvent:
    return NewEvent(type=event_type(event), data=encode_event(event))


def _table_new_event(event: TableEvent) -> NewEvent:
    return NewEvent(type=table_event_type(event), data=encode_table_event(event))
