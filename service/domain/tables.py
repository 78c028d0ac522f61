"""A table: who sits where, who hosts, and the games dealt there (stream `table-<id>`).

One piece, on purpose: the table's state, its fold and its decisions are the seed's §9 rules
in one place; the events are in `table_events`, the seed commit-reveal in `seeds`.

Pure, like the rules: `evolve_table` folds table events, and the `decide_*` functions check a
request against the table's rules (seed §9) and return the events it causes, or raise. Games
live in their own streams (`game-<id>`); when a game starts, ends or loses a player, the
service appends to both streams in one transaction.

Seats at a table are a list in joining order: seat numbers are positions from 1, and a game
dealt at the table numbers its seats the same way. The events themselves are in
`table_events.py` (re-exported here); the commit-reveal rules for seeds are in `seeds.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Literal

import msgspec
from msgspec.structs import replace

from service.domain.rules.bees import DEFAULT_LEVEL
from service.domain.rules.cards import MAX_PLAYERS, MIN_PLAYERS
from service.domain.rules.errors import IllegalMove, InvalidMove
from service.domain.rules.events import BeeLevel, ClockSettings, SeatInfo, SeatKind
from service.domain.table_events import (
    BuyInHeld,
    BuyInReturned,
    GameFinished,
    GameOpened,
    GamePrepared,
    HostChanged,
    PotFormed,
    PotSettled,
    SeatFreed,
    SeatTaken,
    SeedCommitted,
    SeedContributed,
    SeedRevealed,
    SeedsClosed,
    SeedWithheld,
    Stake,
    TableClosedEvent,
    TableEventUnion,
    TableMode,
    TableOpened,
)

TableStatus = Literal["open", "playing", "between_games", "closed"]

DEFAULT_STAKE = 100  # the seed's default buy-in, in coins
# Online tables one player may host at once (open, playing or between games): one guest must
# not be able to fill the lobby. Solo tables are not in the lobby and are not counted.
MAX_OPEN_TABLES = 5


# --- errors ----------------------------------------------------------------------------------


class TableFull(IllegalMove):
    code = "table-full"
    title = "Every seat at this table is taken"


class AlreadySeated(IllegalMove):
    code = "already-seated"
    title = "You already sit at this table"


class NotPermitted(IllegalMove):
    """Well formed, but not this caller's to do (HTTP 403)."""

    code = "not-permitted"
    title = "Not yours to do"


class BuyInNeedsAccount(NotPermitted):
    code = "buy-in-needs-account"
    title = "A buy-in table needs an account"


class NotSeated(NotPermitted):
    code = "not-seated"
    title = "You do not sit at this table"


class NotHost(NotPermitted):
    code = "not-host"
    title = "Only the host can do that"


class NotEnoughPeople(IllegalMove):
    code = "not-enough-people"
    title = "At least two people must sit at the table"


class GameInProgress(IllegalMove):
    code = "game-in-progress"
    title = "A game is being played at this table"


class NoGameToReplay(IllegalMove):
    code = "no-game-to-replay"
    title = "Play again follows a finished game"


class TableClosed(IllegalMove):
    code = "table-closed"
    title = "This table has closed"


class BeesNotAllowed(IllegalMove):
    code = "bees-not-allowed"
    title = "Bee players only fill free tables"


class TooManyTables(IllegalMove):
    code = "too-many-tables"
    title = "You host as many open tables as one person may"


class InvalidTable(InvalidMove):
    code = "invalid-table"
    title = "A table has 2 to 8 seats"


# --- state -----------------------------------------------------------------------------------


class TableSeat(msgspec.Struct, frozen=True, kw_only=True):
    player_id: str | None
    name: str
    kind: SeatKind
    level: BeeLevel | None = None


class BuyIn(msgspec.Struct, frozen=True, kw_only=True):
    """A stake held in `player_id`'s wallet (hold `hold_id`) that the table counts towards the
    pot of its first game."""

    player_id: str
    hold_id: str
    amount: int


class TableState(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str = ""
    mode: TableMode = "solo"
    host: str = ""
    seats: tuple[TableSeat, ...] = ()
    capacity: int = 0
    stake: int = 0
    clock: ClockSettings | None = None
    rated: bool = False  # its games change the ratings of the people with accounts
    games: tuple[str, ...] = ()
    playing: bool = False  # the current game is being played
    closed: bool = False
    next_game: str | None = None  # prepared: its commitment is public, seeds are welcome
    next_commitment: str | None = None
    seeds: tuple[tuple[str, str], ...] = ()  # (player id, seed hex) for the prepared game
    seed_hashes: tuple[tuple[str, str], ...] = ()  # (player id, commitment hex) not yet revealed
    seeds_closed: bool = False  # the deal waits for the committed seeds to be revealed
    seeds_closed_at: datetime | None = None  # when the reveal window began
    withheld: tuple[str, ...] = ()  # people whose reveal window ended without their seed
    buy_ins: tuple[BuyIn, ...] = ()  # before the first deal: the stakes held for the pot
    pot: tuple[Stake, ...] = ()  # the stakes in the current game's pot, until it is settled
    version: int = 0

    @property
    def holds_stakes(self) -> bool:
        """Before the first deal of a buy-in table, every person seated has a stake held."""
        return self.stake > 0 and not self.games

    @property
    def opened(self) -> bool:
        """The stream began with `table_opened` (a stream holding only a `buy_in_returned`
        for a table that was never opened is no table: `Money.expire_holds`)."""
        return bool(self.host)

    def buy_in_of(self, player_id: str) -> BuyIn | None:
        return next((b for b in self.buy_ins if b.player_id == player_id), None)

    def seed_of(self, player_id: str | None) -> str | None:
        return next((seed for who, seed in self.seeds if who == player_id), None)

    def seed_hash_of(self, player_id: str | None) -> str | None:
        return next((h for who, h in self.seed_hashes if who == player_id), None)

    @property
    def awaiting_reveals(self) -> tuple[str, ...]:
        """The people whose committed seed the deal still waits for."""
        return tuple(who for who, _ in self.seed_hashes)

    @property
    def ready_to_deal(self) -> bool:
        """No committed seed is outstanding (a deal before closing would lose them)."""
        return not self.seed_hashes

    @property
    def current_game(self) -> str | None:
        return self.games[-1] if self.games else None

    @property
    def status(self) -> TableStatus:
        if self.closed:
            return "closed"
        if self.playing:
            return "playing"
        return "between_games" if self.games else "open"

    @property
    def people(self) -> tuple[TableSeat, ...]:
        return tuple(s for s in self.seats if s.kind == "person")

    def seat_of(self, player_id: str) -> int | None:
        for number, seat in enumerate(self.seats, start=1):
            if seat.player_id == player_id:
                return number
        return None

    def seat_infos(self) -> tuple[SeatInfo, ...]:
        """The seats as a game dealt now would number them."""
        return tuple(
            SeatInfo(seat=number, name=s.name, kind=s.kind, player_id=s.player_id, level=s.level)
            for number, s in enumerate(self.seats, start=1)
        )


def evolve_table(state: TableState, event: TableEventUnion) -> TableState:
    version = state.version + 1
    match event:
        case TableOpened():
            seats = tuple(
                TableSeat(player_id=s.player_id, name=s.name, kind=s.kind, level=s.level)
                for s in event.seats
            )
            return TableState(
                table_id=event.table_id,
                mode=event.mode,
                host=event.host,
                seats=seats,
                capacity=event.capacity or len(seats),
                stake=event.stake,
                clock=event.clock,
                rated=event.rated,
                version=version,
            )
        case SeatTaken():
            seat = TableSeat(
                player_id=event.player_id, name=event.name, kind=event.kind, level=event.level
            )
            return replace(state, seats=(*state.seats, seat), version=version)
        case SeatFreed():
            # A seed belongs to a seat: whoever leaves takes theirs (and any commitment) along;
            # joining again, they may give another while seeds are open.
            seats = tuple(s for s in state.seats if s.player_id != event.player_id)
            return replace(
                state,
                seats=seats,
                seeds=_without(state.seeds, event.player_id),
                seed_hashes=_without(state.seed_hashes, event.player_id),
                version=version,
            )
        case HostChanged():
            return replace(state, host=event.host, version=version)
        case GamePrepared():
            return replace(
                _no_seeds(state),
                next_game=event.game_id,
                next_commitment=event.commitment,
                version=version,
            )
        case SeedContributed() | SeedRevealed():
            return replace(
                state,
                seeds=(*_without(state.seeds, event.player_id), (event.player_id, event.seed)),
                seed_hashes=_without(state.seed_hashes, event.player_id),
                version=version,
            )
        case SeedCommitted():
            pair = (event.player_id, event.seed_hash)
            return replace(
                state,
                seeds=_without(state.seeds, event.player_id),
                seed_hashes=(*_without(state.seed_hashes, event.player_id), pair),
                version=version,
            )
        case SeedsClosed():
            return replace(state, seeds_closed=True, seeds_closed_at=event.at, version=version)
        case SeedWithheld():
            return replace(
                state,
                seed_hashes=_without(state.seed_hashes, event.player_id),
                withheld=(*state.withheld, event.player_id),
                version=version,
            )
        case GameOpened():
            return replace(
                _no_seeds(state),
                games=(*state.games, event.game_id),
                playing=True,
                next_game=None,
                next_commitment=None,
                version=version,
            )
        case BuyInHeld():
            buy_in = BuyIn(player_id=event.player_id, hold_id=event.hold_id, amount=event.amount)
            return replace(state, buy_ins=(*state.buy_ins, buy_in), version=version)
        case BuyInReturned():
            kept = tuple(b for b in state.buy_ins if b.hold_id != event.hold_id)
            return replace(state, buy_ins=kept, version=version)
        case PotFormed():
            return replace(state, pot=event.stakes, buy_ins=(), version=version)
        case PotSettled():
            return replace(state, pot=(), version=version)
        case GameFinished():
            return replace(state, playing=False, version=version)
        case TableClosedEvent():
            return replace(state, closed=True, playing=False, version=version)
    raise AssertionError(f"unknown table event {event!r}")  # pragma: no cover


def _without(pairs: tuple[tuple[str, str], ...], player_id: str) -> tuple[tuple[str, str], ...]:
    return tuple(pair for pair in pairs if pair[0] != player_id)


def _no_seeds(state: TableState) -> TableState:
    return replace(
        state, seeds=(), seed_hashes=(), seeds_closed=False, seeds_closed_at=None, withheld=()
    )


def fold_table(events: Iterable[TableEventUnion], state: TableState | None = None) -> TableState:
    """Fold events onto `state` (a new table when none is given)."""
    state = state or TableState()
    for event in events:
        state = evolve_table(state, event)
    return state


# --- decisions -------------------------------------------------------------------------------


def decide_open(
    table_id: str,
    host_id: str,
    host_name: str,
    capacity: int,
    stake: int,
    clock: ClockSettings | None,
    *,
    registered: bool = False,
    hosting: int = 0,
    rated: bool = False,
) -> list[TableEventUnion]:
    """Open an online table; `hosting`: how many open online tables the host has already;
    `rated`: its games change ratings (a guest may open one, and is not rated at it)."""
    if not MIN_PLAYERS <= capacity <= MAX_PLAYERS:
        raise InvalidTable(f"A table has {MIN_PLAYERS} to {MAX_PLAYERS} seats.")
    if hosting >= MAX_OPEN_TABLES:
        raise TooManyTables(
            f"You host {hosting} open tables; at most {MAX_OPEN_TABLES} at once. "
            "Leave one (or let it close) first."
        )
    if stake > 0 and not registered:
        raise BuyInNeedsAccount("A buy-in table needs an account: register, then open it.")
    host = SeatInfo(seat=1, name=host_name, kind="person", player_id=host_id)
    return [
        TableOpened(
            table_id=table_id,
            mode="online",
            host=host_id,
            seats=(host,),
            capacity=capacity,
            stake=stake,
            clock=clock,
            rated=rated,
        )
    ]


def _require_open(state: TableState) -> None:
    if state.closed:
        raise TableClosed("This table has closed.")


def decide_join(
    state: TableState, player_id: str, name: str, *, registered: bool = False
) -> list[TableEventUnion]:
    _require_open(state)
    if state.stake > 0 and not registered:
        raise BuyInNeedsAccount("A buy-in table needs an account: register, then join.")
    if state.seat_of(player_id) is not None:
        raise AlreadySeated("You already sit at this table.")
    if state.mode != "online":
        # Not `not-seated`, whose remedy is to join: a solo table is its player's alone.
        raise NotPermitted("A solo table has no free seats: it is its player's alone.")
    if state.playing:
        raise GameInProgress("Wait for the game to end to join.")
    if len(state.seats) >= state.capacity:
        raise TableFull(f"All {state.capacity} seats are taken.")
    return [SeatTaken(player_id=player_id, name=name, kind="person")]


def decide_buy_in(
    state: TableState, player_id: str, hold_id: str, amount: int
) -> list[BuyInHeld | BuyInReturned]:
    """A stake that `player_id`'s wallet now holds for this table (hold `hold_id`), decided on
    the table after they sat down (or opened it): counted towards the pot while the table still
    takes buy-ins, they sit here and it is their one stake at the table's price; given back
    otherwise (seed §9 "Buy-in": only the first game has one)."""
    taken = (
        state.holds_stakes
        and not state.closed
        and amount == state.stake
        and state.seat_of(player_id) is not None
        and state.buy_in_of(player_id) is None
    )
    if taken:
        return [BuyInHeld(player_id=player_id, hold_id=hold_id, amount=amount)]
    return [BuyInReturned(player_id=player_id, hold_id=hold_id, amount=amount, reason="not_taken")]


def decide_return_buy_in(state: TableState, player_id: str) -> list[BuyInReturned]:
    """As `player_id` leaves before the first deal, their stake goes back to their wallet."""
    return [
        BuyInReturned(player_id=b.player_id, hold_id=b.hold_id, amount=b.amount, reason="left")
        for b in state.buy_ins
        if b.player_id == player_id
    ]


def should_start_when_full(state: TableState) -> bool:
    """The game starts when the table is full (seed §9), at the first deal only: after a game,
    the people still seated start the next one together with play again."""
    return (
        state.mode == "online"
        and not state.playing
        and not state.games
        and len(state.seats) >= state.capacity
    )


def decide_start(state: TableState, player_id: str) -> None:
    """The host starts the first game: online with at least two people seated; solo (a table
    opened without dealing) whenever its one person likes, with their seed if they give one."""
    _require_open(state)
    if state.host != player_id:
        raise NotHost("Only the host starts the game.")
    if state.playing:
        raise GameInProgress("The game has already started.")
    if state.games:
        raise NoGameToReplay("The first game has been played; use play again.")
    if state.mode == "online" and len(state.people) < 2:
        raise NotEnoughPeople("At least two people must sit at the table to start.")


def decide_fill_with_bees(
    state: TableState,
    player_id: str,
    bee_names: tuple[str, ...],
    level: BeeLevel = DEFAULT_LEVEL,
) -> list[TableEventUnion]:
    """On a free table, once a second person has joined, the host fills every empty seat with
    bee players of `level`, named in the seed's order; the game then starts at once."""
    decide_start(state, player_id)
    if state.stake > 0:
        raise BeesNotAllowed("Bee players only fill free tables.")
    taken = {s.name for s in state.seats if s.kind == "bee"}
    names = [n for n in bee_names if n not in taken]
    empty = state.capacity - len(state.seats)
    return [SeatTaken(player_id=None, name=name, kind="bee", level=level) for name in names[:empty]]


def decide_leave(state: TableState, player_id: str) -> list[TableEventUnion]:
    """Leave the table. Before a game: the seat is free again. During one: the person also
    leaves the game (the service records that in the game stream). The next person in seat
    order becomes host; a table with no people left closes."""
    _require_open(state)
    if state.seat_of(player_id) is None:
        raise NotSeated("You do not sit at this table.")
    events: list[TableEventUnion] = [SeatFreed(player_id=player_id)]
    staying = [s for s in state.people if s.player_id != player_id]
    if not staying:
        events.append(TableClosedEvent())
    elif state.host == player_id:
        new_host = staying[0].player_id
        assert new_host is not None
        events.append(HostChanged(host=new_host))
    return events


def decide_play_again(state: TableState, player_id: str) -> None:
    """After a game ends, everyone still at the table can start another together."""
    _require_open(state)
    if state.seat_of(player_id) is None:
        raise NotSeated("You do not sit at this table.")
    if state.playing:
        raise GameInProgress("The current game has not ended yet.")
    if not state.games:
        raise NoGameToReplay("No game has been played here yet.")
    if state.mode == "online" and len(state.people) < 2:
        raise NotEnoughPeople("Bee players don't keep a game going: two people are needed.")


class NoGameToSeed(IllegalMove):
    code = "no-game-to-seed"
    title = "No game is waiting for seeds at this table"


class SeedsAreClosed(IllegalMove):
    code = "seeds-closed"
    title = "The deal is waiting for committed seeds to be revealed"


def seeding(state: TableState, player_id: str) -> str:
    """The prepared game a seated person may seed now; raises otherwise."""
    _require_open(state)
    if state.seat_of(player_id) is None:
        raise NotSeated("You do not sit at this table.")
    if state.next_game is None:
        raise NoGameToSeed("Seeds go to the next game, prepared when this one ends.")
    return state.next_game


def decide_contribute(state: TableState, player_id: str, seed: str) -> list[TableEventUnion]:
    """A seated person's seed for the prepared game, once its commitment is public, until seeds
    are closed."""
    game_id = seeding(state, player_id)
    if state.seeds_closed:
        raise SeedsAreClosed("Seeds are closed: the deal waits for the committed ones.")
    return [SeedContributed(game_id=game_id, player_id=player_id, seed=seed)]
