"""Admission control (service/api/admission.py): the limit, the queue by kind, and shedding by
the queue's delay. The clock the shedding reads is a fake one here, so nothing depends on how
fast this machine is; only the waits themselves are real (and bounded by the test's values)."""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from service.api.admission import (
    LAG_IDLE,
    LAG_RECOVERY,
    LAG_TARGET,
    MOVE,
    NEW,
    OTHER,
    Admission,
    LoopWatch,
    kind_of,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("method", "path", "kind"),
    [
        ("POST", "/games/3f1c/moves", MOVE),
        ("POST", "/guests", NEW),
        ("POST", "/accounts", NEW),
        ("POST", "/sessions", NEW),
        ("POST", "/tables", NEW),
        ("POST", "/solo-tables", NEW),
        ("POST", "/tables/3f1c/seats", NEW),
        ("POST", "/play-now", NEW),  # it opens tables, or seats one
        ("GET", "/games/3f1c", MOVE),  # the view a player moves from
        ("GET", "/games/3f1c/events", OTHER),
        ("GET", "/tables", OTHER),
        ("POST", "/tables/3f1c/games", OTHER),  # play again at a table already playing
        ("POST", "/tables/3f1c/leave", OTHER),
        ("GET", "/games/3f1c/moves", OTHER),
        ("GET", "/health/ready", None),
        ("GET", "/metrics", None),
    ],
)
def test_every_request_has_a_kind(method: str, path: str, kind: int | None) -> None:
    assert kind_of(method, path) == kind


async def test_under_the_limit_every_request_enters_at_once() -> None:
    admission = Admission(2)
    assert await admission.enter(NEW)
    assert await admission.enter(MOVE)
    assert admission.active == 2
    admission.leave()
    admission.leave()
    assert admission.active == 0


async def test_a_freed_place_goes_to_a_move_before_a_sign_up() -> None:
    admission = Admission(1, interval=30.0, clock=FakeClock())
    assert await admission.enter(OTHER)
    sign_up = asyncio.ensure_future(admission.enter(NEW))
    other = asyncio.ensure_future(admission.enter(OTHER))
    await asyncio.sleep(0)
    move = asyncio.ensure_future(admission.enter(MOVE))  # arrives last
    await asyncio.sleep(0)
    assert not (sign_up.done() or other.done() or move.done())

    admission.leave()  # the first place frees: the move has it
    await asyncio.sleep(0)
    assert move.done() and move.result() is True
    assert not sign_up.done() and not other.done()
    assert admission.active == 1

    admission.leave()  # then the other request, then the sign-up
    await asyncio.sleep(0)
    assert other.done() and other.result() is True and not sign_up.done()
    admission.leave()
    await asyncio.sleep(0)
    assert sign_up.result() is True
    admission.leave()
    assert admission.active == 0


async def test_a_queue_that_stands_sheds_new_work_at_once_and_the_rest_soon() -> None:
    clock = FakeClock()
    admission = Admission(1, interval=0.1, target=0.005, clock=clock)
    assert await admission.enter(MOVE)
    # A burst on a healthy process: the queue has just formed, so a request may wait the
    # whole interval (and is served when a place frees within it).
    assert admission.wait_allowed(NEW) == pytest.approx(0.1)
    waiting = asyncio.ensure_future(admission.enter(MOVE))
    await asyncio.sleep(0)
    assert not admission.standing()

    clock.now += 0.5  # the queue has not been empty for longer than the interval
    assert admission.standing()
    assert admission.wait_allowed(NEW) == 0.0
    assert admission.wait_allowed(OTHER) == pytest.approx(0.005)
    assert admission.wait_allowed(MOVE) == pytest.approx(0.005)
    assert await admission.enter(NEW) is False  # refused without waiting

    admission.leave()  # the queue empties: a burst is welcome again
    assert await waiting is True
    assert not admission.standing()
    assert admission.wait_allowed(NEW) == pytest.approx(0.1)
    admission.leave()
    assert admission.active == 0


async def test_a_request_that_waits_too_long_is_refused_and_leaves_no_trace() -> None:
    admission = Admission(1, interval=0.01, target=0.01)
    assert await admission.enter(MOVE)
    assert await admission.enter(MOVE) is False  # waited its 10 ms; nobody left
    assert admission.active == 1
    admission.leave()
    assert admission.active == 0
    assert await admission.enter(OTHER)  # the queue is empty again: straight in
    admission.leave()


async def test_a_full_queue_refuses_at_once() -> None:
    admission = Admission(1, interval=30.0, clock=FakeClock())
    assert await admission.enter(MOVE)
    queued = [asyncio.ensure_future(admission.enter(OTHER)) for _ in range(admission.max_queue)]
    await asyncio.sleep(0)
    assert admission.wait_allowed(MOVE) == 0.0
    assert await admission.enter(MOVE) is False
    for _ in queued:
        admission.leave()
        await asyncio.sleep(0)
    assert all(q.result() for q in queued)
    admission.leave()
    assert admission.active == 0


async def test_a_cancelled_waiter_gives_its_place_back() -> None:
    admission = Admission(1, interval=30.0, clock=FakeClock())
    assert await admission.enter(MOVE)
    waiter = asyncio.ensure_future(admission.enter(MOVE))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    admission.leave()
    assert admission.active == 0
    assert await admission.enter(NEW)

    # Cancelled just as the place was handed to it: the place goes back, not lost.
    handed = asyncio.ensure_future(admission.enter(MOVE))
    await asyncio.sleep(0)
    admission.leave()  # hands the place over…
    handed.cancel()  # …and the waiter is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await handed
    assert admission.active == 0


def test_retry_after_grows_with_the_refusals_and_falls_when_they_stop() -> None:
    from service.api.admission import REFUSALS_PER_SECOND, RETRY_AFTER_MAX

    clock = FakeClock()
    admission = Admission(4, clock=clock)
    assert admission.refused(MOVE) == 1
    assert admission.refused(NEW) == 2  # new work waits twice as long

    def second(refusals: int) -> int:
        answers = []
        for _ in range(refusals):
            clock.now += 1.001 / refusals
            answers.append(admission.refused(MOVE))
        return answers[-1]

    # Ten times the refusals aimed at: the wait doubles each second, up to its cap.
    waits = [second(int(10 * REFUSALS_PER_SECOND)) for _ in range(5)]
    assert waits == sorted(waits)
    assert waits[0] == 2
    assert waits[-1] == RETRY_AFTER_MAX
    assert admission.refused(NEW) == 2 * RETRY_AFTER_MAX
    # The clients spread out: as many refusals as aimed at keep the wait where it is.
    assert second(int(REFUSALS_PER_SECOND)) == RETRY_AFTER_MAX
    # A quiet spell: the next refusals find it halved each second, back to 1 s.
    clock.now += 30.0
    assert second(3) < RETRY_AFTER_MAX
    assert [second(3) for _ in range(4)][-1] == 1


async def test_a_late_loop_lowers_the_limit() -> None:
    """Admission, the limit follows the loop's lag: each probe run later than LAG_TARGET cuts
    the places by LAG_BACKOFF (never under half the setting); timely probes give them back,
    LAG_RECOVERY at a time. A late loop alone refuses nothing while a place is free."""
    clock = FakeClock()
    admission = Admission(16, interval=0.1, clock=clock)
    assert admission.places() == 16
    admission.lagged(LAG_TARGET / 2)  # on time: nothing changes
    assert admission.places() == 16
    admission.lagged(LAG_TARGET * 2)
    assert admission.places() == 12
    assert not admission.standing()
    assert await admission.enter(NEW)
    admission.leave()
    for _ in range(40):
        admission.lagged(1.0)
    assert admission.places() == 8
    timely = math.ceil((16 - 8) / LAG_RECOVERY) + 1
    for _ in range(timely):
        admission.lagged(0.0)
    assert admission.places() == 16


async def test_places_taken_away_by_a_late_loop_are_not_handed_on() -> None:
    """Admission: when the limit comes down under the requests in flight, a request that ends
    gives its place back to nobody; when timely probes raise it again, who waits gets in."""
    clock = FakeClock()
    admission = Admission(8, interval=30.0, clock=clock)
    for _ in range(8):
        assert await admission.enter(MOVE)
    waiting = asyncio.ensure_future(admission.enter(MOVE))
    await asyncio.sleep(0)
    admission.lagged(1.0)  # 8 -> 6 places, 8 in flight
    assert admission.places() == 6
    admission.leave()
    admission.leave()  # 6 in flight: those places were not handed over
    await asyncio.sleep(0)
    assert not waiting.done() and admission.active == 6
    admission.leave()  # 6 places, 6 in flight: this one passes to the waiting move
    await asyncio.sleep(0)
    assert waiting.result() is True and admission.active == 6
    another = asyncio.ensure_future(admission.enter(MOVE))
    await asyncio.sleep(0)
    assert not another.done()
    for _ in range(10):  # timely probes: one place more, and the move waiting enters
        admission.lagged(0.0)
    await asyncio.sleep(0)
    assert admission.places() == 7
    assert another.result() is True and admission.active == 7
    for _ in range(7):
        admission.leave()
    assert admission.active == 0


async def test_the_loop_watch_probes_while_requests_come_and_stops_when_idle() -> None:
    """Admission's loop watch: started by a request, it reports the loop's lag (a loop blocked
    for 60 ms is reported late), and it stops by itself once requests stop coming."""
    admission = Admission(16)
    watch = LoopWatch(admission, every=0.005)
    reported: list[float] = []
    lagged = admission.lagged

    def record(late: float) -> None:
        reported.append(late)
        lagged(late)

    admission.lagged = record  # type: ignore[method-assign]
    watch.seen()
    await asyncio.sleep(0.03)
    assert reported  # probed while requests come
    time.sleep(0.06)  # the loop blocked: the next probe runs 55 ms late or more
    await asyncio.sleep(0.01)
    assert max(reported) >= 0.05
    assert admission.places() < 16
    watch._last_seen -= LAG_IDLE + 1  # no request for longer than LAG_IDLE
    await asyncio.sleep(0.02)
    count = len(reported)
    await asyncio.sleep(0.03)
    assert len(reported) == count
