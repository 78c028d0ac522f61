"""Issue 28, point 2: the turn clock never starves. Requests hold every connection of the pool
(as at 1,000 games, when they queued for it); the clock, on its reserved connections (the
clock thread's own pool and service graph, service/api/clock_thread.py), still fires a due
turn. Without them it cannot, which is what made it fire 9 to 14 s late."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from service.bootstrap import bootstrap
from service.domain.rules.events import ClockSettings
from service.store.pool import Pool, open_pool
from service.store.port import PoolExhausted
from service.store.postgres import postgres_ports


class FakeClock:
    def __init__(self) -> None:
        # Two years ahead of every timer this test did not make.
        self.now = datetime.now(UTC) + timedelta(days=730)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def pools(own_database: str) -> AsyncIterator[tuple[Pool, Pool]]:
    # A database of its own: the timers other tests left behind (their clocks far ahead too)
    # are not due in it, so the one it fires is this test's.
    requests = await open_pool(own_database, min_size=1, max_size=1, acquire_timeout=0.2)
    reserved = await open_pool(own_database, min_size=1, max_size=4)
    try:
        yield requests, reserved
    finally:
        await requests.close()
        await reserved.close()


async def test_the_clock_fires_on_its_own_connections_while_requests_hold_the_pool(
    pools: tuple[Pool, Pool],
) -> None:
    requests, reserved = pools
    clock = FakeClock()
    swarm = bootstrap(postgres_ports(requests), clock=clock)
    hana, _ = await swarm.identity.create_guest("Hana", None)
    bob, _ = await swarm.identity.create_guest("Bob", None)
    seen = await swarm.tables.create_table(
        hana, 2, 0, ClockSettings(turn_seconds=20, choice_seconds=20)
    )
    table = seen.table
    joined = await swarm.tables.join_table(bob, table.table_id, None)
    assert joined.game is not None
    game_id = joined.game.game_id
    clock.now += timedelta(seconds=21)  # the first turn's deadline has passed

    held = await requests.acquire()  # requests hold every connection of their pool
    try:
        with pytest.raises(PoolExhausted):
            await swarm.turn_clock.fire_due_timers()  # on the requests' pool: starved

        # The clock thread's graph: another instance of the service on the reserved pool.
        clock_graph = bootstrap(postgres_ports(reserved), clock=clock)
        assert await clock_graph.turn_clock.fire_due_timers() >= 1
    finally:
        await requests.release(held)

    state = await swarm.repository.game(game_id)
    assert state.turn == 2  # nobody picked: the clock confirmed for both and the turn moved on
