"""The turn clock through its use case (`service.usecases.clock.TurnClock`) on the in-memory
store: every deadline a game sets is a timer, fired once when due (by one of several
instances), a no-op when the game moved on, and a game the clock plays alone reaches its end."""

from __future__ import annotations

import asyncio

from service.domain.rules.events import ClockSettings
from service.store.rows import Timer
from tests.in_memory import FakeClock, other_instance, swarm_in_memory
from tests.store_contract import write

CLOCK = ClockSettings(turn_seconds=20, choice_seconds=10)


async def test_a_turn_left_to_the_clock_is_played_once_by_one_of_two_instances() -> None:
    clock = FakeClock()
    a = swarm_in_memory(clock)
    b = other_instance(a, clock)
    host, _ = await a.identity.create_guest("Host")
    bo, _ = await a.identity.create_guest("Bo")
    table = (await a.tables.create_table(host, 2, 0, CLOCK)).table
    await a.tables.join_table(bo, table.table_id, None)  # full: dealt, the first turn's clock
    game_id = (await a.repository.table(table.table_id)).games[0]
    dealt = await a.repository.game(game_id)
    assert dealt.deadline is not None and await a.turn_clock.next_deadline() == dealt.deadline
    assert await a.turn_clock.fire_due_timers() == 0  # not due yet

    clock.now = dealt.deadline
    fired = await asyncio.gather(a.turn_clock.fire_due_timers(), b.turn_clock.fire_due_timers())
    assert sorted(fired) == [0, 1]  # one instance fired it
    played = await a.repository.game(game_id)
    assert played.version > dealt.version and (played.turn, played.phase) != (1, "picking")
    recorded = await a.ctx.store.read_stream(f"game-{game_id}", after_version=dealt.version)
    assert {str(e.metadata.get("actor")) for e in recorded} == {"clock"}
    assert await a.turn_clock.fire_due_timers() == 0 and await b.turn_clock.fire_due_timers() == 0

    # A timer for a turn that is over changes nothing: the clock's command is a no-op.
    stale = await a.turn_clock.expire_clock(game_id, dealt.deadline)
    assert stale.version == played.version


async def test_a_game_left_to_the_clock_plays_to_its_end() -> None:
    clock = FakeClock()
    swarm = swarm_in_memory(clock)
    host, _ = await swarm.identity.create_guest("Host")
    bo, _ = await swarm.identity.create_guest("Bo")
    table = (await swarm.tables.create_table(host, 2, 0, CLOCK)).table
    await swarm.tables.join_table(bo, table.table_id, None)
    game_id = (await swarm.repository.table(table.table_id)).games[0]
    for _ in range(100):
        game = await swarm.repository.game(game_id)
        if game.phase == "ended":
            break
        upcoming = await swarm.turn_clock.next_deadline()
        assert upcoming is not None
        clock.now = max(clock.now, upcoming)
        assert await swarm.turn_clock.fire_due_timers() >= 1
    game = await swarm.repository.game(game_id)
    assert game.phase == "ended" and game.server_seed is not None
    assert (await swarm.exports.verify_game(game_id)).ok
    # The game's timers are all gone: the next ones are the table's next game's (none yet).
    assert await swarm.turn_clock.fire_due_timers() == 0


async def test_a_timer_for_no_game_is_dropped_not_retried_for_ever() -> None:
    """A timer is written with its game's events; a stray one (no such game) is dropped once,
    where it was retried on every claim, failing each with "due timers not fired"."""
    clock = FakeClock()
    swarm = swarm_in_memory(clock)
    stray = Timer(game_id="g" + "0" * 32, deadline=clock.now)
    await write(swarm.ctx.ports, stray)
    assert await swarm.turn_clock.next_deadline() == stray.deadline
    assert await swarm.turn_clock.fire_due_timers() == 1
    assert await swarm.turn_clock.next_deadline() is None
    assert await swarm.turn_clock.fire_due_timers() == 0
