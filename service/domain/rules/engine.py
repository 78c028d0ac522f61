"""The rules of Swarm as a Decider: `initial_state`, `decide`, `evolve`, `is_terminal`.

One piece, on purpose (as python-chess keeps its rules core in one module): every rule of the
seed reads against the same state and the same fold, and splitting `decide` from the `evolve`
it must agree with would make a reader hold two files to check one rule.

`decide(command, state)` checks a command against the rules and returns the events it causes
(or raises a `RuleViolation`); `evolve(state, event)` records a fact and never refuses. A game's
state is the fold of its events from `initial_state`, so a replay needs nothing else.

`evolve` is the reference for one event. `fold` (a rebuild) and `decide_and_evolve` (a move and
its cascade) apply many events to one private mutable working copy (`_Work`: the seats and stems
as lists) and build the immutable `GameState` once a call, which makes them several times
faster; `tests/unit/test_fast_fold.py` holds them to exactly the states of `evolve`.

No I/O, no clock, no randomness: the deal arrives as data (`StartGame.deck_order`) and the time
as `command.at`. A timed game's clock (seed §7) runs out when the service sends `ExpireClock`
for the running deadline; see `_Cascade.expire` for what the clock does then, and when a game
with nobody picking is abandoned. The bee players' choice of bee is a policy outside the rules
(`bees.py`); the one thing the seed fixes for them, the cheapest stem when their bee is too low,
is a rule and lives here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

import msgspec
from msgspec.structs import replace

from service.domain.rules import errors
from service.domain.rules.cards import (
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    STEM_CAPACITY,
    STEM_COUNT,
    TURNS,
    deck,
    pile_stings,
)
from service.domain.rules.commands import (
    Command,
    ConfirmPick,
    ExpireClock,
    LeaveGame,
    StartGame,
    TakeStem,
    TapBee,
)
from service.domain.rules.events import (
    BeeLanded,
    BeeTapped,
    Chooser,
    ClockPlay,
    ClockSettings,
    DealCommitted,
    DealProof,
    DealRevealed,
    EndReason,
    Event,
    GameEnded,
    GameStarted,
    Pick,
    PickConfirmed,
    PicksRevealed,
    SeatInfo,
    SeatLeft,
    StemChoiceRequired,
    StemTaken,
    TurnStarted,
)

# "flying" only exists between the events of one decision: revealed bees still to land.
Phase = Literal["not_started", "dealt", "picking", "flying", "choosing", "ended"]
Stems = tuple[tuple[int, ...], ...]

# Seed §7: "If 3 turns in a row pass with nobody picking, the game ends".
IDLE_TURNS_TO_ABANDON = 3


class SeatState(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    info: SeatInfo
    hand: tuple[int, ...]  # ascending
    tapped: int | None = None
    confirmed: int | None = None
    pile: tuple[int, ...] = ()  # the bees this seat has taken
    stings: int = 0
    biggest_take: int = 0  # the most stings taken in one go (a sixth bee or a too-low stem)
    left: bool = False
    # How this turn's pick was made (`PickConfirmed.by_clock`); kept until the next turn starts,
    # as a too-low bee the clock chose as the lowest takes the cheapest stem with no choice.
    by_clock: ClockPlay = "none"

    @property
    def number(self) -> int:
        return self.info.seat

    @property
    def is_bee(self) -> bool:
        return self.info.kind == "bee"

    @property
    def playing(self) -> bool:
        return not self.left


class GameState(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    game_id: str = ""
    table_id: str = ""
    seats: tuple[SeatState, ...] = ()
    stems: Stems = ()  # each stem bottom → top
    turn: int = 0
    phase: Phase = "not_started"
    in_flight: tuple[Pick, ...] = ()  # revealed picks that have not landed, lowest first
    revealed: tuple[Pick, ...] = ()  # the picks revealed most recently, lowest first
    pending: Pick | None = None  # the too-low bee waiting for its player's choice
    deadline: datetime | None = None  # of the running turn or choice, in a timed game
    clock: ClockSettings | None = None
    # Turns in a row, up to the last one revealed, that were idle: the turn clock ran out and
    # played every person's lowest bee, because no person tapped or confirmed anything.
    idle_turns: int = 0
    winners: tuple[int, ...] = ()
    end_reason: EndReason | None = None
    version: int = 0  # events folded so far
    commitment: str | None = None  # the server's commitment to a fair deal, if any
    proof: DealProof | None = None  # the transcript and fingerprint, from turn 1
    server_seed: str | None = None  # revealed after the game ends

    def seat(self, number: int) -> SeatState:
        return self.seats[number - 1]


initial_state = GameState()


class StemCost(msgspec.Struct, frozen=True, kw_only=True):
    stem: int
    bees: int
    stings: int


class Forecast(msgspec.Struct, frozen=True, kw_only=True):
    """Where a bee would land if nobody else's got there first (seed §3)."""

    bee: int
    too_low: bool
    stem: int | None = None  # None when too low: its player would choose
    sixth: bool = False
    takes: tuple[int, ...] = ()
    takes_stings: int = 0


# ---------------------------------------------------------------------------------------------
# Pure queries


def landing_stem(stems: Sequence[tuple[int, ...]], bee: int) -> int | None:
    """The stem (1–4) whose top bee is lower than `bee` and closest to it; None if too low."""
    best: int | None = None
    best_top = 0
    for index, stem in enumerate(stems):
        top = stem[-1]
        if best_top < top < bee:
            best, best_top = index + 1, top
    return best


def stem_costs(stems: Sequence[tuple[int, ...]]) -> tuple[StemCost, ...]:
    return tuple(
        StemCost(stem=index + 1, bees=len(stem), stings=pile_stings(stem))
        for index, stem in enumerate(stems)
    )


def cheapest_stem(stems: Sequence[tuple[int, ...]]) -> int:
    """Fewest stings, then fewest bees, then the lowest stem number (seed §5)."""
    best = best_stings = best_bees = 0
    for number, bees in enumerate(stems, start=1):
        cost = pile_stings(bees)
        if not best or cost < best_stings or (cost == best_stings and len(bees) < best_bees):
            best, best_stings, best_bees = number, cost, len(bees)
    return best


def forecast(stems: Stems, bee: int) -> Forecast:
    stem = landing_stem(stems, bee)
    if stem is None:
        return Forecast(bee=bee, too_low=True)
    bees = stems[stem - 1]
    if len(bees) >= STEM_CAPACITY:
        return Forecast(
            bee=bee,
            too_low=False,
            stem=stem,
            sixth=True,
            takes=bees,
            takes_stings=pile_stings(bees),
        )
    return Forecast(bee=bee, too_low=False, stem=stem)


def is_terminal(state: GameState) -> bool:
    return state.phase == "ended"


def awaiting(state: GameState) -> tuple[int, ...]:
    """Seats whose decision the game is waiting for."""
    if state.phase == "picking":
        return tuple(s.number for s in state.seats if s.playing and s.confirmed is None)
    if state.phase == "choosing" and state.pending is not None:
        return (state.pending.seat,)
    return ()


def winners_of(seats: Sequence[SeatState]) -> tuple[int, ...]:
    """Fewest stings among the seats still counting; ties share the win."""
    counting = [s for s in seats if not s.left]
    if not counting:
        return ()
    fewest = min([s.stings for s in counting])
    return tuple([s.info.seat for s in counting if s.stings == fewest])


# ---------------------------------------------------------------------------------------------
# evolve: record a fact, never refuse


def evolve(state: GameState, event: Event) -> GameState:
    version = state.version + 1
    match event:
        case DealCommitted():
            return replace(
                state,
                game_id=event.game_id,
                table_id=event.table_id,
                commitment=event.commitment,
                version=version,
            )
        case DealRevealed():
            return replace(state, server_seed=event.server_seed, version=version)
        case GameStarted():
            seats = tuple(
                SeatState(info=info, hand=tuple(sorted(hand)))
                for info, hand in zip(event.seats, event.hands, strict=True)
            )
            return replace(
                state,
                game_id=event.game_id,
                table_id=event.table_id,
                seats=seats,
                stems=tuple((bee,) for bee in event.stems),
                phase="dealt",
                clock=event.clock,
                proof=event.proof,
                version=version,
            )
        case TurnStarted():
            seats = tuple(
                replace(s, tapped=None, confirmed=None, by_clock="none") for s in state.seats
            )
            return replace(
                state,
                seats=seats,
                turn=event.turn,
                phase="picking",
                deadline=event.deadline,
                version=version,
            )
        case BeeTapped():
            return _with_seat(state, event.seat, version, tapped=event.bee)
        case PickConfirmed():
            return _with_seat(
                state,
                event.seat,
                version,
                tapped=event.bee,
                confirmed=event.bee,
                by_clock=event.by_clock,
            )
        case PicksRevealed():
            played = {pick.seat: pick.bee for pick in event.picks}
            idle = _idle_reveal(state.seats, played)
            seats = tuple(
                replace(
                    s,
                    hand=tuple(b for b in s.hand if b != played.get(s.number)),
                    tapped=None,
                    confirmed=None,
                )
                for s in state.seats
            )
            return replace(
                state,
                seats=seats,
                in_flight=event.picks,
                revealed=event.picks,
                phase="flying",
                deadline=None,
                idle_turns=state.idle_turns + 1 if idle else 0,
                version=version,
            )
        case BeeLanded():
            stems = list(state.stems)
            state = _landed(state, event.seat, event.bee)
            if event.taken:
                state = _took(state, event.seat, event.taken)
                stems[event.stem - 1] = (event.bee,)
            else:
                stems[event.stem - 1] = (*stems[event.stem - 1], event.bee)
            return replace(state, stems=tuple(stems), version=version)
        case StemChoiceRequired():
            return replace(
                state,
                phase="choosing",
                pending=Pick(seat=event.seat, bee=event.bee),
                deadline=event.deadline,
                version=version,
            )
        case StemTaken():
            stems = list(state.stems)
            stems[event.stem - 1] = (event.bee,)
            state = _took(_landed(state, event.seat, event.bee), event.seat, event.taken)
            return replace(
                state,
                stems=tuple(stems),
                phase="flying",
                pending=None,
                deadline=None,
                version=version,
            )
        case SeatLeft():
            return _with_seat(
                state,
                event.seat,
                version,
                left=True,
                tapped=None,
                confirmed=None,
                by_clock="none",
            )
        case GameEnded():
            return replace(
                state,
                phase="ended",
                winners=event.winners,
                end_reason=event.reason,
                pending=None,
                deadline=None,
                version=version,
            )
    raise AssertionError(f"unknown event {event!r}")  # pragma: no cover - the union is closed


def fold(events: Iterable[Event], state: GameState = initial_state) -> GameState:
    """The state after `events`, from `state`: exactly `evolve` applied to each event in turn,
    but applied to one working copy (`_Work`) and frozen into a `GameState` once, at the end."""
    work = _Work(state)
    for event in events:
        work.apply(event)
    return work.freeze()


class _Work:
    """A `GameState` being changed in place by one fold or one decision, never seen outside
    this module. The seats and stems are lists (each seat still an immutable `SeatState`,
    replaced when it changes, as `evolve` replaces it), the rest plain attributes; `apply`
    records an event as `evolve` does, and `freeze` builds the one `GameState` at the end.
    `tests/unit/test_fast_fold.py` holds it to exactly the states of `evolve`, event by event.
    """

    __slots__ = (
        "base",
        "clock",
        "deadline",
        "end_reason",
        "idle_turns",
        "in_flight",
        "once",
        "pending",
        "phase",
        "revealed",
        "seats",
        "stems",
        "turn",
        "version",
        "winners",
    )

    def __init__(self, state: GameState) -> None:
        self.base = state
        self.seats = list(state.seats)
        self.stems = list(state.stems)
        self.turn = state.turn
        self.phase: Phase = state.phase
        self.in_flight = list(state.in_flight)
        self.revealed = state.revealed
        self.pending = state.pending
        self.deadline = state.deadline
        self.clock = state.clock
        self.idle_turns = state.idle_turns
        self.winners = state.winners
        self.end_reason = state.end_reason
        self.version = state.version
        # The fields set once a game (ids, commitment, proof, server seed), when an event sets them.
        self.once: dict[str, object] = {}

    def freeze(self) -> GameState:
        if self.version == self.base.version:
            return self.base  # nothing applied
        state = replace(
            self.base,
            seats=tuple(self.seats),
            stems=tuple(self.stems),
            turn=self.turn,
            phase=self.phase,
            in_flight=tuple(self.in_flight),
            revealed=self.revealed,
            pending=self.pending,
            deadline=self.deadline,
            clock=self.clock,
            idle_turns=self.idle_turns,
            winners=self.winners,
            end_reason=self.end_reason,
            version=self.version,
        )
        return replace(state, **self.once) if self.once else state

    def apply(self, event: Event) -> None:
        """`evolve`, in place. Dispatched on the exact type through `_APPLY`: `isinstance` (and so
        `match`) costs about 0.2 µs a class on msgspec structs, and this runs for every event."""
        self.version += 1
        _APPLY[type(event)](self, event)

    def _pick_confirmed(self, event: PickConfirmed) -> None:
        seats = self.seats
        index = event.seat - 1
        seats[index] = replace(
            seats[index], tapped=event.bee, confirmed=event.bee, by_clock=event.by_clock
        )

    def _bee_landed(self, event: BeeLanded) -> None:
        self._landed(event.seat, event.bee)
        if event.taken:
            self._took(event.seat, event.taken)
            self.stems[event.stem - 1] = (event.bee,)
        else:
            self.stems[event.stem - 1] = (*self.stems[event.stem - 1], event.bee)

    def _picks_revealed(self, event: PicksRevealed) -> None:
        seats = self.seats
        played = {pick.seat: pick.bee for pick in event.picks}
        idle = _idle_reveal(seats, played)
        for index, seat in enumerate(seats):
            hand = _without(seat.hand, played.get(seat.info.seat))
            seats[index] = replace(seat, hand=hand, tapped=None, confirmed=None)
        self.in_flight = list(event.picks)
        self.revealed = event.picks
        self.phase = "flying"
        self.deadline = None
        self.idle_turns = self.idle_turns + 1 if idle else 0

    def _turn_started(self, event: TurnStarted) -> None:
        seats = self.seats
        for index, seat in enumerate(seats):
            if seat.tapped is not None or seat.confirmed is not None or seat.by_clock != "none":
                seats[index] = replace(seat, tapped=None, confirmed=None, by_clock="none")
        self.turn = event.turn
        self.phase = "picking"
        self.deadline = event.deadline

    def _bee_tapped(self, event: BeeTapped) -> None:
        seats = self.seats
        index = event.seat - 1
        seats[index] = replace(seats[index], tapped=event.bee)

    def _stem_taken(self, event: StemTaken) -> None:
        self.stems[event.stem - 1] = (event.bee,)
        self._landed(event.seat, event.bee)
        self._took(event.seat, event.taken)
        self.phase = "flying"
        self.pending = None
        self.deadline = None

    def _stem_choice_required(self, event: StemChoiceRequired) -> None:
        self.phase = "choosing"
        self.pending = Pick(seat=event.seat, bee=event.bee)
        self.deadline = event.deadline

    def _seat_left(self, event: SeatLeft) -> None:
        seats = self.seats
        index = event.seat - 1
        seats[index] = replace(
            seats[index], left=True, tapped=None, confirmed=None, by_clock="none"
        )

    def _game_ended(self, event: GameEnded) -> None:
        self.phase = "ended"
        self.winners = event.winners
        self.end_reason = event.reason
        self.pending = None
        self.deadline = None

    def _game_started(self, event: GameStarted) -> None:
        seats = self.seats
        seats[:] = [
            SeatState(info=info, hand=tuple(sorted(hand)))
            for info, hand in zip(event.seats, event.hands, strict=True)
        ]
        self.stems = [(bee,) for bee in event.stems]
        self.phase = "dealt"
        self.clock = event.clock
        self.once.update(game_id=event.game_id, table_id=event.table_id, proof=event.proof)

    def _deal_committed(self, event: DealCommitted) -> None:
        self.once.update(
            game_id=event.game_id, table_id=event.table_id, commitment=event.commitment
        )

    def _deal_revealed(self, event: DealRevealed) -> None:
        self.once["server_seed"] = event.server_seed

    def _landed(self, seat: int, bee: int) -> None:
        flying = self.in_flight
        first = flying[0] if flying else None
        if (
            first is not None
            and first.seat == seat
            and first.bee == bee
            and flying.count(first) == 1
        ):
            del flying[0]  # the bee that lands is the first in flight, as the rules fly them
        else:
            self.in_flight = [p for p in flying if not (p.seat == seat and p.bee == bee)]

    def _took(self, number: int, taken: tuple[int, ...]) -> None:
        seat = self.seats[number - 1]
        took = pile_stings(taken)
        self.seats[number - 1] = replace(
            seat,
            pile=(*seat.pile, *taken),
            stings=seat.stings + took,
            biggest_take=max(seat.biggest_take, took),
        )


# The fold of each event type (`_Work.apply`).
_APPLY: dict[type, Callable[[_Work, Any], None]] = {
    PickConfirmed: _Work._pick_confirmed,
    BeeLanded: _Work._bee_landed,
    PicksRevealed: _Work._picks_revealed,
    TurnStarted: _Work._turn_started,
    BeeTapped: _Work._bee_tapped,
    StemTaken: _Work._stem_taken,
    StemChoiceRequired: _Work._stem_choice_required,
    SeatLeft: _Work._seat_left,
    GameEnded: _Work._game_ended,
    GameStarted: _Work._game_started,
    DealCommitted: _Work._deal_committed,
    DealRevealed: _Work._deal_revealed,
}


def _without(hand: tuple[int, ...], bee: int | None) -> tuple[int, ...]:
    """The hand without the bee played: `evolve`'s `tuple(b for b in hand if b != bee)`, as one
    slice."""
    if bee is None or bee not in hand:
        return hand
    at = hand.index(bee)
    rest = hand[:at] + hand[at + 1 :]
    # Dealt twice? No deal does that, but `evolve` would drop both.
    return rest if bee not in rest else tuple(b for b in hand if b != bee)


def _idle_reveal(seats: Sequence[SeatState], played: dict[int, int]) -> bool:
    """A revealed turn is idle when it has people's picks and the clock chose every one of them
    as the seat's lowest bee: no person tapped or confirmed anything (bee players don't count)."""
    people = [s for s in seats if s.info.kind != "bee" and s.info.seat in played]
    return bool(people) and all(s.by_clock == "lowest" for s in people)


def _with_seat(state: GameState, number: int, version: int, **changes: object) -> GameState:
    seats = list(state.seats)
    seats[number - 1] = replace(seats[number - 1], **changes)
    return replace(state, seats=tuple(seats), version=version)


def _landed(state: GameState, seat: int, bee: int) -> GameState:
    flying = tuple(p for p in state.in_flight if not (p.seat == seat and p.bee == bee))
    return replace(state, in_flight=flying)


def _took(state: GameState, number: int, taken: tuple[int, ...]) -> GameState:
    seats = list(state.seats)
    seat = seats[number - 1]
    took = pile_stings(taken)
    seats[number - 1] = replace(
        seat,
        pile=(*seat.pile, *taken),
        stings=seat.stings + took,
        biggest_take=max(seat.biggest_take, took),
    )
    return replace(state, seats=tuple(seats))


# ---------------------------------------------------------------------------------------------
# decide: the rules


def decide(command: Command, state: GameState) -> list[Event]:
    """The events `command` causes in `state` (or a `RuleViolation`)."""
    return decide_and_evolve(command, state)[1]


def decide_and_evolve(command: Command, state: GameState) -> tuple[GameState, list[Event]]:
    """`decide`, and the state after its events: `fold(decide(command, state), state)`, but each
    event is applied once, as the rules emit it (they need the state so far to go on), to one
    working copy of the state, frozen into the `GameState` returned at the end."""
    # Dispatched on the exact type, the commonest first (see `_Work.apply`).
    if type(command) is ConfirmPick:
        number = command.seat
        seats = state.seats
        if state.phase == "picking" and 0 < number <= len(seats):
            seat = seats[number - 1]  # the checks of `_picking_seat`, inline
            if seat.left or seat.confirmed is not None:
                seat = _picking_seat(state, number)  # raises the refusal
        else:
            seat = _picking_seat(state, number)
        bee = command.bee if command.bee is not None else seat.tapped
        if bee is None:
            raise errors.NothingTapped("Tap a bee, or name one, before you confirm.")
        if bee not in seat.hand:
            _require_in_hand(seat, bee)  # raises the refusal
        confirmed = PickConfirmed(seat=number, bee=bee)
        for other in seats:
            if other.confirmed is None and not other.left and other.info.seat != number:
                # Another seat has still to pick (the commonest move): one seat changes.
                changed = list(seats)
                changed[number - 1] = replace(seat, tapped=bee, confirmed=bee, by_clock="none")
                return replace(state, seats=tuple(changed), version=state.version + 1), [confirmed]
        cascade = _Cascade(state, command.at)
        cascade.emit(confirmed)
        cascade.reveal_when_all_in()
        return cascade.outcome
    if type(command) is TapBee:
        seat = _picking_seat(state, command.seat)
        _require_in_hand(seat, command.bee)
        tapped = BeeTapped(seat=command.seat, bee=command.bee)
        return evolve(state, tapped), [tapped]
    if type(command) is StartGame:
        events = _start(command, state)
        return fold(events, state), events
    if type(command) is TakeStem:
        if not 1 <= command.stem <= STEM_COUNT:
            raise errors.StemOutOfRange(f"Stems are numbered 1 to {STEM_COUNT}.")
        _require_live(state)
        if state.phase != "choosing" or state.pending is None:
            raise errors.NotYourDecision("No bee is too low: there is no stem to choose.")
        if state.pending.seat != command.seat:
            raise errors.NotYourDecision(
                f"Seat {state.pending.seat} chooses the stem, not seat {command.seat}."
            )
        return _Cascade(state, command.at).take(command.stem, chosen_by="player").outcome
    if type(command) is LeaveGame:
        _require_live(state)
        _require_playing(state, command.seat)
        return _Cascade(state, command.at).leave(command.seat).outcome
    if type(command) is ExpireClock:
        return _Cascade(state, command.at).expire(command.deadline).outcome
    raise AssertionError(f"unknown command {command!r}")  # pragma: no cover


def _start(command: StartGame, state: GameState) -> list[Event]:
    if state.phase != "not_started":
        raise errors.GameAlreadyStarted("This game has already been dealt.")
    players = len(command.seats)
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise errors.InvalidSeats(f"A game has {MIN_PLAYERS} to {MAX_PLAYERS} seats.")
    if [s.seat for s in command.seats] != list(range(1, players + 1)):
        raise errors.InvalidSeats("Seats are numbered 1, 2, 3, … in order.")
    if state.commitment is not None and (
        command.proof is None or command.proof.commitment != state.commitment
    ):
        raise errors.InvalidDeal("The deal must answer this game's published commitment.")
    if sorted(command.deck_order) != list(deck(players)):
        raise errors.InvalidDeal(
            f"The deck for {players} players is the bees 1 to {len(deck(players))}."
        )
    order = command.deck_order
    hands = tuple(tuple(order[i * HAND_SIZE : (i + 1) * HAND_SIZE]) for i in range(players))
    stems = tuple(order[players * HAND_SIZE :])
    started = GameStarted(
        game_id=command.game_id,
        table_id=command.table_id,
        seats=command.seats,
        hands=hands,
        stems=stems,
        clock=command.clock,
        proof=command.proof,
    )
    return [started, TurnStarted(turn=1, deadline=_deadline(command.clock, command.at, "turn"))]


def _require_live(state: GameState) -> None:
    if state.phase == "ended":
        raise errors.GameOver("The game has ended.")
    if state.phase in ("not_started", "dealt"):
        raise errors.GameNotStarted("The game has not started.")


def _require_playing(state: GameState, number: int) -> SeatState:
    if not 1 <= number <= len(state.seats):
        raise errors.SeatNotPlaying(f"There is no seat {number} in this game.")
    seat = state.seat(number)
    if seat.left:
        raise errors.SeatNotPlaying(f"Seat {number} has left the game.")
    return seat


def _picking_seat(state: GameState, number: int) -> SeatState:
    _require_live(state)
    seat = _require_playing(state, number)
    if state.phase == "choosing":
        raise errors.NotYourDecision("A too-low bee's player is choosing a stem; wait for it.")
    if seat.confirmed is not None:
        raise errors.AlreadyConfirmed("A confirmed pick is final.")
    return seat


def _require_in_hand(seat: SeatState, bee: int) -> None:
    if bee not in seat.hand:
        raise errors.BeeNotInHand(f"Bee {bee} is not in your hand.")


def _deadline(
    clock: ClockSettings | None, at: datetime | None, kind: Literal["turn", "choice"]
) -> datetime | None:
    if clock is None or at is None:
        return None
    seconds = clock.turn_seconds if kind == "turn" else clock.choice_seconds
    return at + timedelta(seconds=seconds)


class _Cascade(_Work):
    """The events of one decision, applied to the working state as they are emitted, so each
    rule sees the state so far."""

    __slots__ = ("at", "events")

    def __init__(self, state: GameState, at: datetime | None) -> None:
        super().__init__(state)
        self.at = at
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)
        self.version += 1
        _APPLY[type(event)](self, event)

    @property
    def outcome(self) -> tuple[GameState, list[Event]]:
        """The state after every event emitted so far, and those events."""
        return self.freeze(), self.events

    def take(self, stem: int, chosen_by: Chooser) -> _Cascade:
        pending = self.pending
        assert pending is not None
        taken = self.stems[stem - 1]
        self.emit(
            StemTaken(
                seat=pending.seat, bee=pending.bee, stem=stem, taken=taken, chosen_by=chosen_by
            )
        )
        self._fly()
        return self

    def leave(self, seat: int) -> _Cascade:
        self.emit(SeatLeft(seat=seat))
        people = [s for s in self.seats if not s.is_bee]
        staying = [s for s in people if s.playing]
        if len(staying) == 0:
            self._end("abandoned", winners=())
        elif len(staying) == 1 and len(people) > 1:
            # Bee players don't keep a game going for one person (seed §9).
            self._end("last_person_standing", winners=(staying[0].number,))
        elif self.phase == "choosing" and self.pending is not None:
            if self.pending.seat == seat:
                self.take(cheapest_stem(self.stems), chosen_by="rule")
        elif self.phase == "picking":
            self.reveal_when_all_in()
        return self

    def expire(self, deadline: datetime) -> _Cascade:
        """The clock that ends at `deadline` ran out (seed §7).

        Nothing happens (no events) unless `deadline` is exactly the game's running deadline and
        `at` is not before it: a stale or early timer is not an error. Untimed and ended games
        have no running deadline, so the clock never does anything there.

        Turn clock (phase picking): every playing seat that has not confirmed plays the bee it
        tapped (`by_clock="tapped"`), or its lowest bee if it tapped nothing (`"lowest"`); then
        the picks are revealed and fly as usual. A person's "lowest" bee that is too low takes
        the cheapest stem at once (`chosen_by="clock"`); any other too-low person gets a choice
        with a choice deadline. Bee players pick as a turn starts, so only a seat the service
        failed to pick for would reach the clock here; it plays its lowest too.

        Abandonment: a turn is idle when, as its clock runs out, no playing person has tapped or
        confirmed anything (bee players don't count). Each idle turn that is played adds one to
        `GameState.idle_turns` (folded from `PicksRevealed`: every person's pick `"lowest"`),
        and any turn that is not idle sets it back to 0. When the clock runs out on the third idle
        turn in a row, the game ends at once as abandoned, without playing that turn:
        `GameEnded(reason="abandoned", winners=())`.

        Choice clock (phase choosing): the cheapest stem is taken for the choosing seat
        (`chosen_by="clock"`), then the rest of the turn's bees fly.
        """
        at = self.at
        if self.deadline is None or self.deadline != deadline or at is None or at < deadline:
            return self
        if self.phase == "picking":
            if self._idle_now() and self.idle_turns + 1 >= IDLE_TURNS_TO_ABANDON:
                self._end("abandoned", winners=())
                return self
            for seat in list(self.seats):
                if not seat.playing or seat.confirmed is not None or not seat.hand:
                    continue
                by_clock: ClockPlay = "tapped" if seat.tapped is not None else "lowest"
                bee = seat.tapped if seat.tapped is not None else seat.hand[0]
                self.emit(PickConfirmed(seat=seat.number, bee=bee, by_clock=by_clock))
            self.reveal_when_all_in()
        elif self.phase == "choosing" and self.pending is not None:
            self.take(cheapest_stem(self.stems), chosen_by="clock")
        return self

    def _idle_now(self) -> bool:
        """No playing person has tapped or confirmed anything this turn."""
        people = [s for s in self.seats if not s.is_bee and s.playing]
        return bool(people) and all(s.tapped is None and s.confirmed is None for s in people)

    def reveal_when_all_in(self) -> None:
        """Reveal the turn's picks, lowest first, and fly them, once every playing seat is in."""
        picks: list[tuple[int, int]] = []
        for seat in self.seats:
            if seat.left:
                continue
            if seat.confirmed is None:
                return
            picks.append((seat.confirmed, seat.info.seat))
        picks.sort()
        revealed = tuple([Pick(seat=number, bee=bee) for bee, number in picks])
        self.events.append(PicksRevealed(turn=self.turn, picks=revealed))
        # Applied here rather than by `_Work._picks_revealed`, as the picks are the seats' own
        # confirmed bees: each leaves its seat's hand, and the turn is idle if every person's
        # pick was the clock's "lowest".
        self.version += 1
        seats = self.seats
        people = lowest = 0
        for index, seat in enumerate(seats):
            bee = seat.confirmed
            if bee is None:  # a seat that has left
                if seat.tapped is not None:
                    seats[index] = replace(seat, tapped=None)
                continue
            if seat.info.kind != "bee":
                people += 1
                lowest += seat.by_clock == "lowest"
            hand = seat.hand  # holds the confirmed bee once (checked when it was confirmed)
            at = hand.index(bee)
            seats[index] = replace(
                seat, hand=hand[:at] + hand[at + 1 :], tapped=None, confirmed=None
            )
        self.in_flight = list(revealed)
        self.revealed = revealed
        self.phase = "flying"
        self.deadline = None
        self.idle_turns = self.idle_turns + 1 if people and lowest == people else 0
        self._fly()

    def _fly(self) -> None:
        stems = self.stems
        flying = self.in_flight
        while flying:
            pick = flying[0]
            bee = pick.bee
            stem = 0  # `landing_stem`, inline: it runs for every bee
            best_top = 0
            for index, on in enumerate(stems, start=1):
                top = on[-1]
                if best_top < top < bee:
                    stem, best_top = index, top
            if not stem:
                seat = self.seats[pick.seat - 1]
                chooser: Chooser | None = None
                if seat.info.kind == "bee" or seat.left:
                    chooser = "rule"
                elif seat.by_clock == "lowest":
                    # Seed §7: the clock played your lowest bee and it is too low: no choice.
                    chooser = "clock"
                if chooser is not None:
                    # Emitted and applied here, as `_Work._stem_taken` would apply it.
                    cheapest = cheapest_stem(stems)
                    taken = stems[cheapest - 1]
                    self.events.append(
                        StemTaken(
                            seat=pick.seat, bee=bee, stem=cheapest, taken=taken, chosen_by=chooser
                        )
                    )
                    self.version += 1
                    stems[cheapest - 1] = (bee,)
                    del flying[0]
                    self._took(pick.seat, taken)
                    self.phase = "flying"
                    self.pending = None
                    self.deadline = None
                    continue
                deadline = _deadline(self.clock, self.at, "choice")
                self.emit(StemChoiceRequired(seat=pick.seat, bee=pick.bee, deadline=deadline))
                return
            # The commonest event, emitted and applied here without `_Work.apply`'s dispatch; the
            # bee that lands is the first in flight, and the picks in flight are distinct.
            bees = stems[stem - 1]
            self.version += 1
            del flying[0]
            if len(bees) >= STEM_CAPACITY:
                self.events.append(BeeLanded(seat=pick.seat, bee=bee, stem=stem, taken=bees))
                self._took(pick.seat, bees)
                stems[stem - 1] = (bee,)
            else:
                self.events.append(BeeLanded(seat=pick.seat, bee=bee, stem=stem))
                stems[stem - 1] = (*bees, bee)
        if self.turn >= TURNS:
            self._end("finished", winners_of(self.seats))
        else:
            deadline = _deadline(self.clock, self.at, "turn")
            self.emit(TurnStarted(turn=self.turn + 1, deadline=deadline))

    def _end(self, reason: EndReason, winners: tuple[int, ...]) -> None:
        self.emit(
            GameEnded(stings=tuple(s.stings for s in self.seats), winners=winners, reason=reason)
        )
