"""A game's state, and the questions anyone may ask of it.

`GameState` is what folding a game's events gives (`fold.py`): the seats with their hands,
piles and stings, the stems, the turn and its phase. It is immutable; a decision reads it and
an event makes a new one. Nothing here changes a state or decides anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

import msgspec

from service.domain.rules.events import (
    ClockPlay,
    ClockSettings,
    DealProof,
    EndReason,
    Pick,
    SeatInfo,
)

# "flying" only exists between the events of one decision: revealed bees still to land.
Phase = Literal["not_started", "dealt", "picking", "flying", "choosing", "ended"]
Stem = tuple[int, ...]  # bottom → top
Stems = tuple[Stem, ...]


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
    # Turns in a row, up to the last one revealed, that were idle (`clock.is_idle_turn`).
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
    """Fewest stings among the seats still counting; ties share the win (seed §6)."""
    counting = [s for s in seats if not s.left]
    if not counting:
        return ()
    fewest = min([s.stings for s in counting])
    return tuple([s.info.seat for s in counting if s.stings == fewest])
