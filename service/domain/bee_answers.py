"""A command and the bee players' answers: the rules decide it, then every bee player that has
to pick now picks (seed §8, §9 "Bees at the table"), each decision folded once as it is made.
Pure: the bee players see only their `BeeView` (service.domain.rules.bee_view). The use case
that calls it (off the event loop when a bee thinks long) is `service.usecases.bee_threads`."""

from __future__ import annotations

import msgspec

from service.domain.rules.bees import SeedFor, bee_commands
from service.domain.rules.commands import Command
from service.domain.rules.engine import GameState, decide_and_evolve
from service.domain.rules.events import Event


def decide_with_bees(
    state: GameState, command: Command, seed_for: SeedFor | None = None
) -> tuple[GameState, list[Event]]:
    """Decide `command`, then let the bee players answer; the state after, and every event.

    `seed_for` gives each strong bee's decision its seed (`bees.decision_seeds`); a game with
    no strong bee needs none."""
    events: list[Event] = []

    def apply(cmd: Command) -> None:
        nonlocal state
        state, decided = decide_and_evolve(cmd, state)
        events.extend(decided)

    apply(command)
    while picks := bee_commands(state, seed_for=seed_for):
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
