"""Step 5, `replay`: every move is re-decided by the rules engine (`decide`) from the state
before it, and must give exactly the recorded events.

The log records events, not commands, so each move's command is read off its first event (a
`bee_tapped` was a tap, a `pick_confirmed` by nobody's clock a confirm, a `stem_taken` by the
player a choice, a `seat_left` a leave, and anything the clock did an `ExpireClock` at the
deadline then running). A timed move's `at` is read off the first deadline its events carry,
less that clock's duration: the rules are then asked again at exactly that moment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from service.domain.audit.export import Decoded, GameExport, Row
from service.domain.audit.report import Failed
from service.domain.audit.text import differences
from service.domain.rules.commands import (
    Command,
    ConfirmPick,
    ExpireClock,
    LeaveGame,
    StartGame,
    TakeStem,
    TapBee,
)
from service.domain.rules.engine import GameState, decide, evolve, initial_state
from service.domain.rules.errors import RuleViolation
from service.domain.rules.events import (
    BeeTapped,
    ClockSettings,
    DealCommitted,
    DealRevealed,
    Event,
    GameEnded,
    GameStarted,
    PickConfirmed,
    SeatLeft,
    StemChoiceRequired,
    StemTaken,
    TurnStarted,
    event_type,
)

# Before the real `at` of a timed move is known, decide it at some moment to see its deadlines.
_PROBE_AT = datetime(2000, 1, 1, tzinfo=UTC)


def check_replay(decoded: Decoded) -> tuple[str, GameState]:
    """Step 5: re-decide every move from the state before it; the state after the last."""
    export = decoded.export
    rows = decoded.rows
    revealed = next((r.event for r in rows if isinstance(r.event, DealRevealed)), None)
    deck = revealed.deck_order if revealed is not None else export.fairness.deck_order
    state = initial_state
    revealed_at: int | None = None
    moves = 0
    index = 0
    while index < len(rows):
        row = rows[index]
        event = row.event
        if revealed_at is not None and not isinstance(event, DealRevealed):
            raise Failed(
                f"{row.record.type} after the deal was revealed at v{revealed_at}: the "
                "server seed (and so every hand) was public while the game went on",
                row.version,
            )
        if isinstance(event, DealCommitted | DealRevealed):
            if isinstance(event, DealRevealed):
                revealed_at = row.version
            state = evolve(state, event)
            index += 1
            continue
        move = _move_for(event, state, export, deck)
        if isinstance(move, str):
            raise Failed(move, row.version)
        expected = _decide(move, state, rows[index:], row.version)
        recorded = [r.event for r in rows[index : index + len(expected)]]
        for offset, want in enumerate(expected):
            if offset >= len(recorded):
                raise Failed(
                    f"{move.describe}: the log ends before its {event_type(want)} "
                    f"(event {offset + 1} of {len(expected)})",
                    rows[-1].version,
                )
            got = recorded[offset]
            if got != want:
                raise Failed(
                    f"{move.describe} gives {differences(got, want, want_first=True)}",
                    rows[index + offset].version,
                )
        for got in recorded:
            state = evolve(state, got)
        index += len(expected)
        moves += 1
    return f"{moves} moves re-decided by the rules give exactly the recorded events", state


@dataclass(frozen=True, slots=True)
class _Move:
    """A command to re-decide, given the `at` it was handled at (None for an untimed game)."""

    describe: str
    make: Callable[[datetime | None], Command]
    clock: ClockSettings | None
    probe_at: datetime | None  # `at` for the first decision, before the real one is known


def _move_for(
    event: Event, state: GameState, export: GameExport, deck: tuple[int, ...]
) -> _Move | str:
    """The command whose decision starts with `event`, or why no command can."""
    clock = state.clock
    probe = _PROBE_AT if clock is not None else None
    match event:
        case GameStarted():
            started = event
            return _Move(
                "starting the game",
                lambda at: StartGame(
                    game_id=export.game_id,
                    table_id=export.table_id,
                    seats=started.seats,
                    deck_order=deck,
                    clock=started.clock,
                    proof=started.proof,
                    at=at,
                ),
                started.clock,
                _PROBE_AT if started.clock is not None else None,
            )
        case BeeTapped(seat=seat, bee=bee):
            return _Move(
                f"seat {seat} tapping bee {bee}",
                lambda at: TapBee(seat=seat, bee=bee, at=at),
                clock,
                probe,
            )
        case PickConfirmed(seat=seat, bee=bee, by_clock="none"):
            return _Move(
                f"seat {seat} confirming bee {bee}",
                lambda at: ConfirmPick(seat=seat, bee=bee, at=at),
                clock,
                probe,
            )
        case StemTaken(seat=seat, stem=stem, chosen_by="player"):
            return _Move(
                f"seat {seat} taking stem {stem}",
                lambda at: TakeStem(seat=seat, stem=stem, at=at),
                clock,
                probe,
            )
        case SeatLeft(seat=seat):
            return _Move(
                f"seat {seat} leaving", lambda at: LeaveGame(seat=seat, at=at), clock, probe
            )
        case PickConfirmed() | GameEnded() | StemTaken(chosen_by="clock"):
            deadline = state.deadline
            if deadline is None:
                return (
                    f"{event_type(event)} by the clock, but no clock was running "
                    f"(phase {state.phase})"
                )
            if isinstance(event, StemTaken) and state.phase != "choosing":
                return "stem_taken by the clock, but nobody was choosing a stem"
            return _Move(
                f"the clock running out at {deadline.isoformat()}",
                lambda at: ExpireClock(deadline=deadline, at=at or deadline),
                clock,
                deadline,
            )
    return (
        f"{event_type(event)} does not start any move here (phase {state.phase}): "
        "no command's decision begins with it"
    )


def _decide(move: _Move, state: GameState, rows: Sequence[Row], version: int) -> list[Event]:
    """Decide `move` at the moment its recorded deadlines say it was handled."""
    at = move.probe_at
    try:
        events = decide(move.make(at), state)
        recorded_at = _at_from(events, rows, move.clock)
        if recorded_at is not None and recorded_at != at:
            at = recorded_at
            events = decide(move.make(at), state)
    except RuleViolation as error:
        raise Failed(
            f"{move.describe} is against the rules ({error.code}): {error.detail}", version
        ) from None
    except Exception as error:  # a malformed log can drive the engine off its assumptions
        raise Failed(
            f"{move.describe}: the rules engine could not apply it: {error}", version
        ) from None
    if not events:
        when = f" at {at.isoformat()}" if at is not None else ""
        raise Failed(f"{move.describe}{when} changes nothing, yet events were recorded", version)
    return events


def _at_from(
    events: Sequence[Event], rows: Sequence[Row], clock: ClockSettings | None
) -> datetime | None:
    """The move's `at`: its first deadline as recorded, less that clock's duration."""
    if clock is None:
        return None
    for offset, event in enumerate(events):
        if isinstance(event, TurnStarted | StemChoiceRequired) and event.deadline is not None:
            if offset >= len(rows):
                return None
            recorded = rows[offset].event
            if type(recorded) is not type(event):
                return None
            assert isinstance(recorded, TurnStarted | StemChoiceRequired)
            if recorded.deadline is None:
                return None
            seconds = clock.turn_seconds if isinstance(event, TurnStarted) else clock.choice_seconds
            return recorded.deadline - timedelta(seconds=seconds)
    return None
