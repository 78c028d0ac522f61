"""The turn clock (seed §7): every deadline a game sets (`turn_started`, `stem_choice_required`)
is a durable timer (`rows.Timer`), written with the event. Every instance runs `TurnClock.run`,
which claims due timers (`port.Timers`: no other instance gets them meanwhile) and applies
`ExpireClock` with the command id `clock:<deadline>`: a timer claimed twice (two instances, a
crash between claim and delete) changes its game once, and a timer for a turn that is already
over changes nothing (the rules compare the deadline with the game's current one)."""

from __future__ import annotations

import asyncio
from datetime import datetime

import structlog

from service import metrics
from service.domain.rules import errors as rule_errors
from service.domain.rules.commands import ExpireClock
from service.domain.rules.engine import GameState
from service.usecases.context import Context
from service.usecases.errors import NotFound
from service.usecases.play import Play

log = structlog.get_logger(__name__)

# Timers of one claim fired at once (each on its own connection: the reserved connections
# of service/api/app.py hold the claim, these and the relay's two). Games dealt together
# have their deadlines together; fired one after another, the last of a batch of 50 was
# seconds late on a busy process (issue 28); 3 at once still fell behind when a thousand games
# dealt together reached their deadlines together (about 30 expiries a second; at 100 ms each
# under load, 3 at once fire 30 a second at best), so 8.
FIRE_AT_ONCE = 8


class TurnClock:
    def __init__(self, ctx: Context, play: Play) -> None:
        self.ctx = ctx
        self.play = play
        self.timers = ctx.ports.timers

    async def expire_clock(self, game_id: str, deadline: datetime) -> GameState:
        """A stored timer is due: let the clock play (a no-op if the game moved on). Decided
        on a fresh read: the people's moves are appended by the request loop's service graph
        (the clock has its own, service/api/clock_thread.py) or another instance, so the
        clock's cached state is usually behind, and an expiry decided on it would make the bee
        players think (tens of ms) for an append that then conflicts."""
        decided = await self.play.decide(
            game_id,
            lambda state: ExpireClock(deadline=deadline, at=self.ctx.clock()),
            command_id=f"clock:{deadline.isoformat()}",
            metadata={"causation": "expire_clock", "actor": "clock"},
            fresh=True,
        )
        return decided.state

    async def fire_due_timers(self, limit: int = 50) -> int:
        """Claim the timers that are due by this service's clock and fire them. Several
        instances may call this at once: SKIP LOCKED gives each timer to one of them."""
        now = self.ctx.clock()
        at_once = asyncio.Semaphore(FIRE_AT_ONCE)

        async def fire(game_id: str, deadline: datetime) -> bool:
            async with at_once:
                late = (self.ctx.clock() - deadline).total_seconds()
                metrics.TIMER_LATENESS.observe(max(late, 0.0))
                try:
                    await self.expire_clock(game_id, deadline)
                except rule_errors.RuleViolation as refused:  # a bug, not a reason to retry
                    log.error("timer refused", game_id=game_id, error=str(refused))
                except NotFound:
                    # A timer is written with its game's events, so one for a game with none is
                    # a stray row: retried, it would fail every claim for ever (and hold the
                    # other due timers' claims to a retry a second).
                    log.error("timer for no game dropped", game_id=game_id)
                except Exception:  # the database: this timer stays, for the next claim
                    log.warning("timer not fired; retrying", game_id=game_id, exc_info=True)
                    return False
                return True

        async with self.timers.claim_due(now, limit) as claim:
            due = claim.due
            done = await asyncio.gather(*(fire(t.game_id, t.deadline) for t in due))
            fired = [timer for timer, ok in zip(due, done, strict=True) if ok]
            await claim.fired(fired)
        if len(fired) < len(due):
            raise RuntimeError(f"{len(due) - len(fired)} due timers not fired")
        return len(fired)

    async def next_deadline(self) -> datetime | None:
        return await self.timers.next_deadline()

    async def run(self, *, poll: float = 0.25) -> None:
        """Fire due timers until cancelled: sleep until the next deadline, but never longer
        than `poll`, since another instance may set an earlier one meanwhile."""
        while True:
            try:
                if await self.fire_due_timers():
                    continue
                upcoming = await self.next_deadline()
                delay = poll
                if upcoming is not None:
                    delay = min(poll, (upcoming - self.ctx.clock()).total_seconds())
                await asyncio.sleep(max(delay, 0.005))
            except asyncio.CancelledError:
                raise
            except Exception:  # the database is down or restarting: keep trying, gently
                log.exception("turn clock: firing timers failed; retrying in 1 s")
                await asyncio.sleep(1.0)
