"""The one event applier: how each fact changes a game's state. It records and never refuses.

`fold(events, state)` applies events to a working copy (`Folding`) and freezes it into one
`GameState` at the end; `evolve(state, event)` is `fold((event,), state)`. The decisions
(`decide.py`) go on from the state their own events make, so their cascade applies each event
it emits through this same applier (`Folding.emit`) and never changes the state itself.

Why a working copy: a game is about 60 events, and building an immutable `GameState` for each
would cost most of a rebuild. The seats and stems are lists while events change them (each seat
still an immutable `SeatState`, replaced when it changes), the turn's fields plain attributes,
and the rest of the state a `GameState` replaced only by the few events that change it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from msgspec.structs import replace

from service.domain.rules.cards import pile_stings
from service.domain.rules.clock import is_idle_turn
from service.domain.rules.events import (
    BeeLanded,
    BeeTapped,
    DealCommitted,
    DealRevealed,
    Event,
    GameEnded,
    GameStarted,
    Pick,
    PickConfirmed,
    PicksRevealed,
    SeatLeft,
    StemChoiceRequired,
    StemTaken,
    TurnStarted,
)
from service.domain.rules.state import GameState, Phase, SeatState, Stem, initial_state


def fold(events: Iterable[Event], state: GameState = initial_state) -> GameState:
    """The state after `events`, from `state`."""
    work = Folding(state)
    for event in events:
        work.apply(event)
    return work.freeze()


def evolve(state: GameState, event: Event) -> GameState:
    """The state after one event: `fold((event,), state)`. A confirmed pick, the commonest event
    of all, changes one seat: it is applied by the same `_confirmed` without a working copy."""
    if type(event) is PickConfirmed:
        seats = list(state.seats)
        index = event.seat - 1
        seats[index] = _confirmed(seats[index], event)
        return replace(state, seats=tuple(seats), version=state.version + 1)
    work = Folding(state)
    work.apply(event)
    return work.freeze()


def _confirmed(seat: SeatState, event: PickConfirmed) -> SeatState:
    """A seat after its pick is confirmed (by the seat, or by the clock)."""
    return replace(seat, tapped=event.bee, confirmed=event.bee, by_clock=event.by_clock)


class Folding:
    """A `GameState` being changed by events in place, never seen outside the rules.

    The fields events change most are attributes here: the seats, the stems and the picks in
    flight as lists (each seat still an immutable `SeatState`, replaced when it changes), and the
    turn, its phase, deadline, revealed picks, idle count and pending choice. The rest stay in
    `state`, replaced by the few events that change them. `freeze` builds the one `GameState` at
    the end."""

    __slots__ = (
        "deadline",
        "idle_turns",
        "in_flight",
        "pending",
        "phase",
        "revealed",
        "seats",
        "state",
        "stems",
        "turn",
        "version",
    )

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.seats: list[SeatState] = list(state.seats)
        self.stems: list[Stem] = list(state.stems)
        self.in_flight: list[Pick] = list(state.in_flight)  # the first lands first
        self.version = state.version
        self.turn = state.turn
        self.phase: Phase = state.phase
        self.deadline = state.deadline
        self.revealed = state.revealed
        self.idle_turns = state.idle_turns
        self.pending = state.pending

    def freeze(self) -> GameState:
        state = self.state
        if self.version == state.version:
            return state  # nothing applied
        return replace(
            state,
            seats=tuple(self.seats),
            stems=tuple(self.stems),
            in_flight=tuple(self.in_flight),
            turn=self.turn,
            phase=self.phase,
            deadline=self.deadline,
            revealed=self.revealed,
            idle_turns=self.idle_turns,
            pending=self.pending,
            version=self.version,
        )

    def apply(self, event: Event) -> None:
        """Record `event`. Dispatched on the exact type through `APPLY`: `isinstance` (and so
        `match`) costs about 0.2 µs a class on msgspec structs, and this runs for every event."""
        self.version += 1
        APPLY[type(event)](self, event)

    # One method an event type, in the order of a game.

    def _deal_committed(self, event: DealCommitted) -> None:
        self.state = replace(
            self.state, game_id=event.game_id, table_id=event.table_id, commitment=event.commitment
        )

    def _game_started(self, event: GameStarted) -> None:
        self.seats = [
            SeatState(info=info, hand=tuple(sorted(hand)))
            for info, hand in zip(event.seats, event.hands, strict=True)
        ]
        self.stems = [(bee,) for bee in event.stems]
        self.state = replace(
            self.state,
            game_id=event.game_id,
            table_id=event.table_id,
            clock=event.clock,
            proof=event.proof,
        )
        self.phase = "dealt"

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

    def _pick_confirmed(self, event: PickConfirmed) -> None:
        seats = self.seats
        index = event.seat - 1
        seats[index] = _confirmed(seats[index], event)

    def _picks_revealed(self, event: PicksRevealed) -> None:
        """Each pick leaves its seat's hand and flies, lowest first; the turn may be idle."""
        seats = self.seats
        picks = event.picks
        idle = is_idle_turn(seats, picks)
        for pick in picks:
            index = pick.seat - 1
            seat = seats[index]
            bee, hand = pick.bee, seat.hand
            try:
                at = hand.index(bee)
            except ValueError:
                pass  # not in the hand: nothing leaves it
            else:  # every copy of it leaves the (ascending) hand; no deal has two
                hand = hand[:at] + hand[at + 1 :]
                if at < len(hand) and hand[at] == bee:
                    hand = tuple(b for b in hand if b != bee)
            seats[index] = replace(seat, hand=hand, tapped=None, confirmed=None)
        if len(picks) < len(seats):  # a seat that left: nothing of this turn is its
            played = {pick.seat for pick in picks}
            for index, seat in enumerate(seats):
                if seat.info.seat not in played and (
                    seat.tapped is not None or seat.confirmed is not None
                ):
                    seats[index] = replace(seat, tapped=None, confirmed=None)
        self.in_flight = list(picks)
        self.revealed = picks
        self.phase = "flying"
        self.deadline = None
        self.idle_turns = self.idle_turns + 1 if idle else 0

    def _bee_landed(self, event: BeeLanded) -> None:
        flying = self.in_flight
        if flying and flying[0].bee == event.bee and flying[0].seat == event.seat:
            del flying[0]  # `_landed`, inline: the commonest event of a cascade
        else:
            self._landed(event.seat, event.bee)
        index = event.stem - 1
        if event.taken:  # the sixth bee
            self._took(event.seat, event.taken)
            self.stems[index] = (event.bee,)
        else:
            self.stems[index] += (event.bee,)

    def _stem_choice_required(self, event: StemChoiceRequired) -> None:
        self.phase = "choosing"
        self.pending = Pick(seat=event.seat, bee=event.bee)
        self.deadline = event.deadline

    def _stem_taken(self, event: StemTaken) -> None:
        self._landed(event.seat, event.bee)
        self._took(event.seat, event.taken)
        self.stems[event.stem - 1] = (event.bee,)
        self.phase = "flying"
        self.pending = None
        self.deadline = None

    def _seat_left(self, event: SeatLeft) -> None:
        seats = self.seats
        index = event.seat - 1
        seats[index] = replace(
            seats[index], left=True, tapped=None, confirmed=None, by_clock="none"
        )

    def _game_ended(self, event: GameEnded) -> None:
        self.state = replace(self.state, winners=event.winners, end_reason=event.reason)
        self.phase = "ended"
        self.pending = None
        self.deadline = None

    def _deal_revealed(self, event: DealRevealed) -> None:
        self.state = replace(self.state, server_seed=event.server_seed)

    def _landed(self, seat: int, bee: int) -> None:
        """The bee is no longer in flight (it is the first, as the rules fly them lowest first;
        an event out of that order is recorded all the same)."""
        flying = self.in_flight
        if flying and flying[0].bee == bee and flying[0].seat == seat:
            del flying[0]
        else:
            self.in_flight = [p for p in flying if not (p.seat == seat and p.bee == bee)]

    def _took(self, number: int, taken: Stem) -> None:
        seats = self.seats
        seat = seats[number - 1]
        took = pile_stings(taken)
        seats[number - 1] = replace(
            seat,
            pile=seat.pile + taken,
            stings=seat.stings + took,
            biggest_take=took if took > seat.biggest_take else seat.biggest_take,
        )


# The applier of each event type (`Folding.apply`).
APPLY: dict[type, Callable[[Folding, Any], None]] = {
    PickConfirmed: Folding._pick_confirmed,
    BeeLanded: Folding._bee_landed,
    PicksRevealed: Folding._picks_revealed,
    TurnStarted: Folding._turn_started,
    BeeTapped: Folding._bee_tapped,
    StemTaken: Folding._stem_taken,
    StemChoiceRequired: Folding._stem_choice_required,
    SeatLeft: Folding._seat_left,
    GameEnded: Folding._game_ended,
    GameStarted: Folding._game_started,
    DealCommitted: Folding._deal_committed,
    DealRevealed: Folding._deal_revealed,
}
