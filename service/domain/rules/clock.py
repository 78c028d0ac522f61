"""The clock of a timed game (seed §7), as named rules: the deadlines, what the clock plays for a
seat that has not confirmed, and the idle turn that abandons a game.

The engine's cascade (`decide.py`, `_Cascade.expire`) applies them when the service sends
`ExpireClock` for the running deadline; the fold (`fold.py`) counts idle turns with
`is_idle_turn`. No clock is read here: the time arrives in the command.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Literal

from service.domain.rules.events import ClockPlay, ClockSettings, Pick
from service.domain.rules.state import SeatState

# Seed §7: "If 3 turns in a row pass with nobody picking, the game ends".
IDLE_TURNS_TO_ABANDON = 3


def deadline_after(
    clock: ClockSettings | None, at: datetime | None, kind: Literal["turn", "choice"]
) -> datetime | None:
    """When a turn (or a too-low choice) that starts `at` runs out; None in an untimed game."""
    if clock is None or at is None:
        return None
    seconds = clock.turn_seconds if kind == "turn" else clock.choice_seconds
    return at + timedelta(seconds=seconds)


def clock_play(seat: SeatState) -> tuple[int, ClockPlay]:
    """The bee the turn clock flies for a seat that has not confirmed: the bee it tapped, else
    its lowest."""
    if seat.tapped is not None:
        return seat.tapped, "tapped"
    return seat.hand[0], "lowest"


def nobody_picking(seats: Iterable[SeatState]) -> bool:
    """As the turn clock runs out: no playing person has tapped or confirmed anything (bee
    players don't count). Such a turn is idle."""
    people = [s for s in seats if s.info.kind != "bee" and not s.left]
    return bool(people) and all(s.tapped is None and s.confirmed is None for s in people)


def is_idle_turn(seats: Sequence[SeatState], picks: Iterable[Pick]) -> bool:
    """A revealed turn was idle: it has people's picks (`picks`, of `seats`) and the clock chose
    every one of them as the seat's lowest bee, because nobody was picking."""
    people = False
    for pick in picks:  # a loop, not two comprehensions: it runs at every reveal
        seat = seats[pick.seat - 1]
        if seat.info.kind != "bee":
            if seat.by_clock != "lowest":
                return False
            people = True
    return people


def abandons(seats: Iterable[SeatState], idle_turns: int) -> bool:
    """The turn clock running out now ends the game as abandoned: this turn is idle and it would
    be the third idle turn in a row."""
    return nobody_picking(seats) and idle_turns + 1 >= IDLE_TURNS_TO_ABANDON
