"""The asyncpg connection pool used by the application."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, TypeAlias

import asyncpg

from service import metrics
from service.store.port import PoolExhausted

if TYPE_CHECKING:
    # asyncpg's stubs make Pool and Connection generic; the runtime classes are not subscriptable.
    Pool: TypeAlias = asyncpg.Pool[asyncpg.Record]
    Connection: TypeAlias = asyncpg.Connection[asyncpg.Record]
else:
    Pool = asyncpg.Pool
    Connection = asyncpg.Connection

log = logging.getLogger(__name__)

APP_ROLE = "swarm_app"

_CAN_ASSUME_APP_ROLE = """
select case when exists (select 1 from pg_roles where rolname = $1)
            then pg_has_role(current_user, $1, 'MEMBER')
            else false end
"""


async def assume_app_role(conn: Connection) -> bool:
    """``SET ROLE swarm_app`` on ``conn`` when possible, so the session may only SELECT and
    INSERT events (immutability by privilege, not only by trigger). Returns whether it did.

    Failure (role missing, login user not a member, restricted managed database) is logged and
    tolerated: the triggers still forbid UPDATE, DELETE and TRUNCATE.
    """
    try:
        if not await conn.fetchval(_CAN_ASSUME_APP_ROLE, APP_ROLE):
            log.warning("cannot SET ROLE %s (missing, or not granted to the login user)", APP_ROLE)
            return False
        await conn.execute(f"set role {APP_ROLE}")
    except asyncpg.PostgresError as exc:
        log.warning("SET ROLE %s failed: %s", APP_ROLE, exc)
        return False
    return True


# --- limits (README, "Configuration"; defaults in service/settings.py) -------------------------
# Every wait on the database is bounded, so a slow or absent database turns into quick 503s
# instead of a pile of waiting requests. The composition root passes the configured values.

ACQUIRE_TIMEOUT = 3.0  # wait for a free pool connection
CONNECT_TIMEOUT = 5.0  # open a new connection
COMMAND_TIMEOUT = 10.0  # one statement, client side
# Server side, so PostgreSQL itself gives up (and frees the append lock) even when the client
# has vanished: statements, lock waits (the append lock included) and idle transactions.
SERVER_SETTINGS = {
    "statement_timeout": "10s",
    "lock_timeout": "5s",
    "idle_in_transaction_session_timeout": "30s",
}


# What the driver (or the network under it) raises when the database is away, restarting or
# overwhelmed: the API answers each with 503 `database-unavailable` (service/api/app.py), so no
# module above the store needs to know the driver's exceptions.
UNAVAILABLE: tuple[type[Exception], ...] = (
    asyncpg.CannotConnectNowError,
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    # 57xxx: the server is shutting down or restarting (admin/crash shutdown), or a statement
    # ran past statement_timeout (57014, query canceled).
    asyncpg.OperatorInterventionError,
    # 55P03: a lock wait ran past lock_timeout (the append lock under a slow database).
    asyncpg.LockNotAvailableError,
    # 53xxx: too many connections, out of memory or disk.
    asyncpg.InsufficientResourcesError,
    ConnectionError,
    OSError,
    TimeoutError,
)


# Citus reports a worker it cannot reach inside a statement as an internal error (XX000),
# not as a connection error: e.g. "failure on connection marked as essential" for a
# transaction that had used that worker. These are the database being away, not a bug.
NODE_LOST_ERRORS: tuple[type[Exception], ...] = (asyncpg.InternalServerError,)
_NODE_LOST = (
    "failure on connection marked as essential",
    "connection to the remote node",
    "could not establish any connections to the node",
    "connection not open",
)


def node_lost(exc: Exception) -> bool:
    """Whether one of `NODE_LOST_ERRORS` says a Citus node could not be reached."""
    message = str(exc).lower()
    return any(phrase in message for phrase in _NODE_LOST)


async def ping(pool: Pool) -> None:
    """One round trip to the database (`/health`): raises one of `UNAVAILABLE` if it is away."""
    await pool.fetchval("select 1")


class _BoundedAcquire:
    """``pool.acquire()`` with the pool's default timeout, its TimeoutError made specific."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def __aenter__(self) -> Any:
        started = time.perf_counter()
        try:
            return await self._inner.__aenter__()
        except TimeoutError as exc:
            metrics.POOL_EXHAUSTED.inc()
            raise PoolExhausted("no database connection free in time") from exc
        finally:
            metrics.POOL_WAIT.observe(time.perf_counter() - started)

    async def __aexit__(self, *exc_info: object) -> Any:
        return await self._inner.__aexit__(*exc_info)

    def __await__(self) -> Any:
        return self.__aenter__().__await__()


class BoundedPool(asyncpg.Pool):  # type: ignore[type-arg,unused-ignore]
    """An asyncpg pool whose ``acquire`` (and so ``fetch``, ``execute``…) waits at most
    ``acquire_timeout`` seconds for a connection unless the caller passes its own timeout."""

    acquire_timeout: float = ACQUIRE_TIMEOUT

    def acquire(self, *, timeout: float | None = None) -> Any:
        return _BoundedAcquire(
            super().acquire(timeout=self.acquire_timeout if timeout is None else timeout)
        )


async def open_pool(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    acquire_timeout: float = ACQUIRE_TIMEOUT,
    connect_timeout: float = CONNECT_TIMEOUT,
    command_timeout: float = COMMAND_TIMEOUT,
    server_settings: dict[str, str] | None = None,
) -> Pool:
    """Open a pool whose connections run as ``swarm_app`` when the login user may assume it.

    ``SET ROLE`` survives the pool's reset on release (``RESET ALL`` leaves ``role`` alone), so
    it is done once per new connection in ``init``. Every wait is bounded (see the limits
    above): acquiring a connection, connecting, each statement, lock waits, idle transactions.
    """

    settings = dict(SERVER_SETTINGS if server_settings is None else server_settings)

    async def init(conn: Connection) -> None:
        # Set per connection, not as startup parameters: PgBouncer refuses unknown startup
        # parameters (or, told to ignore them, drops them silently); a SET reaches PostgreSQL
        # either way. One round trip per new connection; RESET ALL never runs (see reset).
        if settings:
            await conn.execute(
                "select "
                + ", ".join(
                    f"set_config('{name}', ${i}, false)" for i, name in enumerate(settings, start=1)
                ),
                *settings.values(),
            )
        await assume_app_role(conn)

    async def reset(conn: Connection) -> None:
        """What a connection needs on its way back to the pool: nothing beyond what asyncpg
        always does (roll back an open transaction, drop listeners). asyncpg's default reset
        adds a round trip per release (`pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *;
        RESET ALL`) that undoes nothing this service does: it takes only transaction-level
        advisory locks, opens no cursors outside transactions, never LISTENs on a pool
        connection, and sets nothing per session but the role and the timeouts of ``init``
        (both kept on purpose: RESET ALL would undo the timeouts). Every pool.fetch() paid
        it: the profile showed it as the biggest single cost (docs/benchmarks.md)."""

    pool = BoundedPool(
        url,
        min_size=min_size,
        max_size=max_size,
        max_queries=50_000,
        max_inactive_connection_lifetime=300.0,
        init=init,
        reset=reset,
        loop=None,
        connection_class=asyncpg.Connection,
        record_class=asyncpg.Record,
        timeout=connect_timeout,
        command_timeout=command_timeout,
    )
    pool.acquire_timeout = acquire_timeout
    await pool
    return pool
