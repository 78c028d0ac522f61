"""The turn clock (seed §7) with an injected clock: no test sleeps through a real turn."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.bootstrap import bootstrap
from service.store.pool import Pool
from service.store.postgres import postgres_ports
from service.usecases.clock import TurnClock
from tests.deals import highest_bees_land, lowest_is_too_low, seeds_where
from tests.e2e.api_client import Api, first_of


class FakeClock:
    def __init__(self) -> None:
        # A year ahead: other apps of this test session fire timers by the real clock, and
        # must not find these deadlines due.
        self.now = datetime.now(UTC).replace(microsecond=0) + timedelta(days=365)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def timed(database_url: str, clock: FakeClock) -> AsyncIterator[AsyncTestClient[Any]]:
    app = create_app(database_url, clock=clock, run_clock=False)
    async with AsyncTestClient(app=app) as client:
        yield client


@pytest.fixture
def timers(pool: Pool, clock: FakeClock) -> TurnClock:
    """A second instance of the service on the same database and the same injected clock,
    firing the timers that the app under test stored (the app runs on its own event loop)."""
    return bootstrap(postgres_ports(pool), clock=clock).turn_clock


async def two_people_game(client: AsyncTestClient[Any], **clock: float) -> tuple[Api, Api, str]:
    anon = Api(client)
    hana, bob = await anon.guest("Hana"), await anon.guest("Bob")
    tid = (await hana.create_table(seats=2, **clock))["table_id"]
    game = (await bob.ok_table_action(tid, "seats"))["game"]
    return hana, bob, game["game_id"]


async def drain(timers: TurnClock) -> int:
    """Fire every due timer, as the worker loop does. Under the fake clock, a year ahead, the
    timers of other tests' games are due too: they fire as well (a no-op or an idle turn)."""
    fired = 0
    while batch := await timers.fire_due_timers():
        fired += batch
    return fired


async def run_out(timers: TurnClock, clock: FakeClock, api: Api, gid: str) -> dict[str, Any]:
    """Move the clock to the running deadline and let the due timers fire."""
    view = await api.game(gid)
    deadline = datetime.fromisoformat(view["deadline"])
    clock.now = max(clock.now, deadline)
    await drain(timers)
    return await api.game(gid)


async def test_rule_views_show_the_running_clock_as_a_deadline_with_the_server_time(
    timed: AsyncTestClient[Any], clock: FakeClock, timers: TurnClock
) -> None:
    hana, _, gid = await two_people_game(timed)
    view = await hana.game(gid)
    assert datetime.fromisoformat(view["server_time"]) == clock.now
    assert datetime.fromisoformat(view["deadline"]) == clock.now + timedelta(seconds=20)


async def test_rule_three_turns_in_a_row_with_nobody_picking_abandon_the_game(
    timed: AsyncTestClient[Any], clock: FakeClock, timers: TurnClock
) -> None:
    hana, _, gid = await two_people_game(timed)
    view = await run_out(timers, clock, hana, gid)
    assert view["turn"] == 2
    view = await run_out(timers, clock, hana, gid)
    assert view["turn"] == 3
    view = await run_out(timers, clock, hana, gid)
    assert view["phase"] == "ended" and view["result"]["reason"] == "abandoned"
    assert view["result"]["winners"] == []
    table = await hana.table(view["table_id"])
    assert table["status"] == "between_games"
    log = await hana.events(gid)
    lowest = [e for e in log["events"] if e["type"] == "pick_confirmed"]
    assert {e["data"]["by_clock"] for e in lowest} == {"lowest"}


async def test_rule_a_person_who_only_taps_plays_all_10_turns(
    timed: AsyncTestClient[Any], clock: FakeClock, timers: TurnClock
) -> None:
    hana, _, gid = await two_people_game(timed)
    view = await hana.game(gid)
    while view["phase"] != "ended":
        if view["phase"] == "picking" and view["tapped"] is None:
            view = await hana.ok_move(gid, type="tap", bee=view["hand"][-1])
        view = await run_out(timers, clock, hana, gid)
    assert view["turn"] == 10 and view["result"]["reason"] == "finished"
    log = await hana.events(gid)
    mine = [e for e in log["events"] if e["type"] == "pick_confirmed" and e["data"]["seat"] == 1]
    assert len(mine) == 10 and {e["data"]["by_clock"] for e in mine} == {"tapped"}


@pytest.fixture
async def dealt(
    database_url: str, clock: FakeClock, request: pytest.FixtureRequest
) -> AsyncIterator[AsyncTestClient[Any]]:
    """An app whose two-seat games are dealt the way the test's `deal` marker asks."""
    wanted = request.node.get_closest_marker("deal").args[0]
    app = create_app(
        database_url, clock=clock, run_clock=False, server_seeds=seeds_where(2, wanted)
    )
    async with AsyncTestClient(app=app) as client:
        yield client


@pytest.mark.deal.with_args(lowest_is_too_low(seat=1))
async def test_rule_too_low_and_the_choice_clock_runs_out_the_cheapest_is_taken(
    dealt: AsyncTestClient[Any], clock: FakeClock, timers: TurnClock
) -> None:
    hana, bob, gid = await two_people_game(dealt, choice_seconds=10)
    view = await hana.game(gid)
    lowest = view["hand"][0]
    assert all(f["too_low"] for f in view["forecast"] if f["bee"] == lowest)
    await hana.ok_move(gid, type="confirm", bee=lowest)
    bob_view = await bob.game(gid)
    await bob.ok_move(gid, type="confirm", bee=bob_view["hand"][-1])
    choosing = await hana.game(gid)
    assert choosing["phase"] == "choosing" and choosing["choice"]["yours"]
    deadline = datetime.fromisoformat(choosing["choice"]["deadline"])
    assert deadline == clock.now + timedelta(seconds=10)
    cheapest = choosing["choice"]["cheapest"]
    after = await run_out(timers, clock, hana, gid)
    assert after["phase"] != "choosing"
    taken = [e for e in (await hana.events(gid))["events"] if e["type"] == "stem_taken"]
    assert taken[-1]["data"]["chosen_by"] == "clock"
    assert taken[-1]["data"]["stem"] == cheapest


@pytest.mark.deal.with_args(highest_bees_land)
async def test_a_timer_that_fires_after_the_game_moved_on_changes_nothing(
    dealt: AsyncTestClient[Any], clock: FakeClock, timers: TurnClock
) -> None:
    hana, bob, gid = await two_people_game(dealt)
    view = await hana.game(gid)
    clock.advance(5)  # everyone confirms 5 s into turn 1: turn 2 runs out at 25 s
    await hana.ok_move(gid, type="confirm", bee=view["hand"][-1])
    await bob.ok_move(gid, type="confirm", bee=(await bob.game(gid))["hand"][-1])
    before = await hana.game(gid)
    assert before["phase"] == "picking" and before["turn"] == 2  # neither bee was too low
    clock.advance(15)  # turn 1's timer is due, but turn 1 is over
    await drain(timers)
    after = await hana.game(gid)
    assert after["version"] == before["version"] and after["turn"] == before["turn"]


async def test_a_clock_fires_once_with_two_instances_firing_at_once(
    timed: AsyncTestClient[Any], clock: FakeClock, pool: Pool, timers: TurnClock
) -> None:
    hana, _, gid = await two_people_game(timed)
    other = bootstrap(postgres_ports(pool), clock=clock).turn_clock
    clock.advance(20)
    await asyncio.gather(drain(timers), drain(other))
    log = await hana.events(gid)
    reveals = [e for e in log["events"] if e["type"] == "picks_revealed"]
    assert [e["data"]["turn"] for e in reveals] == [1]
    assert first_of(log, "turn_started")["data"]["turn"] == 1
