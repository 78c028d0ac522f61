"""The composition root: settings → pool → event store → game service → Litestar app.

`create_app()` builds nothing that needs the database; the pool opens in the lifespan, so the
OpenAPI document can be exported without one (`python -m service documents`). The settings
are read once (`Settings.from_env()`) unless given; keyword arguments override them (tests).
The whole app is wrapped in the edge layer (service/api/edge.py): request ids, the access
log, body-first admission, the in-flight limit and stream draining on shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import structlog
from litestar import Litestar
from litestar.config.cors import CORSConfig
from litestar.di import Provide
from litestar.enums import ScopeType
from litestar.exceptions import ValidationException
from litestar.logging.config import StructLoggingConfig
from litestar.middleware.rate_limit import RateLimitConfig
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.spec import Components, Contact, License, SecurityScheme, Tag
from litestar.plugins.problem_details import ProblemDetailsPlugin
from litestar.plugins.structlog import StructlogConfig, StructlogPlugin
from litestar.routes import HTTPRoute
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from service import __version__, logs, metrics
from service.api import idempotency, limits, problems
from service.api.account_routes import ACCOUNT_CONTROLLERS
from service.api.board import board_router, levels_module
from service.api.clock_thread import ClockThread
from service.api.dependencies import provide_player, provide_service
from service.api.docs_ui import STATIC_PATH, docs_policy, docs_render_plugins, docs_static_router
from service.api.edge import Edge, drain_on_signals
from service.api.errors_page import errors_page
from service.api.game_routes import GameController
from service.api.history_routes import HistoryController
from service.api.operations import Metrics, expected_migrations, health_live, health_ready
from service.api.routes import GuestController, health
from service.api.table_routes import TableController
from service.api.tracing import tracing_plugin
from service.bootstrap import bootstrap
from service.settings import Settings
from service.store.idempotency import PostgresIdempotencyRecords
from service.store.pool import NODE_LOST_ERRORS, UNAVAILABLE, Pool, open_pool
from service.store.port import PoolExhausted
from service.store.postgres import postgres_ports
from service.store.wakeups import Wakeups
from service.usecases.context import Clock, ServerSeeds, secure_server_seed, system_clock
from service.usecases.errors import Busy

# Lobby-wide figures for /metrics are refreshed this often (one indexed count per instance).
GAMES_GAUGE_INTERVAL = 5.0
# Closing the pool waits for connections in use; past this, they are terminated.
POOL_CLOSE_TIMEOUT = 2.0


def _structlog_config() -> StructLoggingConfig:
    """structlog as the process configures it (service/logs.py). Exceptions that become
    4xx/503 are expected; a 500 is logged with its traceback by problems.internal_error."""
    config = StructLoggingConfig(log_exceptions="never", **logs.structlog_settings())
    # Litestar fills a missing standard-library config with its own, which would replace the
    # process's (and drop every record that carries an exception): the process owns it.
    config.standard_lib_logging_config = None
    return config


def rate_limit(per_second: int) -> list[Any]:
    if per_second <= 0:
        return []
    config = RateLimitConfig(
        rate_limit=("second", per_second),
        # Who the caller really is: a valid token's player, else the client address.
        identifier_for_request=limits.rate_limit_identity,
        check_throttle_handler=limits.resolve_identity,
        exclude=[*limits.NOT_RATE_LIMITED, STATIC_PATH],
        middleware_class=limits.RateLimitHeaders,
    )
    return [config.middleware]


def create_app(
    database_url: str | None = None,
    *,
    settings: Settings | None = None,
    clock: Clock = system_clock,
    server_seeds: ServerSeeds = secure_server_seed,
    run_clock: bool | None = None,
    rate_limit_per_second: int | None = None,
    pool_size: int | None = None,
    stream_heartbeat: float | None = None,
    allowed_origins: list[str] | None = None,
) -> Litestar:
    config = settings if settings is not None else Settings.from_env()
    config = config.with_(
        **{
            name: value
            for name, value in {
                "database_url": database_url,
                "run_clock": run_clock,
                "rate_limit": rate_limit_per_second,
                "pool_size": pool_size,
                "stream_heartbeat": stream_heartbeat,
                "cors_origins": None if allowed_origins is None else ",".join(allowed_origins),
            }.items()
            if value is not None
        }
    )

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        url = config.database_url
        if not url:
            raise RuntimeError("DATABASE_URL is not set (`swarm serve` starts a database for you)")
        pool = await open_pool(
            url,
            min_size=1,
            max_size=config.pool_size,
            acquire_timeout=config.db_acquire_timeout,
            connect_timeout=config.db_connect_timeout,
            command_timeout=config.db_command_timeout,
            server_settings=config.server_settings,
        )
        wakeups = Wakeups(url)  # its own connection: LISTEN needs one that stays open
        await wakeups.start()
        app.state.stream_heartbeat = config.stream_heartbeat
        app.state.pool = pool
        app.state.expected_migrations = expected_migrations()
        service = bootstrap(
            postgres_ports(pool),
            clock=clock,
            server_seeds=server_seeds,
            wakeups=wakeups,
            guests_per_hour=config.guests_per_hour,
            accounts_per_hour=config.accounts_per_hour,
            hold_expiry=config.hold_expiry,
            analyses_per_hour=config.analyses_per_hour,
        )
        app.state.service = service
        records = PostgresIdempotencyRecords(pool)
        setattr(app.state, idempotency.RECORDS, records)
        setattr(app.state, idempotency.CLOCK, clock)
        # The clock, the relay and the sweeper: on a thread of their own, with connections of
        # their own, so neither the requests' loop nor their pool makes them late (issue 28).
        background = (
            ClockThread(url, config, clock=clock, server_seeds=server_seeds)
            if config.run_clock
            else None
        )
        app.state.clock_thread = background
        gauges = asyncio.create_task(_refresh_gauges(pool)) if config.metrics else None
        restore_signals = drain_on_signals(asyncio.get_running_loop())
        try:
            if background is not None:
                await background.start()  # its pool opened, or startup fails
            yield
        finally:
            restore_signals()
            # Shutdown: the server has already stopped accepting, ended the streams (edge.py)
            # and let requests in flight finish. Each step is bounded and quiet.
            if background is not None:
                await background.stop()
            if gauges is not None:
                gauges.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await gauges
            await wakeups.close()
            try:
                await asyncio.wait_for(pool.close(), POOL_CLOSE_TIMEOUT)
            except (TimeoutError, asyncio.CancelledError):
                pool.terminate()
            structlog.get_logger(__name__).info("stopped: clock, listener and pool closed")

    exception_handlers: dict[Any, Any] = dict.fromkeys(UNAVAILABLE, problems.database_unavailable)
    exception_handlers.update(dict.fromkeys(NODE_LOST_ERRORS, problems.node_lost_or_bug))
    exception_handlers[PoolExhausted] = problems.overloaded
    exception_handlers[Busy] = problems.overloaded
    exception_handlers[ValidationException] = problems.validation_failed  # names a missing body
    exception_handlers[Exception] = problems.internal_error

    plugins: list[Any] = [
        ProblemDetailsPlugin(problems.problem_details_config()),
        # structlog renders every line as JSON; the one access line per request is written by
        # the edge layer (so 404s for unknown paths are logged too), not by a middleware.
        StructlogPlugin(
            StructlogConfig(
                structlog_logging_config=_structlog_config(),
                enable_middleware_logging=False,
            )
        ),
    ]
    middleware: list[Any] = []
    handlers: list[Any] = [
        GuestController,
        TableController,
        GameController,
        HistoryController,
        *ACCOUNT_CONTROLLERS,
        health,
        health_live,
        health_ready,
        docs_static_router(),
        errors_page,
        levels_module,
        board_router(),
    ]
    if config.metrics:
        handlers.append(Metrics)  # requests by operation are recorded by the edge layer
    middleware += [
        *rate_limit(config.rate_limit),
        limits.input_guard,
        idempotency.idempotency,
        docs_policy,
    ]
    if config.tracing != "off":
        plugins.append(tracing_plugin(config.tracing))

    app = Litestar(
        route_handlers=handlers,
        dependencies={
            "service": Provide(provide_service, sync_to_thread=False),
            "player": Provide(provide_player),
        },
        lifespan=[lifespan],
        plugins=plugins,
        exception_handlers=exception_handlers,
        middleware=middleware,
        stores={"rate_limit": limits.SweptMemoryStore()},
        request_max_body_size=config.max_body_bytes,
        cors_config=cors_config(config.cors_origin_list),
        openapi_config=openapi_config(),
        debug=False,
    )
    _allow_every_method(app)
    # Outside the router, so unknown paths get a request id and an access line too.
    app.asgi_handler = Edge(
        cors_problems(app.asgi_handler),
        max_in_flight=config.max_in_flight,
        max_loop_lag=config.max_loop_lag,
        max_streams=config.max_streams,
        max_exports=config.max_exports,
        max_body_bytes=config.max_body_bytes,
        body_timeout=config.body_timeout,
        send_timeout=config.send_timeout,
        record_metrics=config.metrics,
    )
    app.state.settings = config
    return app


async def _refresh_gauges(pool: Pool) -> None:
    while True:
        with contextlib.suppress(Exception):  # a database outage shows in /health/ready
            running = await pool.fetchval("select count(*) from lobby where status = 'playing'")
            metrics.GAMES_RUNNING.set(running)
        await asyncio.sleep(GAMES_GAUGE_INTERVAL)


def _allow_every_method(app: Litestar) -> None:
    """`OPTIONS` answers `Allow` with every method of its path. Litestar makes a path's OPTIONS
    handler with the path's first route, and keeps it when a later handler of the same path
    (another method) makes a new route: its `Allow` then leaves that method out (`OPTIONS
    /tables` said `OPTIONS, POST`, not GET). Each one is pointed at the path's final route."""
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            closure = getattr(handler.fn, "__closure__", None) or ()
            if handler.fn.__name__ == "options_handler":
                for cell in closure:
                    if isinstance(cell.cell_contents, HTTPRoute):
                        cell.cell_contents = route


def cors_problems(app: ASGIApp) -> ASGIApp:
    """A refused CORS preflight (an origin, method or header not allowed) as a problem, 400
    `bad-request`, like every other refusal; Litestar's CORS layer answers it in plain text."""

    async def preflight(scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", ())) if scope["type"] == ScopeType.HTTP else {}
        if scope.get("method") != "OPTIONS" or b"access-control-request-method" not in headers:
            await app(scope, receive, send)
            return
        refused: dict[str, Any] = {}

        async def rewrite(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 400:
                refused.update(message)
                return
            if message["type"] == "http.response.body" and refused:
                reason = message.get("body", b"").decode("utf-8", "replace").strip()
                for part in problems.problem_messages(
                    400,
                    "bad-request",
                    f"{reason or 'Refused'}: this origin, method or header may not call the "
                    "API from a browser (SWARM_CORS_ORIGINS).",
                    [(k, v) for k, v in refused.get("headers", ()) if k.lower() == b"vary"],
                ):
                    await send(part)
                return
            await send(message)

        await app(scope, receive, rewrite)

    return preflight


def cors_config(origins: list[str]) -> CORSConfig | None:
    """CORS for the origins in `SWARM_CORS_ORIGINS` (README, "Browsers"); none: no CORS at
    all, and same-origin pages work as ever."""
    if not origins:
        return None
    return CORSConfig(
        allow_origins=origins,
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=[
            "Authorization",
            "Content-Type",
            "Idempotency-Key",
            "Last-Event-ID",
            "X-Request-ID",
        ],
        expose_headers=[
            "Retry-After",
            "WWW-Authenticate",
            "X-Request-ID",
            "API-Version",
            "RateLimit-Limit",
            "RateLimit-Remaining",
            "RateLimit-Reset",
            "RateLimit-Policy",
            "Idempotent-Replayed",
        ],
        # Bearer tokens, not cookies: no credentials, so no origin can ride a browser session.
        allow_credentials=False,
        max_age=600,
    )


TAGS = [
    Tag(name="players", description="Guests, profiles and where you sit (listMyGames)."),
    Tag(name="accounts", description="Accounts, logging in and out."),
    Tag(
        name="tables",
        description="Solo and online tables: the lobby, seats, starting, play again, seeds, "
        "and the table's live stream.",
    ),
    Tag(
        name="games",
        description="A game: its view, moves, its log (paged and live), stream tickets for "
        "browsers, and after the game its export and the server's verification.",
    ),
    Tag(name="operations", description="Health checks and metrics for operators."),
]


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Swarm",
        version=__version__,
        license=License(name="MIT", identifier="MIT"),
        contact=Contact(name="The Swarm maintainers"),
        tags=TAGS,
        use_handler_docstrings=True,
        description=(
            "Swarm, the bee card game of secret picks, as a REST API. Every action is an "
            "immutable event; every view is rebuilt from them.\n\n"
            "**Errors** are RFC 9457 problem details (`application/problem+json`) with a "
            "`code` from one catalogue (docs/errors.md; the enum of `Problem.code`).\n\n"
            "**Input** is decoded strictly: bodies are `application/json` (else 415), "
            "integers are JSON numbers without a fraction (`17` or `17.0`, as JSON Schema's "
            '`integer` says; never `"17"`), unknown fields '
            "and query parameters are refused (400). Every string is text: a NUL character or "
            "a lone surrogate (a `\\ud800`-`\\udfff` escape that is not half of a pair) "
            "anywhere in a body or a query string, or JSON nested deeper than 32 levels, is "
            "refused with 400 `bad-request` before anything is decoded.\n\n"
            "**Streams** are Server-Sent Events; a browser authenticates them with a "
            "stream ticket (`?ticket=`), never the bearer token. Cross-origin pages are "
            "allowed only from the origins in `SWARM_CORS_ORIGINS`.\n\n"
            "**Versions**: `info.version` is the package version (semantic versioning); "
            "deprecated parts are marked `deprecated` and listed in CHANGELOG.md."
        ),
        path="/docs",
        render_plugins=docs_render_plugins(),
        components=Components(
            security_schemes={
                "bearer": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="The token from createGuest, register or login",
                ),
                "streamTicket": SecurityScheme(
                    type="apiKey",
                    name="ticket",
                    security_scheme_in="query",
                    description="A short-lived ticket for one stream, from "
                    "createGameStreamTicket or createTableStreamTicket (for a browser's "
                    "EventSource, which cannot send an Authorization header)",
                ),
            }
        ),
    )
