"""A command and what it sets off: the rules decide it, then every bee player that has to
pick now picks (seed §8, §9 "Bees at the table"), each decision folded once as it is made.
Pure: the bee players see only their `BeeView` (service.domain.rules.bees)."""

from __future__ import annotations

import msgspec

from service.domain.rules.bees import bee_commands
from service.domain.rules.commands import Command
from service.domain.rules.engine import GameState, decide_and_evolve
from service.domain.rules.events import Event


def play(state: GameState, command: Command) -> tuple[GameState, list[Event]]:
    """Decide `command`, then let the bee players answer; the state after, and every event."""
    events: list[Event] = []

    def apply(cmd: Command) -> None:
        nonlocal state
        state, decided = decide_and_evolve(cmd, state)
        events.extend(decided)

    apply(command)
    while picks := bee_commands(state):
        for pick in picks:
            if state.phase == "picking" and state.seat(pick.seat).confirmed is None:
                apply(msgspec.structs.replace(pick, at=command.at))
    return state, events


def seat_of(state: GameState, player_id: str) -> int | None:
    """The seat a person was dealt in this game, if any."""
    for seat in state.seats:
        if seat.info.player_id == player_id:
            return seat.number
    return None
