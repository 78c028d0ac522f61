"""The turn clock's worker: fires due timers in the background of every instance.

Timers live in PostgreSQL (`timers`), so a deadline survives any instance; every instance
runs this loop, and `GameService.fire_due_timers` makes sure each timer changes its game once.
"""

from __future__ import annotations

import asyncio

import structlog

from service.games import GameService

log = structlog.get_logger(__name__)


async def run_timers(service: GameService, *, poll: float = 0.25) -> None:
    """Fire due timers until cancelled: sleep until the next deadline, but never longer than
    `poll`, since another instance may set an earlier one meanwhile."""
    while True:
        try:
            if await service.fire_due_timers():
                continue
            upcoming = await service.next_deadline()
            delay = poll
            if upcoming is not None:
                delay = min(poll, (upcoming - service.clock()).total_seconds())
            await asyncio.sleep(max(delay, 0.005))
        except asyncio.CancelledError:
            raise
        except Exception:  # the database is down or restarting: keep trying, gently
            log.exception("turn clock: firing timers failed; retrying in 1 s")
            await asyncio.sleep(1.0)
