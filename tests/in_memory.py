"""The service's use cases on the in-memory store (`memory_ports`), for the fast tier
(tests/unit): the composition root the service uses (`bootstrap`), a clock the test moves, and
cheap password hashing. Nothing here needs a database."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from argon2 import PasswordHasher

from service.api.moves import ChooseStem, Confirm, person_move
from service.bootstrap import Swarm, bootstrap
from service.domain.refusals import Refused
from service.store.memory import memory_ports
from service.usecases.identity import Player

# Cheap hashing: these tests are about the use cases, not passwords.
FAST_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


class FakeClock:
    """The service's clock and the store's (what PostgreSQL's `now()` would stamp) at once."""

    def __init__(self) -> None:
        self.now = datetime(2031, 5, 1, 12, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def swarm_in_memory(clock: FakeClock | None = None, **settings: Any) -> Swarm:
    """One service instance on a fresh in-memory store."""
    clock = clock or FakeClock()
    return bootstrap(memory_ports(clock), clock=clock, hasher=FAST_HASHER, **settings)


def other_instance(swarm: Swarm, clock: FakeClock, **settings: Any) -> Swarm:
    """A second instance on the same store: its own caches, turns and clock loop."""
    return bootstrap(swarm.ctx.ports, clock=clock, hasher=FAST_HASHER, **settings)


async def account(swarm: Swarm, name: str) -> Player:
    session = await swarm.accounts.register(f"{name}{uuid.uuid4().hex[:8]}", "long enough", None)
    return session.player


async def play_to_the_end(swarm: Swarm, game_id: str, people: list[Player]) -> None:
    """Every person confirms their first bee and takes stem 1 when asked, until the end."""
    by_id = {p.player_id: p for p in people}
    for _ in range(200):
        game = await swarm.repository.game(game_id)
        if game.phase == "ended":
            return
        moved = False
        for seat in game.seats:
            who = by_id.get(seat.info.player_id or "")
            if who is None or not seat.playing:
                continue
            move: Any
            if game.phase == "choosing" and game.pending and game.pending.seat == seat.number:
                move = ChooseStem(stem=1, move_id=uuid.uuid4().hex)
            elif game.phase == "picking" and seat.confirmed is None:
                move = Confirm(bee=seat.hand[0], move_id=uuid.uuid4().hex)
            else:
                continue
            try:
                await swarm.play.submit_move(who, game_id, person_move(move))
                moved = True
            except Refused:
                pass
            game = await swarm.repository.game(game_id)
        assert moved, "nobody could move"
    raise AssertionError("the game did not end")
