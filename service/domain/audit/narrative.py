"""`swarm audit game.json --replay`: an exported game told turn by turn, in words, for an
auditor without a browser: the seats and the deal, then for each turn who picked what, where
each bee flew (a landing, a sixth bee's take, a too-low bee and the stem it took), who left,
and every seat's stings after the turn; then the end.

The words are the steps of `service.domain.history` (the same that `listGameSteps` answers),
made from the exported events folded through the rules engine. The narrative tells what the
export says; whether it is true is the audit's verdict, printed after it.
"""

from __future__ import annotations

from service.domain.audit.export import check_format
from service.domain.audit.report import Failed
from service.domain.history import Step, describe, name_of
from service.domain.rules.engine import GameState, evolve, initial_state
from service.domain.rules.events import GameStarted
from service.domain.views import visible_event

# Steps a turn is told by: the reveal (who picked what), the clock's picks, each flight, leaves.
_TOLD = {"reveal", "landing", "sixth_bee", "too_low", "take", "leave"}


def narrate(document: object) -> str:
    """The game of a `swarm-game-export/1` document in words; what cannot be read is said."""
    try:
        _, decoded = check_format(document)
    except Failed as failure:
        return f"Cannot replay this export: {failure.reason}.\n"
    export = decoded.export
    lines = [f"Game {export.game_id} at table {export.table_id}"]
    state = initial_state
    turn_open = False
    for row in decoded.rows:
        try:
            after = evolve(state, row.event)
            step = describe(visible_event(row.event, None, game_over=True), state, after)
        except (AssertionError, IndexError, KeyError, ValueError) as error:
            lines.append(f"(v{row.version} {row.record.type} cannot be replayed: {error!r})")
            break
        if isinstance(row.event, GameStarted):
            lines += _table(after)
        elif step.kind == "turn":
            if turn_open:
                lines.append(_stings(state))
            lines += ["", f"Turn {after.turn}"]
            turn_open = True
        elif step.kind == "end":
            if turn_open:
                lines.append(_stings(state))
                turn_open = False
            lines += ["", step.text]
        elif step.kind == "deal_revealed":
            lines.append(step.text)
        elif step.kind == "confirm" and step.by_clock in ("tapped", "lowest"):
            lines.append(f"  {step.text}")
        elif step.kind in _TOLD:
            lines.append(f"  {_short(step)}")
        state = after
    if turn_open:
        lines.append(_stings(state))
    return "\n".join(lines) + "\n"


def _table(state: GameState) -> list[str]:
    out = [f"{len(state.seats)} seats:"]
    for seat in state.seats:
        kind = (
            "person"
            if seat.info.kind == "person"
            else f"bee player ({seat.info.level or 'heuristic'})"
        )
        out.append(
            f"  {seat.number}. {seat.info.name}, {kind}: dealt {' '.join(map(str, seat.hand))}"
        )
    stems = " | ".join(str(stem[0]) for stem in state.stems)
    out.append(f"Stems 1 to 4 start with: {stems}")
    if state.clock is not None:
        out.append(
            f"Clock: {state.clock.turn_seconds:g} s a turn, {state.clock.choice_seconds:g} s to "
            "choose a stem"
        )
    return out


def _short(step: Step) -> str:
    """A step's words, less what the turn's heading already says."""
    if step.kind == "reveal":
        return "Picks, lowest first: " + step.text.split(": ", 1)[1]
    return step.text


def _stings(state: GameState) -> str:
    parts = [
        f"{name_of(state, s.number)} {s.stings}" + (" (left)" if s.left else "")
        for s in state.seats
    ]
    return "  Stings after the turn: " + ", ".join(parts) + "."
