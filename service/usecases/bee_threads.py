"""Where the bee players think. A level whose decisions cost a millisecond or more
(`Level.cost_ms`, `service.domain.rules.levels`: the strong bee spends tens of milliseconds of
CPU on a decision, several bees a turn) thinks in a worker thread, so the event loop keeps
answering other requests (and heartbeats) meanwhile. Heuristic bees decide in microseconds, and
are played inline."""

from __future__ import annotations

import asyncio

from service.domain.bee_answers import decide_with_bees as decide_here
from service.domain.rules.bees import SeedFor, thinks_long
from service.domain.rules.commands import Command
from service.domain.rules.engine import GameState
from service.domain.rules.events import Event


async def decide_with_bees(
    state: GameState, command: Command, seed_for: SeedFor | None
) -> tuple[GameState, list[Event]]:
    """`service.domain.bee_answers.decide_with_bees`, off the event loop when a bee will think
    long."""
    if seed_for is None or not thinks_long(state):
        return decide_here(state, command, seed_for)
    return await asyncio.to_thread(decide_here, state, command, seed_for)
