"""Admission control: past what this process can carry, a request is refused before it costs
anything, and what is admitted is served in time (docs/operations.md, "Past capacity").

* **A concurrency limit** (`Settings.max_in_flight`): at most that many requests are being
  handled at once (streams apart). Past it a request waits in a queue, one per kind, and the
  next free place goes to the most urgent kind waiting: playing a game in progress (a move, the
  game's view) before anything else, sign-ups and new tables last.
* **The queue is shed by its delay, as CoDel does** (the variant of Facebook's "Fail at
  scale"): while the queue keeps emptying (it was empty within the last `INTERVAL`), a burst is
  absorbed: a request may wait up to `INTERVAL`. Once it has stood for longer than that, the
  process is past its capacity: a request may wait at most `TARGET`, and a sign-up or a new
  table is refused at once. A refused request has cost the HTTP parse and this decision: no
  decoding, no token check, no pool connection, no write (a shed request changes nothing).

* **The limit follows the event loop's lag** (`LoopWatch`, `Admission.lagged`): the loop is
  probed every `LAG_EVERY`, and a probe run later than `max_lag` (`Settings.max_loop_lag`,
  `LAG_TARGET` by default) means the loop has more ready work than it gets through (requests
  being served, streams woken, refusals written): every request, refused ones too, waits that
  long before its first byte is even parsed. So each late probe lowers the limit by
  `LAG_BACKOFF` (to `MIN_SHARE` of the setting at least), and each timely one raises it by
  `LAG_RECOVERY` places, back to the setting; the requests over the
  limit wait in the queue, shed by its delay as below. A late loop alone refuses nothing: a
  request that finds a place free enters. A limit
  that suits a quiet machine is then not too many once the process gets a smaller share of a
  core (its neighbours, a full collection, a burst of streams).

* **Retry-After follows the refusals.** A refused client comes back after `Retry-After`, so
  the refusals a second are about the clients waiting ÷ that wait: past capacity, a fixed 1 s
  makes every waiting player ask again every second, and the refusals alone eat the CPU the
  moves need. So each second the wait is scaled by the refusals counted ÷ `REFUSALS_PER_SECOND`
  (at most doubled or halved at once), between 1 s and `RETRY_AFTER_MAX` (twice both for new
  work); a second with fewer refusals than that halves it, at most.

Why this and not an adaptive limit or a longer queue: on a CPU-bound process the delay in the
queue is the signal that matters (a request that waits 3 s for a pool connection has already
cost nearly what it would have cost to serve), it needs no latency model of the machine, and it
answers a refusal within `TARGET` of its arrival under overload, while a burst on a healthy
process is served, not refused.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections import deque
from collections.abc import Callable

from service import metrics

# The kinds of request, most urgent first.
MOVE = 0  # playing a game in progress: a move, and the game's view (a player needs it to move)
OTHER = 1  # everything else: logs, lobby, tickets, leaving, play again, the board's files
NEW = 2  # sign-ups, logins and new tables or seats: refused first when past capacity
KINDS = ("move", "other", "new")

INTERVAL = 0.1  # seconds the queue may stand before the process counts as past capacity
TARGET = 0.01  # seconds a request may wait in a standing queue
QUEUE_PER_PLACE = 4  # the queue holds at most this many requests per place of the limit
REFUSALS_PER_SECOND = 100.0  # refusals a second a process aims at when past capacity
RETRY_AFTER_MAX = 5  # seconds a refused move is asked to wait at most (new work: twice)
LAG_EVERY = 0.01  # seconds between two probes of the loop's lag
LAG_TARGET = 0.025  # a probe later than this: the loop is behind its work
LAG_BACKOFF = 0.75  # the limit's factor at each late probe
LAG_RECOVERY = 0.1  # places the limit gains at each timely probe (1 every 100 ms)
# The limit never falls below this share of the setting: a request waits for the database too,
# and a burst of a few requests at once (nine people joining one table) must still pass when a
# neighbour or a collection made one probe late (a floor of 4 refused some of them).
MIN_SHARE = 0.5
LAG_IDLE = 1.0  # seconds without a request after which the probe stops (the next restarts it)

_MOVE = re.compile(r"^/games/[^/]+/moves$")
_VIEW = re.compile(r"^/games/[^/]+$")
_NEW = re.compile(r"^/(guests|accounts|sessions|tables|solo-tables|tables/[^/]+/seats|play-now)/?$")
# Never queued or shed: health checks and metrics (cheap, and what operators look at when busy).
_EXEMPT = ("/health", "/metrics")
# A player's games in bulk (exportPlayerGames): an answer as long as the player's history, sent
# as fast as the client reads it. Admitted as streams are, outside the in-flight limit, with a
# cap of its own: a client that stops reading holds its own place only (issue 43's review).
_EXPORT = re.compile(r"^/players/[^/]+/games$")

STREAM = "stream"
EXPORT = "export"


def long_answer(method: str, path: str) -> str | None:
    """`STREAM` for an event stream, `EXPORT` for a bulk export, None for any other request:
    the two answers that last as long as the client keeps reading."""
    if method != "GET":
        return None
    if path.endswith("/stream"):
        return STREAM
    if _EXPORT.match(path):
        return EXPORT
    return None


def kind_of(method: str, path: str) -> int | None:
    """The request's kind, or None when it is never queued."""
    if method == "POST":
        if _MOVE.match(path):
            return MOVE
        if _NEW.match(path):
            return NEW
    elif path.startswith(_EXEMPT):
        return None
    elif method == "GET" and _VIEW.match(path):
        return MOVE
    return OTHER


class Admission:
    """The limit and its queue, for one process (one event loop)."""

    def __init__(
        self,
        limit: int,
        *,
        interval: float = INTERVAL,
        target: float = TARGET,
        max_lag: float = LAG_TARGET,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.max_lag = max_lag
        self.interval = interval
        self.target = target
        self.clock = clock
        self.active = 0
        self.allowed = float(limit)  # the limit now (`lagged`): `limit` at most
        self.floor = max(1, math.ceil(MIN_SHARE * limit))  # and `floor` at least
        self.max_queue = QUEUE_PER_PLACE * limit
        self._queues: tuple[deque[asyncio.Future[None]], ...] = (deque(), deque(), deque())
        self._waiting = 0
        self._last_empty = clock()
        self._retry_after = 1.0  # seconds, for a move (`retry_after`)
        self._refused = 0  # refusals since `_counted_from`
        self._counted_from = clock()

    def places(self) -> int:
        """Requests admitted at once now."""
        return min(self.limit, max(self.floor, int(self.allowed + 1e-9)))

    def standing(self) -> bool:
        """Whether the queue has not been empty for longer than `interval`: past capacity."""
        return self._waiting > 0 and self.clock() - self._last_empty > self.interval

    def lagged(self, late: float) -> None:
        """A probe of the loop ran `late` seconds after it was due: lower the limit if that is
        over `max_lag`, else raise it a little (and admit who waits for the places gained)."""
        metrics.LOOP_LAG.observe(late)
        if late > self.max_lag:
            self.allowed = max(float(self.floor), self.allowed * LAG_BACKOFF)
        elif self.allowed < self.limit:
            self.allowed = min(float(self.limit), self.allowed + LAG_RECOVERY)
            while self.active < self.places() and self._hand_over():
                self.active += 1
        metrics.ADMISSION_LIMIT.set(self.places())

    def wait_allowed(self, kind: int) -> float:
        """How long a request of `kind` may wait for a place now (0: refused at once)."""
        if self._waiting >= self.max_queue:
            return 0.0
        if self.standing():
            return 0.0 if kind == NEW else self.target
        return self.interval

    async def enter(self, kind: int) -> bool:
        """Take a place (True: the caller must `leave()` when done), or False: refused."""
        if self.active < self.places() and self._waiting == 0:
            self.active += 1
            self._last_empty = self.clock()
            return True
        wait = self.wait_allowed(kind)
        if wait <= 0:
            return False
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiting == 0:
            self._last_empty = self.clock()  # empty until now: it starts standing from here
        queue = self._queues[kind]
        queue.append(place)
        self._waiting += 1
        started = self.clock()
        try:
            async with asyncio.timeout(wait):
                await place
            return True  # handed over by leave(), already counted in `active`
        except (TimeoutError, asyncio.CancelledError) as stopped:
            if place.done() and not place.cancelled():
                # The place was handed over just as the wait ended: it is ours.
                if isinstance(stopped, asyncio.CancelledError):
                    self.leave()
                    raise
                return True
            if place in queue:
                queue.remove(place)
                self._dequeued()
            if isinstance(stopped, asyncio.CancelledError):
                raise
            return False
        finally:
            metrics.ADMISSION_WAIT.observe(self.clock() - started)

    def refused(self, kind: int) -> int:
        """Count a refusal; the `Retry-After` (whole seconds) to answer it with."""
        self._refused += 1
        now = self.clock()
        span = now - self._counted_from
        if span >= 1.0:
            rate = self._refused / span
            factor = min(max(rate / REFUSALS_PER_SECOND, 0.5), 2.0)
            self._retry_after = min(max(self._retry_after * factor, 1.0), RETRY_AFTER_MAX)
            self._refused, self._counted_from = 0, now
        wait = max(1, round(self._retry_after))
        return 2 * wait if kind == NEW else wait

    def leave(self) -> None:
        """Give the place back: to the most urgent request waiting, if any, unless the limit
        came down below the requests in flight (`lagged`)."""
        if self.active > self.places() or not self._hand_over():
            self.active -= 1  # else the place passed on: `active` is unchanged

    def _hand_over(self) -> bool:
        """Give a place to the most urgent request waiting; False if none waits."""
        for queue in self._queues:
            while queue:
                place = queue.popleft()
                self._dequeued()
                if not place.done():
                    place.set_result(None)
                    return True
        return False

    def _dequeued(self) -> None:
        self._waiting -= 1
        if self._waiting == 0:
            self._last_empty = self.clock()


class LoopWatch:
    """Probes the running loop's lag for `admission` (`Admission.lagged`) every `LAG_EVERY`
    while requests come: it starts with the first request (`seen`) and stops after `LAG_IDLE`
    without one, so an idle process (or a test's app) wakes nobody."""

    def __init__(self, admission: Admission, every: float = LAG_EVERY) -> None:
        self.admission = admission
        self.every = every
        self._last_seen = 0.0
        self._running: asyncio.AbstractEventLoop | None = None

    def seen(self) -> None:
        """A request came: probe the loop if not already."""
        loop = asyncio.get_running_loop()
        self._last_seen = loop.time()
        if self._running is not loop:
            self._running = loop
            due = loop.time() + self.every
            loop.call_at(due, self._probe, loop, due)

    def _probe(self, loop: asyncio.AbstractEventLoop, due: float) -> None:
        now = loop.time()
        self.admission.lagged(now - due)
        if now - self._last_seen > LAG_IDLE or self._running is not loop:
            if self._running is loop:
                self._running = None
            return
        loop.call_at(now + self.every, self._probe, loop, now + self.every)
