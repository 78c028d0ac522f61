"""What a seat (or the table) asks the game to do: imperative, and refusable.

`at` is the moment the command is handled. The rules never read a clock; the service passes the
time in, so a timed game's deadlines are facts in its events and a replay is exact.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from service.domain.rules.events import ClockSettings, DealProof, SeatInfo


class GameCommand(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="type"):
    at: datetime | None = None


class StartGame(GameCommand, frozen=True, tag="start_game"):
    """Deal a game. `deck_order` is the shuffled deck; the rules own no randomness.

    Attributes:
        game_id: The game's id.
        table_id: The table's id.
        proof: Recorded in GameStarted; see docs/fairness.md.
    """

    game_id: str
    table_id: str
    seats: tuple[SeatInfo, ...]
    deck_order: tuple[int, ...]
    clock: ClockSettings | None = None
    proof: DealProof | None = None  # recorded in GameStarted; see docs/fairness.md


class TapBee(GameCommand, frozen=True, tag="tap"):
    """
    Attributes:
        seat: A seat number, from 1.
        bee: A bee's number.
    """

    seat: int
    bee: int


class ConfirmPick(GameCommand, frozen=True, tag="confirm"):
    """Confirm the tapped bee, or name the bee to tap and confirm in one step.

    Attributes:
        seat: A seat number, from 1.
        bee: A bee's number.
    """

    seat: int
    bee: int | None = None


class TakeStem(GameCommand, frozen=True, tag="take_stem"):
    """
    Attributes:
        seat: A seat number, from 1.
        stem: A stem number, 1 to 4.
    """

    seat: int
    stem: int


class LeaveGame(GameCommand, frozen=True, tag="leave"):
    """
    Attributes:
        seat: A seat number, from 1.
    """

    seat: int


class ExpireClock(GameCommand, frozen=True, tag="expire_clock"):
    """A stored timer fired: the turn or choice clock that ends at `deadline` has run out.

    Sent by the service, never by a seat. It changes nothing (no events, no error) when the
    timer is stale, that is when the game's running deadline is not exactly `deadline` (the game
    moved on, or has ended, or is untimed), or when it fired early (`at < deadline`).

    Attributes:
        at: Required here: the moment the timer fired.
        deadline: When the clock runs out (UTC); null when untimed.
    """

    deadline: datetime
    at: datetime  # required here: the moment the timer fired


Command = StartGame | TapBee | ConfirmPick | TakeStem | LeaveGame | ExpireClock
