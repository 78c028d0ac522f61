"""The asyncpg connection pool used by the application."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, TypeAlias

import asyncpg

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


async def open_pool(url: str, *, min_size: int = 1, max_size: int = 10) -> Pool:
    """Open a pool whose connections run as ``swarm_app`` when the login user may assume it.

    ``SET ROLE`` survives the pool's reset on release (``RESET ALL`` leaves ``role`` alone), so
    it is done once per new connection in ``init``.
    """

    async def init(conn: Connection) -> None:
        await assume_app_role(conn)

    return await asyncpg.create_pool(dsn=url, min_size=min_size, max_size=max_size, init=init)
