"""Deciding again when someone else wrote first.

Simultaneous picks are the heart of the game: everyone at a table moves in the same second. A
decision is made on the state as loaded and appended at the version it was loaded at; when
another move got there first (`ConcurrencyConflict`), the decision is made again on the fresh
state. Two things make sure a valid move is never refused for that (docs/architecture.md):

* On one instance, decisions about the same stream take turns (`StreamTurns`): a move waits for
  the one in front of it instead of losing to it, so it never conflicts with its own instance.
* Across instances, a conflict is retried after a short random wait that doubles each time
  (jittered exponential backoff, capped), for as long as `RETRY_BUDGET` seconds allow: a bound
  in time, not a count, so a busy second before the clock runs out cannot exhaust it. Only a
  store that stays contended for that long gets `Conflict` (a 409 that says try again).

A conflict is the append's (`ConcurrencyConflict`); a decision can also find, before it
appends, that what it was decided on is stale (a game dealt meanwhile): it answers `STALE`, and
is decided again the same way.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from service import metrics
from service.store.log import ConcurrencyConflict
from service.usecases.errors import Busy, Conflict

T = TypeVar("T")

RETRY_BUDGET = 10.0  # seconds a decision may keep losing races before it is refused
FIRST_WAIT, LONGEST_WAIT = 0.002, 0.1  # seconds: the backoff's first ceiling, and its cap
# Seconds a decision waits for its stream's turn on this instance before it is shed (`Busy`):
# a burst of moves to one game over a slow database would otherwise queue without bound. 2 s
# since admission control (issue 28), which admits moves first: at 5 s an admitted move could
# wait that long behind its game's others and then make its own slow round trips (the slow-
# database fault run's slowest answer went from 16 to 9-10 s; racing moves wait milliseconds).
TURN_WAIT = 2.0

_jitter = random.Random()  # waits only: nothing decided depends on it


class Stale:
    """An attempt's answer when it found, before appending anything, that the state it decided
    on is stale (another instance changed it first): decided again, as after a conflict."""


STALE = Stale()


class StreamTurns:
    """One asyncio lock per stream key, held while a decision about that stream is loaded,
    decided and appended; dropped again when nobody waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def turn(self, key: str, wait: float = TURN_WAIT) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            if users == 0:
                # Nobody holds it or waits for it: taken at once, without wait_for's task and
                # timer (issue 28: one of each a move).
                await lock.acquire()
            else:
                try:
                    await asyncio.wait_for(lock.acquire(), wait)
                except TimeoutError:
                    raise Busy(
                        f"Too many requests wait for this {key.split('-', 1)[0]}; try again."
                    ) from None
            try:
                yield
            finally:
                lock.release()
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)


async def until_applied(
    attempt: Callable[[], Awaitable[T | Stale]],
    *,
    what: str,
    budget: float = RETRY_BUDGET,
    on_conflict: Callable[[], None] | None = None,
) -> T:
    """Run `attempt` (load, decide, append) until it appends without a conflict and without
    finding its state stale."""
    deadline = time.monotonic() + budget
    ceiling = FIRST_WAIT
    while True:
        try:
            answer = await attempt()
        except ConcurrencyConflict:
            answer = STALE
        if not isinstance(answer, Stale):
            return answer
        metrics.APPEND_CONFLICTS.inc()
        if on_conflict is not None:
            on_conflict()
        if time.monotonic() >= deadline:
            raise Conflict(f"The {what} changed too often while deciding; try again.")
        await asyncio.sleep(_jitter.uniform(0, ceiling))
        ceiling = min(ceiling * 2, LONGEST_WAIT)
