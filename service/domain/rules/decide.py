"""The decisions: what each command causes, by the rules of the seed, or a `RuleViolation`.

`decide(command, state)` only reads the state and emits events. A decision that sets off more
(the last pick of a turn reveals the picks, and the bees fly, land, take stems and start the next
turn or end the game) goes on from the state its own events make: its `_Cascade` applies each
event it emits through the one applier (`fold.py`) and reads the state so far, never changing it
any other way. `decide_and_evolve` returns those events and that state, so nothing is folded
twice. The rules it applies by name: `flight.py` (where a bee lands, the sixth bee, the too-low
bee) and `clock.py` (what the clock plays, the idle turn).

No I/O, no clock, no randomness: the deal arrives as data (`StartGame.deck_order`) and the time
as `command.at`. The bee players' choice of bee is a policy outside the rules (`bees.py`); the
one thing the seed fixes for them, the cheapest stem when their bee is too low, is a rule.
"""

from __future__ import annotations

from datetime import datetime
from operator import attrgetter

from service.domain.rules import errors
from service.domain.rules.cards import (
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    STEM_COUNT,
    TURNS,
    deck,
    deck_size,
)
from service.domain.rules.clock import abandons, clock_play, deadline_after
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
    EndReason,
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
from service.domain.rules.flight import is_sixth, landing_stem, too_low_chooser, too_low_stem
from service.domain.rules.fold import APPLY, Folding, evolve, fold
from service.domain.rules.state import GameState, SeatState, winners_of

# Every pick there can be, made once: `_PICKS[seat][bee]` (a reveal would make 2 to 8 a turn).
_PICKS = [
    [Pick(seat=seat, bee=bee) for bee in range(deck_size(MAX_PLAYERS) + 1)]
    for seat in range(MAX_PLAYERS + 1)
]
_BEE = attrgetter("bee")


def decide(command: Command, state: GameState) -> list[Event]:
    """The events `command` causes in `state` (or a `RuleViolation`)."""
    return decide_and_evolve(command, state)[1]


def decide_and_evolve(command: Command, state: GameState) -> tuple[GameState, list[Event]]:
    """`decide`, and the state after its events: `fold(decide(command, state), state)`, each
    event applied once."""
    # Dispatched on the exact type, the commonest first (see `Folding.apply`).
    if type(command) is ConfirmPick:
        # A confirmed pick is final; the last one of a turn reveals every pick, and they fly.
        number = command.seat
        seats = state.seats
        if state.phase == "picking" and 0 < number <= len(seats):
            seat = seats[number - 1]  # the checks of `_picking_seat` on the common path
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
            if other.confirmed is None and not other.left and other is not seat:
                return evolve(state, confirmed), [confirmed]  # another seat has still to pick
        cascade = _Cascade(state, command.at)
        cascade.events.append(confirmed)
        cascade._pick_confirmed(confirmed)
        cascade.reveal()
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
    turn = TurnStarted(turn=1, deadline=deadline_after(command.clock, command.at, "turn"))
    return [started, turn]


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


class _Cascade(Folding):
    """The events of one decision, each applied as it is emitted, so that each rule reads the
    state so far (its attributes, and `self.state` for the rest).

    Where the type of the event is known, the cascade emits it as `emit` does, calling its
    applier by name (`Folding._bee_landed`, …) rather than through `APPLY`. The version is
    counted once, in `outcome`: the state's, plus the events emitted."""

    __slots__ = ("at", "events")

    def __init__(self, state: GameState, at: datetime | None) -> None:
        Folding.__init__(self, state)
        self.at = at
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)
        APPLY[type(event)](self, event)  # `Folding.apply`, without one more call

    @property
    def outcome(self) -> tuple[GameState, list[Event]]:
        """The state after every event emitted so far, and those events."""
        self.version = self.state.version + len(self.events)
        return self.freeze(), self.events

    def take(self, stem: int, chosen_by: Chooser) -> _Cascade:
        """The pending too-low bee takes `stem`; the rest of the turn's bees fly on."""
        pending = self.pending
        assert pending is not None
        taken = self.stems[stem - 1]
        self.emit(
            StemTaken(
                seat=pending.seat, bee=pending.bee, stem=stem, taken=taken, chosen_by=chosen_by
            )
        )
        self.fly()
        return self

    def leave(self, seat: int) -> _Cascade:
        self.emit(SeatLeft(seat=seat))
        people = [s for s in self.seats if not s.is_bee]
        staying = [s for s in people if s.playing]
        phase, pending = self.phase, self.pending
        if len(staying) == 0:
            self.end("abandoned", winners=())
        elif len(staying) == 1 and len(people) > 1:
            # Bee players don't keep a game going for one person (seed §9).
            self.end("last_person_standing", winners=(staying[0].number,))
        elif phase == "choosing" and pending is not None:
            if pending.seat == seat:
                self.take(too_low_stem(self.stems), chosen_by="rule")
        elif phase == "picking":
            self.reveal()
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
            if abandons(self.seats, self.idle_turns):
                self.end("abandoned", winners=())
                return self
            for seat in list(self.seats):
                if seat.playing and seat.confirmed is None and seat.hand:
                    bee, by_clock = clock_play(seat)
                    self.emit(PickConfirmed(seat=seat.number, bee=bee, by_clock=by_clock))
            self.reveal()
        elif self.phase == "choosing" and self.pending is not None:
            self.take(too_low_stem(self.stems), chosen_by="clock")
        return self

    def reveal(self) -> None:
        """Once every playing seat is in, reveal the turn's picks, lowest first, and fly them."""
        picks: list[Pick] = []
        for seat in self.seats:
            if seat.left:
                continue
            bee = seat.confirmed
            if bee is None:
                return
            picks.append(_PICKS[seat.info.seat][bee])
        picks.sort(key=_BEE)  # lowest first (the bees of a deal are distinct)
        revealed = PicksRevealed(turn=self.turn, picks=tuple(picks))
        self.events.append(revealed)
        self._picks_revealed(revealed)
        self.fly()

    def fly(self) -> None:
        """The bees in flight land one by one, lowest first (seed §3–§5), until a person must
        choose the stem for a too-low bee; then the next turn starts, or the game ends."""
        events = self.events
        while self.in_flight:
            pick = self.in_flight[0]
            seat, bee = pick.seat, pick.bee
            stems = self.stems
            stem = landing_stem(stems, bee)
            if stem is None:
                chooser = too_low_chooser(self.seats[seat - 1])
                if chooser is None:
                    deadline = deadline_after(self.state.clock, self.at, "choice")
                    self.emit(StemChoiceRequired(seat=seat, bee=bee, deadline=deadline))
                    return
                cheapest = too_low_stem(stems)
                took = StemTaken(
                    seat=seat, bee=bee, stem=cheapest, taken=stems[cheapest - 1], chosen_by=chooser
                )
                events.append(took)
                self._stem_taken(took)
            else:
                on = stems[stem - 1]
                if is_sixth(on):
                    landed = BeeLanded(seat=seat, bee=bee, stem=stem, taken=on)
                else:
                    landed = BeeLanded(seat=seat, bee=bee, stem=stem)
                events.append(landed)
                self._bee_landed(landed)
        turn = self.turn
        if turn >= TURNS:
            self.end("finished", winners_of(self.seats))
        else:
            started = TurnStarted(
                turn=turn + 1, deadline=deadline_after(self.state.clock, self.at, "turn")
            )
            events.append(started)
            self._turn_started(started)

    def end(self, reason: EndReason, winners: tuple[int, ...]) -> None:
        stings = tuple(s.stings for s in self.seats)
        self.emit(GameEnded(stings=stings, winners=winners, reason=reason))
