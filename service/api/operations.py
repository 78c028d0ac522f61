"""Operations endpoints: liveness, readiness and Prometheus metrics.

`/health/live` answers while the process can serve HTTP (no database call: a restart would not
cure a database outage). `/health/ready` answers 200 only when the database answers and every
migration on disk has been applied, so a load balancer sends no traffic to an instance that is
starting, cut off from PostgreSQL, or older than the schema it finds.
"""

from __future__ import annotations

import msgspec
from litestar import get
from litestar.datastructures import State
from litestar.plugins.prometheus import PrometheusController

from service.api.dependencies import strict_body
from service.api.problems import problem, refuses
from service.store.migrate import applied_count, migration_files


class Liveness(msgspec.Struct):
    """The process is up.

    Attributes:
        status: `ok`: the process is up.
    """

    status: str


class Readiness(msgspec.Struct):
    """Whether this instance can serve: its database answers and every migration it expects is
    applied.

    Attributes:
        status: `ok`: this instance can serve (otherwise the answer is a 503 problem).
        database: `ok` when the database answered.
        migrations: `ok` when every migration this version expects is applied.
    """

    status: str
    database: str
    migrations: str


def expected_migrations() -> list[str]:
    return [path.name for path in migration_files()]


@get(
    "/health/live",
    operation_id="healthLive",
    before_request=strict_body,  # an unknown query parameter is refused here too
    summary="Is the process up (liveness probe)",
    tags=["operations"],
)
@refuses()
async def health_live() -> Liveness:
    """The process is up and serving HTTP. No database call."""
    return Liveness(status="ok")


@get(
    "/health/ready",
    operation_id="healthReady",
    before_request=strict_body,  # an unknown query parameter is refused here too
    summary="Can it serve: database and migrations (readiness probe)",
    tags=["operations"],
)
@refuses("migrations-pending")
async def health_ready(state: State) -> Readiness:
    """Ready for traffic: the database answers and every migration on disk is applied."""
    expected: list[str] = state.expected_migrations
    applied = await applied_count(state.pool, expected)
    if applied != len(expected):
        raise problem(
            503,
            "migrations-pending",
            f"{len(expected) - applied} of {len(expected)} migrations are not applied yet; "
            "run `swarm migrate`.",
            **{"Retry-After": "5"},
        )
    return Readiness(status="ok", database="ok", migrations="current")


class Metrics(PrometheusController):
    """Prometheus text format at /metrics (not part of the API document)."""

    include_in_schema = False
