"""A game's history, version by version: the state right after each event, what each event did
(a step, in words), and what one caller may see of both (issue 26: replay).

Pure: the events come in, folded through the rules engine (`evolve`, the reference for one
event), and what comes out is decided by the same redaction as the live views
(`views.game_view`, `views.visible_event`): while the game is running, a caller sees at version
V only what their seat saw then; once it has ended, everything is public and every hand, tap
and pick shows.

A step is described from the event *as the caller may see it*, never from the stored one, so
its words cannot say more than the event shown beside it (an unrevealed pick reads "confirms a
bee"). The same words are the audit's `--replay` narrative (`audit/narrative.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from service.domain.rules.cards import TURNS, pile_stings, stings
from service.domain.rules.clock import IDLE_TURNS_TO_ABANDON
from service.domain.rules.engine import GameState, evolve, initial_state, is_sixth
from service.domain.rules.events import (
    BeeLanded,
    Chooser,
    ClockPlay,
    DealCommitted,
    DealRevealed,
    Event,
    GameEnded,
    PicksRevealed,
    SeatLeft,
    StemChoiceRequired,
    StemTaken,
    TurnStarted,
)
from service.domain.views import (
    GameView,
    PickView,
    VisibleBeeTapped,
    VisibleEventData,
    VisibleGameStarted,
    VisiblePickConfirmed,
    game_view,
    visible_event,
)

StepKind = Literal[
    "commitment",
    "deal",
    "turn",
    "tap",
    "confirm",
    "reveal",
    "landing",
    "sixth_bee",
    "too_low",
    "take",
    "leave",
    "end",
    "deal_revealed",
]


class Step(msgspec.Struct, frozen=True, kw_only=True):
    """What one event of the log did, as the caller may see it.

    Attributes:
        version: The event's version (its place in the game's log, from 1).
        kind: `commitment` (the server committed to the deal), `deal` (the hands and stems),
            `turn` (a turn began), `tap`, `confirm` (a pick is final), `reveal` (every pick
            shown, lowest first), `landing` (a bee landed on a stem), `sixth_bee` (a bee
            landed on a full stem and took its 5), `too_low` (a person's bee is lower than
            every stem: they choose one to take), `take` (a too-low bee took a stem), `leave`,
            `end`, `deal_revealed` (the server seed published).
        turn: The turn the game was in after this event (0 before the first).
        seat: The seat that acted or whose bee flew; null for the game's own events.
        bee: The bee involved; null when there is none or it is still hidden from the caller.
        stem: The stem it landed on or took, 1 to 4; null when none.
        taken: The bees taken off a stem (a sixth bee's 5, or a too-low bee's whole stem).
        taken_stings: The stings of `taken`.
        chosen_by: Who chose the stem a too-low bee took: `player`, `rule` (a bee player's,
            or a leaver's) or `clock`; null for other steps.
        by_clock: How the turn clock played a pick (`tapped`, `lowest`) or `none`; null for
            other steps and while the pick is hidden.
        text: The step in words, for people and for the audit's `--replay`.
    """

    version: int
    kind: StepKind
    turn: int
    seat: int | None = None
    bee: int | None = None
    stem: int | None = None
    taken: tuple[int, ...] = ()
    taken_stings: int = 0
    chosen_by: Chooser | None = None
    by_clock: ClockPlay | None = None
    text: str


class SeatAt(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's hand and pick at that version, as far as the caller may see them.

    Attributes:
        seat: The seat number, from 1.
        hand: Its hand at that version, ascending; null while hidden from the caller (another
            seat's, until the game has ended).
        hand_stings: The stings of each bee in `hand`, index by index; null with `hand`.
        tapped: The bee it had tapped (changeable) at that version; null if none or hidden.
        confirmed: The bee it had confirmed (final) at that version; null if none or hidden.
    """

    seat: int
    hand: tuple[int, ...] | None
    hand_stings: tuple[int, ...] | None
    tapped: int | None
    confirmed: int | None


class Changes(msgspec.Struct, frozen=True, kw_only=True):
    """What differs between the caller's answer at V−1 and at V (both as the caller may see
    them).

    Attributes:
        turn: The turn changed.
        phase: The phase changed.
        stems: The stems whose bees changed, 1 to 4.
        seats: The seats whose stings, pile, status, hand or pick changed.
    """

    turn: bool
    phase: bool
    stems: tuple[int, ...]
    seats: tuple[int, ...]


class Moment(msgspec.Struct, frozen=True, kw_only=True):
    """The game at one version as one caller may see it (the pure part of `getGameState`)."""

    view: GameView
    seats: tuple[SeatAt, ...]
    in_flight: tuple[PickView, ...]
    step: Step
    changes: Changes
    event: VisibleEventData


def states(events: Sequence[Event], start: GameState = initial_state) -> list[GameState]:
    """The state right after each event, folded one `evolve` at a time from `start`: the
    state after version `start.version + i + 1` is at index `i`."""
    out: list[GameState] = []
    state = start
    for event in events:
        state = evolve(state, event)
        out.append(state)
    return out


def seats_at(state: GameState, viewer: int | None, over: bool) -> tuple[SeatAt, ...]:
    """Every seat's hand and pick at `state`: all of them once the game is `over`, else only
    the viewer's own (none for a spectator)."""
    out = []
    for seat in state.seats:
        shown = over or seat.number == viewer
        out.append(
            SeatAt(
                seat=seat.number,
                hand=seat.hand if shown else None,
                hand_stings=tuple(stings(b) for b in seat.hand) if shown else None,
                tapped=seat.tapped if shown else None,
                confirmed=seat.confirmed if shown else None,
            )
        )
    return tuple(out)


def view_at(state: GameState, viewer: int | None) -> GameView:
    """`views.game_view` of a past state: the same redaction as the live view, no clock.
    Before the deal (`deal_committed` alone) the game has no seats, so nobody is in one."""
    return game_view(state, viewer if state.seats else None, None)


def moment(
    before: GameState,
    after: GameState,
    event: Event,
    viewer: int | None,
    over: bool,
) -> Moment:
    """The caller's answer right after `event` took the game from `before` to `after`.

    `over`: the game has ended *now* (not necessarily at this version): then every hand and
    pick of every version is public. Otherwise the caller sees at this version only what
    their seat (None: a spectator) saw then."""
    shown = visible_event(event, viewer, over)
    view = view_at(after, viewer)
    seats = seats_at(after, viewer, over)
    if before.version == 0:
        changes = Changes(turn=False, phase=False, stems=(), seats=())
    else:
        changes = _changes(view_at(before, viewer), view, seats_at(before, viewer, over), seats)
    return Moment(
        view=view,
        seats=seats,
        in_flight=tuple(
            PickView(seat=p.seat, bee=p.bee, stings=stings(p.bee)) for p in after.in_flight
        ),
        step=describe(shown, before, after),
        changes=changes,
        event=shown,
    )


def _changes(
    before: GameView,
    after: GameView,
    seats_before: tuple[SeatAt, ...],
    seats_after: tuple[SeatAt, ...],
) -> Changes:
    """Stems and seats differ where they were not there before (the deal) or changed."""
    stems = tuple(
        t.stem
        for i, t in enumerate(after.stems)
        if i >= len(before.stems) or before.stems[i].bees != t.bees
    )
    seats = tuple(
        a.seat
        for i, (a, c) in enumerate(zip(after.seats, seats_after, strict=True))
        if i >= len(before.seats) or before.seats[i] != a or seats_before[i] != c
    )
    return Changes(
        turn=before.turn != after.turn, phase=before.phase != after.phase, stems=stems, seats=seats
    )


def steps_of(
    events: Sequence[Event], after: Sequence[GameState], viewer: int | None, over: bool
) -> tuple[Step, ...]:
    """Every event of `events` (a game's log from version 1, with `after[i]` the state right
    after event i, as `states` gives) as a step the caller may see."""
    out = []
    before = initial_state
    for event, state in zip(events, after, strict=False):
        out.append(describe(visible_event(event, viewer, over), before, state))
        before = state
    return tuple(out)


class TurnSteps(msgspec.Struct, frozen=True, kw_only=True):
    """Where one turn is in the log, by version: ask `getGameState` for any of them.

    Attributes:
        turn: The turn, 1 to 10.
        start: The version of its `turn_started`.
        reveal: The version of its `picks_revealed`; null if the turn was not revealed (yet).
        flights: The versions where a bee of this turn landed, took a stem as the sixth bee,
            was too low, or took a stem, in the order they happened.
        last: The last version of the turn: the one before the next turn starts (the end of
            the game and the revealed deal belong to no turn).
    """

    turn: int
    start: int
    reveal: int | None
    flights: tuple[int, ...]
    last: int


def turns_of(listed: tuple[Step, ...]) -> tuple[TurnSteps, ...]:
    """Each turn's versions, from the steps of a whole log."""
    turns: list[TurnSteps] = []
    for step in listed:
        if step.kind == "turn":
            turns.append(
                TurnSteps(
                    turn=step.turn, start=step.version, reveal=None, flights=(), last=step.version
                )
            )
            continue
        if not turns or step.kind in ("end", "deal_revealed"):
            continue
        current = turns[-1]
        if step.kind == "reveal":
            current = msgspec.structs.replace(current, reveal=step.version)
        elif step.kind in ("landing", "sixth_bee", "too_low", "take"):
            current = msgspec.structs.replace(current, flights=(*current.flights, step.version))
        turns[-1] = msgspec.structs.replace(current, last=step.version)
    return tuple(turns)


# --- words ---------------------------------------------------------------------------------


def name_of(state: GameState, seat: int) -> str:
    return state.seat(seat).info.name if 0 < seat <= len(state.seats) else f"seat {seat}"


def _bees(bees: Sequence[int]) -> str:
    return " ".join(str(b) for b in bees) if bees else "nothing"


def _sting_word(n: int) -> str:
    return f"{n} sting" if n == 1 else f"{n} stings"


def _standing(state: GameState, seat: int) -> str:
    return f"{name_of(state, seat)} has {_sting_word(state.seat(seat).stings)}"


def describe(shown: VisibleEventData, before: GameState, after: GameState) -> Step:
    """The step `shown` (an event as the caller may see it) made from `before` to `after`."""
    match shown:
        case DealCommitted():
            return _committed(shown, after)
        case VisibleGameStarted():
            return _dealt(shown, after)
        case TurnStarted():
            return Step(
                version=after.version,
                kind="turn",
                turn=after.turn,
                text=f"Turn {shown.turn} begins.",
            )
        case VisibleBeeTapped():
            return _tapped(shown, after)
        case VisiblePickConfirmed():
            return _confirmed(shown, after)
        case PicksRevealed():
            return _revealed(shown, after)
        case BeeLanded():
            return _sixth_bee(shown, after) if shown.taken else _landed(shown, after)
        case StemChoiceRequired():
            return _too_low(shown, after)
        case StemTaken():
            return _stem_taken(shown, after)
        case SeatLeft():
            name = name_of(after, shown.seat)
            text = f"{name} leaves the game; their stings stop counting."
            return Step(
                version=after.version, kind="leave", turn=after.turn, seat=shown.seat, text=text
            )
        case GameEnded():
            return _ended(shown, after)
        case DealRevealed():
            text = f"The deal is revealed: server seed {shown.server_seed[:16]}…"
            return Step(version=after.version, kind="deal_revealed", turn=after.turn, text=text)
    raise AssertionError(f"unknown event {shown!r}")  # pragma: no cover - the union is closed


# --- the deal ------------------------------------------------------------------------------


def _committed(shown: DealCommitted, after: GameState) -> Step:
    text = f"The server commits to the deal: {shown.commitment[:16]}…"
    return Step(version=after.version, kind="commitment", turn=after.turn, text=text)


def _dealt(shown: VisibleGameStarted, after: GameState) -> Step:
    """Each seat's hand (or "(hidden)" where the caller may not see it) and the four stems."""
    hands = "; ".join(
        f"{info.name} {_bees(sorted(hand))}" if hand is not None else f"{info.name} (hidden)"
        for info, hand in zip(shown.seats, shown.hands, strict=True)
    )
    stems = ", ".join(map(str, shown.stems))
    return Step(
        version=after.version,
        kind="deal",
        turn=after.turn,
        text=f"The deal: {hands}. The stems start with {stems}.",
    )


# --- picks ---------------------------------------------------------------------------------


def _tapped(shown: VisibleBeeTapped, after: GameState) -> Step:
    what = f"taps {shown.bee}" if shown.bee is not None else "taps a bee"
    text = f"{name_of(after, shown.seat)} {what}."
    return Step(
        version=after.version,
        kind="tap",
        turn=after.turn,
        seat=shown.seat,
        bee=shown.bee,
        text=text,
    )


def _confirmed(shown: VisiblePickConfirmed, after: GameState) -> Step:
    """A pick made final: hidden ("is in"), by its player, or by the clock (the tapped bee, or
    the lowest when nothing was tapped)."""
    name = name_of(after, shown.seat)
    if shown.bee is None:
        text = f"{name}'s pick is in."
    elif shown.by_clock == "tapped":
        text = f"The clock runs out: {name}'s tapped {shown.bee} flies."
    elif shown.by_clock == "lowest":
        text = f"The clock runs out: {name} tapped nothing, so the lowest bee, {shown.bee}, flies."
    else:
        text = f"{name} confirms {shown.bee}."
    return Step(
        version=after.version,
        kind="confirm",
        turn=after.turn,
        seat=shown.seat,
        bee=shown.bee,
        by_clock=shown.by_clock,
        text=text,
    )


def _revealed(shown: PicksRevealed, after: GameState) -> Step:
    picks = ", ".join(f"{name_of(after, p.seat)} {p.bee}" for p in shown.picks)
    return Step(
        version=after.version,
        kind="reveal",
        turn=after.turn,
        text=f"Turn {shown.turn}'s picks, lowest first: {picks}.",
    )


# --- flights -------------------------------------------------------------------------------


def _landed(shown: BeeLanded, after: GameState) -> Step:
    """A bee on a stem, and whether the stem is now full (the next bee there is the sixth)."""
    on = after.stems[shown.stem - 1]
    full = ": full, the next bee here is the sixth)." if is_sixth(on) else ")."
    text = f"{name_of(after, shown.seat)}'s {shown.bee} lands on stem {shown.stem} ({len(on)} bees"
    return Step(
        version=after.version,
        kind="landing",
        turn=after.turn,
        seat=shown.seat,
        bee=shown.bee,
        stem=shown.stem,
        text=text + full,
    )


def _sixth_bee(shown: BeeLanded, after: GameState) -> Step:
    """A bee on a full stem: its player takes the five there (seed §4)."""
    cost = pile_stings(shown.taken)
    text = (
        f"{name_of(after, shown.seat)}'s {shown.bee} is the sixth bee on stem {shown.stem}: "
        f"takes {_bees(shown.taken)} ({_sting_word(cost)}) and starts the stem again; "
        f"{_standing(after, shown.seat)}."
    )
    return Step(
        version=after.version,
        kind="sixth_bee",
        turn=after.turn,
        seat=shown.seat,
        bee=shown.bee,
        stem=shown.stem,
        taken=shown.taken,
        taken_stings=cost,
        text=text,
    )


def _too_low(shown: StemChoiceRequired, after: GameState) -> Step:
    name = name_of(after, shown.seat)
    text = f"{name}'s {shown.bee} is lower than every stem: {name} chooses a stem to take."
    return Step(
        version=after.version,
        kind="too_low",
        turn=after.turn,
        seat=shown.seat,
        bee=shown.bee,
        text=text,
    )


# How a too-low bee's stem was chosen when its player did not choose.
_CHOSEN_BY = {
    "rule": "the cheapest, by rule",
    "clock": "the cheapest, by the clock",
}


def _stem_taken(shown: StemTaken, after: GameState) -> Step:
    """A too-low bee takes a whole stem, and who chose which (seed §5)."""
    name = name_of(after, shown.seat)
    cost = pile_stings(shown.taken)
    how = f"chosen by {name}" if shown.chosen_by == "player" else _CHOSEN_BY[shown.chosen_by]
    text = (
        f"{name}'s {shown.bee} is too low: takes stem {shown.stem}, "
        f"{_bees(shown.taken)} ({_sting_word(cost)}), {how}; {_standing(after, shown.seat)}."
    )
    return Step(
        version=after.version,
        kind="take",
        turn=after.turn,
        seat=shown.seat,
        bee=shown.bee,
        stem=shown.stem,
        taken=shown.taken,
        taken_stings=cost,
        chosen_by=shown.chosen_by,
        text=text,
    )


# --- the end -------------------------------------------------------------------------------

# Why a game ended, in the words of its last step.
_WHY = {
    "finished": f"after {TURNS} turns",
    "last_person_standing": "everyone else left",
    "abandoned": "abandoned",
}


def _verdict(shown: GameEnded, after: GameState) -> str:
    """Who won, or why nobody did."""
    if shown.reason == "abandoned":
        return f"abandoned: {IDLE_TURNS_TO_ABANDON} turns in a row with nobody picking, nobody wins"
    winners = [name_of(after, w) for w in shown.winners]
    if len(winners) == 1:
        return f"{winners[0]} wins"
    return f"{' and '.join(winners)} share the win"


def _ended(shown: GameEnded, after: GameState) -> Step:
    """Why the game ended, every seat's stings, and the verdict."""
    scores = ", ".join(
        f"{s.info.name} {s.stings}" + (" (left)" if s.left else "") for s in after.seats
    )
    verdict = _verdict(shown, after)
    text = (
        f"The game ends ({_WHY[shown.reason]}). Stings: {scores}. "
        f"{verdict[0].upper()}{verdict[1:]}."
    )
    return Step(version=after.version, kind="end", turn=after.turn, text=text)
