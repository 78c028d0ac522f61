"""Issue 28: the turn clock fires on time however busy the request loop is. It runs in a thread
of its own (service/api/clock_thread.py): while a request-loop task runs Python for 2 s
without yielding, a due turn is still fired within 0.5 s of its deadline (on the clock's
own loop, on the request loop it fires once the loop is free again, 1.5 s late), written, and
wakes the request loop's followers (its NOTIFY reaches the LISTEN connection of the request loop).
Shutdown joins the thread and leaves no session; a thread whose pool cannot open fails the
startup. Each test has a database of its own, so only its own timers are due."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service import metrics
from service.api import clock_thread
from service.api.app import create_app
from tests.e2e.api_client import Api
from tests.sessions import open_sessions


def _clock_threads(before: set[threading.Thread]) -> list[str]:
    """The clock threads (the thread and its bees' executor) started since `before`: other
    tests' apps may still be serving in this process (module- and session-scoped servers)."""
    started = (t for t in threading.enumerate() if t not in before)
    return sorted(t.name for t in started if t.name.startswith("swarm-clock"))


def _lateness() -> tuple[float, float]:
    """How many timers fired (in this process), and their lateness summed (s)."""
    samples = {s.name: s.value for f in metrics.TIMER_LATENESS.collect() for s in f.samples}
    return samples["swarm_timer_lateness_seconds_count"], samples[
        "swarm_timer_lateness_seconds_sum"
    ]


def _raised(error: BaseException, kind: type[BaseException]) -> bool:
    """Whether `error`, or one in its group (the test client's task group), is a `kind`."""
    if isinstance(error, BaseExceptionGroup):
        return any(_raised(each, kind) for each in error.exceptions)
    return isinstance(error, kind)


def _busy_until(moment: datetime) -> None:
    """Run Python, never yielding to the event loop, until `moment` (as a saturated request
    loop does): only the GIL's switch interval lets another thread run meanwhile."""
    while datetime.now(UTC) < moment:
        sum(range(200))


async def test_the_clock_fires_on_time_while_the_request_loop_is_blocked(
    own_database: str,
) -> None:
    before = set(threading.enumerate())
    app = create_app(own_database, rate_limit_per_second=0)
    async with AsyncTestClient(app=app) as client:
        assert _clock_threads(before) == ["swarm-clock"]
        anon = Api(client)
        hana, bob = await anon.guest("Hana"), await anon.guest("Bob")
        tid = (await hana.create_table(seats=2, turn_seconds=2, choice_seconds=2))["table_id"]
        game_id = (await bob.ok_table_action(tid, "seats"))["game"]["game_id"]
        # Turn 1 runs out with the request loop idle: the clock thread's connections have
        # prepared their statements by turn 2, whose deadline is the one measured.
        view = await hana.game(game_id)
        while view["turn"] == 1:
            await asyncio.sleep(0.1)
            view = await hana.game(game_id)
        assert view["turn"] == 2
        deadline = datetime.fromisoformat(view["deadline"])
        stream = f"game-{game_id}"
        with psycopg.connect(own_database, autocommit=True) as conn:
            row = conn.execute("select max(version) from events where stream = %s", (stream,))
            version = row.fetchone()[0]  # type: ignore[index]
        fired, lateness = _lateness()
        blocked_until = deadline + timedelta(seconds=1.5)

        async def block_the_request_loop() -> bool:
            """On the app's event loop (the test client runs it in a thread of its own)."""
            # The loop's own wake-ups for turn 1 went 25 ms after it: past by now.
            await asyncio.sleep(max((deadline - datetime.now(UTC)).total_seconds() - 0.5, 0.3))
            with app.state.service.ctx.wakeups.subscribe(stream) as woken:
                _busy_until(blocked_until)  # from 0.5 s before the deadline to 1.5 s after
                # The clock thread's NOTIFY reached this loop's LISTEN connection.
                await asyncio.wait_for(woken.wait(), 2)
                return bool(woken.is_set())

        assert client.blocking_portal.call(block_the_request_loop)
        fired_after, lateness_after = _lateness()
        assert fired_after == fired + 1  # the turn-2 timer, once
        late = lateness_after - lateness
        # Within milliseconds on a quiet machine; 0.5 s leaves room for a loaded one (this
        # 2-core machine at load 7-9 gave 3-282 ms), far from the 1.5 s of a blocked clock.
        assert late < 0.5, f"the timer fired {late:.3f} s after its deadline"
        with psycopg.connect(own_database, autocommit=True) as conn:
            rows = conn.execute(
                "select recorded_at, metadata from events "
                "where stream = %s and version > %s order by version",
                (stream, version),
            ).fetchall()
        by_clock = [r[0] for r in rows if r[1].get("actor") == "clock"]
        assert by_clock, "the clock wrote nothing while the request loop was blocked"
        assert deadline <= by_clock[0] and by_clock[-1] < blocked_until  # while it was blocked
        print(
            f"timer fired {late * 1000:.0f} ms and written "
            f"{(by_clock[0] - deadline).total_seconds() * 1000:.0f} ms after its deadline, "
            "the request loop blocked"
        )
        assert (await hana.game(game_id))["turn"] == 3  # the clock confirmed for both

    # Shutdown joined the thread (and its bees' executor) and closed every connection.
    assert _clock_threads(before) == []
    assert not app.state.clock_thread.thread.is_alive()
    until = time.monotonic() + 3
    while open_sessions(own_database) and time.monotonic() < until:
        await asyncio.sleep(0.05)
    assert open_sessions(own_database) == 0


async def test_startup_fails_when_the_clock_threads_pool_cannot_open(
    own_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refused(*args: object, **kwargs: object) -> None:
        raise ConnectionRefusedError("the reserved connections are refused")

    monkeypatch.setattr(clock_thread, "open_pool", refused)
    before = set(threading.enumerate())
    app = create_app(own_database, rate_limit_per_second=0)
    with pytest.raises(BaseException) as failed:
        async with AsyncTestClient(app=app):
            pass
    assert _raised(failed.value, ConnectionRefusedError)
    assert _clock_threads(before) == []


async def test_no_clock_thread_without_run_clock(own_database: str) -> None:
    before = set(threading.enumerate())
    app = create_app(own_database, run_clock=False)
    async with AsyncTestClient(app=app):
        assert app.state.clock_thread is None
        assert _clock_threads(before) == []
