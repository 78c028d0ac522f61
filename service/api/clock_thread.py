"""The turn clock, the outbox relay and the idempotency sweeper on a thread of their own.

On the requests' event loop their timers and callbacks waited behind request work: past
capacity the loop lagged by hundreds of ms to seconds, and the clock fired up to 2.5 s late
(issue 28). Here they run on another event loop, in a thread of the serving process: Python
hands the GIL over every switch interval (5 ms), so their timers fire within milliseconds
however busy the request loop is.

The thread is another instance of the service in all but the process: its own asyncio loop,
its own pool (the reserved connections: an asyncpg connection belongs to the loop it was opened
in), its own service graph from `bootstrap` (its own game cache, `StreamTurns` and wake-up
sender; a cached state is checked by the append, as between instances). It has no `Wakeups`:
it follows no stream. Its appends wake the request loop's followers all the same: the NOTIFY
its event store sends reaches every LISTEN connection, this process's too. Its bee decisions
think on a small executor of its own, so they never queue behind the requests'.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

import structlog

from service.bootstrap import bootstrap
from service.settings import Settings
from service.store.idempotency import PostgresIdempotencyRecords
from service.store.pool import Pool, open_pool
from service.store.postgres import postgres_ports
from service.usecases.context import Clock, ServerSeeds

log = structlog.get_logger(__name__)

# Connections of the thread's pool: the clock's claim and the timers it fires at once
# (clock.FIRE_AT_ONCE: 8), the relay's claim and its delivery, and one to spare.
RESERVED_CONNECTIONS = 12
# Worker threads for its bees' long decisions (`usecases/bee_threads.py`): each runnable
# thread takes its turns at the GIL, so only a few (the clock's own loop needs it promptly).
BEE_THREADS = 2
# Expired idempotency keys' records are deleted this often.
IDEMPOTENCY_SWEEP_INTERVAL = 600.0
# Closing the pool waits for connections in use; past this, they are terminated.
POOL_CLOSE_TIMEOUT = 2.0
# How long `stop` waits for the thread: its tasks cancelled, the pool closed (bounded above),
# a bee decision in progress finished. Past this it is left (a daemon thread) and logged.
JOIN_TIMEOUT = 3.0


class ClockThread:
    """`start()` on the request loop opens the thread's pool and starts its work (raising if
    the pool cannot open); `stop()` cancels the work, closes the pool and joins the thread."""

    def __init__(
        self, url: str, config: Settings, *, clock: Clock, server_seeds: ServerSeeds
    ) -> None:
        self._url = url
        self._config = config
        self._clock = clock
        self._server_seeds = server_seeds
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self.thread = threading.Thread(target=self._main, name="swarm-clock", daemon=True)

    async def start(self) -> None:
        self.thread.start()
        await asyncio.wrap_future(self._ready)

    async def stop(self) -> None:
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # its loop has already ended
                loop.call_soon_threadsafe(stopping.set)
        if self.thread.is_alive():
            await asyncio.to_thread(self.thread.join, JOIN_TIMEOUT)
        if self.thread.is_alive():
            log.warning("clock thread still running after its stop", seconds=JOIN_TIMEOUT)

    def _main(self) -> None:
        # Marks `_ready` as running: a start cancelled meanwhile (a signal during startup)
        # can no longer cancel it, so the results below are always set.
        if not self._ready.set_running_or_notify_cancel():
            return
        try:
            asyncio.run(self._serve())
        except BaseException as failed:  # the pool did not open: `start` raises it
            if not self._ready.done():
                self._ready.set_exception(failed)
            else:
                log.exception("clock thread failed")

    async def _serve(self) -> None:
        config = self._config
        loop = asyncio.get_running_loop()
        loop.set_default_executor(
            ThreadPoolExecutor(max_workers=BEE_THREADS, thread_name_prefix="swarm-clock-bees")
        )
        # Set first: a stop asked for while the pool opens ends the thread as soon as it is open.
        self._loop, self._stopping = loop, asyncio.Event()
        reserved = await open_pool(
            self._url,
            min_size=2,
            max_size=RESERVED_CONNECTIONS,
            acquire_timeout=config.db_acquire_timeout,
            connect_timeout=config.db_connect_timeout,
            command_timeout=config.db_command_timeout,
            server_settings=config.server_settings,
        )
        try:
            service = bootstrap(
                postgres_ports(reserved),
                clock=self._clock,
                server_seeds=self._server_seeds,
                hold_expiry=config.hold_expiry,
            )
            records = PostgresIdempotencyRecords(reserved)
            tasks = [
                loop.create_task(service.turn_clock.run(), name="swarm-turn-clock"),
                loop.create_task(service.money.run(), name="swarm-relay"),
                loop.create_task(_sweep(records, self._clock), name="swarm-sweeper"),
            ]
            self._ready.set_result(None)
            log.info("clock thread started", connections=RESERVED_CONNECTIONS)
            await self._stopping.wait()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            await _close(reserved)


async def _close(pool: Pool) -> None:
    try:
        await asyncio.wait_for(pool.close(), POOL_CLOSE_TIMEOUT)
    except (TimeoutError, asyncio.CancelledError):
        pool.terminate()


async def _sweep(records: PostgresIdempotencyRecords, clock: Clock) -> None:
    """Delete idempotency keys' records past their 24 hours (a lookup ignores them anyway)."""
    while True:
        with contextlib.suppress(Exception):  # a database outage shows in /health/ready
            await records.sweep(clock())
        await asyncio.sleep(IDEMPOTENCY_SWEEP_INTERVAL)
