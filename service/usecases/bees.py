"""Where the bee players think. A strong bee (`service.domain.rules.strong`) spends tens of
milliseconds of CPU on a decision, several bees a turn: that work runs in a worker thread, so
the event loop keeps answering other requests (and heartbeats) meanwhile. Heuristic bees
decide in microseconds, and are played inline."""

from __future__ import annotations

import asyncio

from service.domain.play import has_strong_bees, play
from service.domain.rules.bees import SeedFor
from service.domain.rules.commands import Command
from service.domain.rules.engine import GameState
from service.domain.rules.events import Event


async def play_with_bees(
    state: GameState, command: Command, seed_for: SeedFor | None
) -> tuple[GameState, list[Event]]:
    """`service.domain.play.play`, off the event loop when a strong bee will think."""
    if seed_for is None or not has_strong_bees(state):
        return play(state, command, seed_for)
    return await asyncio.to_thread(play, state, command, seed_for)
