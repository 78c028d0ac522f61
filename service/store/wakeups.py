"""Wake-ups for stream followers: PostgreSQL LISTEN on one dedicated connection per process.

Once an append has committed, ``EventStore`` notifies ``swarm_events`` with each stream it
wrote (its process's ``_Wakener``, a batch of streams a statement, after the commit: never
inside the appending transaction, which would take PostgreSQL's server-wide notify lock
there), and PostgreSQL delivers the notification to every listening process (every app
instance). A notification is only a wake-up: its payload is the stream name, and a follower
re-reads the stream from its own last version. Notifications can be missed (the listener
connection drops, a follower subscribes late, the appending process dies between its commit
and the notify), so followers also re-read on every heartbeat tick; nothing depends on a
notification arriving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import asyncpg

from service.store.events import WAKEUP_CHANNEL as CHANNEL
from service.store.pool import Connection

log = logging.getLogger(__name__)


class Wakeups:
    """One LISTEN connection (not from the pool) fanned out to in-process subscribers.

    ``subscribe(stream)`` gives an ``asyncio.Event`` that is set whenever a notification for
    that stream arrives (and, for everyone, whenever the listener reconnects, since
    notifications may have been lost meanwhile). The subscriber clears it before re-reading.
    """

    def __init__(self, url: str, *, max_backoff: float = 10.0) -> None:
        self._url = url
        self._max_backoff = max_backoff
        self._subscribers: dict[str, set[asyncio.Event]] = {}
        self._task: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()

    async def start(self, *, timeout: float = 10.0) -> None:
        """Start listening; waits (up to ``timeout``) for the first connection."""
        self._task = asyncio.create_task(self._run(), name="swarm-wakeups")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._connected.wait(), timeout)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._wake_all()

    @contextlib.contextmanager
    def subscribe(self, stream: str) -> Iterator[asyncio.Event]:
        event = asyncio.Event()
        self._subscribers.setdefault(stream, set()).add(event)
        try:
            yield event
        finally:
            subscribers = self._subscribers.get(stream)
            if subscribers is not None:
                subscribers.discard(event)
                if not subscribers:
                    del self._subscribers[stream]

    def _notified(self, _conn: Any, _pid: int, _channel: str, payload: object) -> None:
        for event in self._subscribers.get(str(payload), ()):
            event.set()

    def _wake_all(self) -> None:
        for subscribers in self._subscribers.values():
            for event in subscribers:
                event.set()

    async def _run(self) -> None:
        backoff = 0.1
        while True:
            conn: Connection | None = None
            try:
                conn = await asyncpg.connect(self._url)
                lost = asyncio.Event()
                conn.add_termination_listener(lambda _c, lost=lost: lost.set())
                await conn.add_listener(CHANNEL, self._notified)
                if backoff > 0.1:
                    log.warning("stream wake-up listener reconnected")
                backoff = 0.1
                self._connected.set()
                self._wake_all()  # anything may have been missed while disconnected
                while not lost.is_set():
                    # The termination listener fires on a clean close; a silently dead socket
                    # is found by the periodic probe.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(lost.wait(), 15)
                    if not lost.is_set():
                        await asyncio.wait_for(conn.execute("select 1"), 10)
                log.warning("stream wake-up listener lost its connection; reconnecting")
            except asyncio.CancelledError:
                raise
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
                log.warning("stream wake-up listener failed (%s); retrying in %.1fs", exc, backoff)
            finally:
                self._connected.clear()
                if conn is not None and not conn.is_closed():
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(conn.close(), 5)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self._max_backoff)
