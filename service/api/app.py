"""The composition root: settings → pool → event store → game service → Litestar app.

`create_app()` builds nothing that needs the database; the pool opens in the lifespan, so the
OpenAPI document can be exported without one (`python -m service documents`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import structlog
from litestar import Litestar, Request
from litestar.di import Provide
from litestar.enums import ScopeType
from litestar.exceptions import ValidationException
from litestar.logging.config import StructLoggingConfig
from litestar.middleware.logging import LoggingMiddlewareConfig
from litestar.middleware.rate_limit import RateLimitConfig
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.plugins.problem_details import ProblemDetailsPlugin
from litestar.plugins.structlog import StructlogConfig, StructlogPlugin
from litestar.types import (
    ASGIApp,
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    Message,
    Receive,
    Scope,
    Send,
)

from service.api import problems
from service.api.account_routes import ACCOUNT_CONTROLLERS
from service.api.routes import (
    NO_ACCESS_LOG,
    GameController,
    GuestController,
    TableController,
    health,
    provide_player,
    provide_service,
)
from service.bootstrap import bootstrap
from service.store.events import EventStore
from service.store.pool import PoolExhausted, open_pool
from service.store.wakeups import Wakeups
from service.usecases.context import Clock, ServerSeeds, secure_server_seed, system_clock

MAX_BODY_BYTES = 16 * 1024  # moves are tiny; anything larger is refused with 413
# Requests being served at once (streams apart); more are refused at once with 503
# `overloaded`, so a slow database cannot pile up unbounded work (docs/scaling.md, "Limits").
MAX_IN_FLIGHT = int(os.environ.get("SWARM_MAX_IN_FLIGHT", "256"))
# Open Server-Sent Events streams per instance (each is a task and a re-read per wake-up).
MAX_STREAMS = int(os.environ.get("SWARM_MAX_STREAMS", "10000"))
# Requests a second per bearer token (or per client address without one), per instance; 0 turns
# the limit off. Generous for play (a person makes a few moves a second at most), it stops a
# client hammering the service. The streams and /health are not counted.
RATE_LIMIT_PER_SECOND = int(os.environ.get("SWARM_RATE_LIMIT", "200"))


def rate_limit_identity(request: Request[Any, Any, Any]) -> str:
    """Count by bearer token (hashed, so the store never holds one), else by client address."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return "token:" + hashlib.sha256(token.strip().encode()).hexdigest()
    return "addr:" + (request.client.host if request.client else "unknown")


def rate_limit(per_second: int) -> list[Any]:
    if per_second <= 0:
        return []
    config = RateLimitConfig(
        rate_limit=("second", per_second),
        identifier_for_request=rate_limit_identity,
        exclude=["/health", r"/games/[^/]+/stream", r"/tables/[^/]+/stream", "/docs"],
    )
    return [config.middleware]


_OVERLOADED_BODY = msgspec.json.encode(
    {
        "type": "urn:swarm:problem:overloaded",
        "title": "The service is busy",
        "status": 503,
        "detail": "Too much work in flight; try again shortly.",
        "code": "overloaded",
    }
)


def in_flight_limit(app: ASGIApp) -> ASGIApp:
    """Refuses a request with 503 `overloaded` when `MAX_IN_FLIGHT` requests (or, for a stream,
    `MAX_STREAMS` streams) are already being served by this instance."""
    counts = {"requests": 0, "streams": 0}

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        kind = "streams" if scope["path"].endswith("/stream") else "requests"
        limit = MAX_STREAMS if kind == "streams" else MAX_IN_FLIGHT
        if counts[kind] >= limit:
            start: HTTPResponseStartEvent = {
                "type": "http.response.start",
                "status": 503,
                "headers": [
                    (b"content-type", b"application/problem+json"),
                    (b"retry-after", b"1"),
                    (b"content-length", str(len(_OVERLOADED_BODY)).encode()),
                ],
            }
            await send(start)
            body: HTTPResponseBodyEvent = {
                "type": "http.response.body",
                "body": _OVERLOADED_BODY,
                "more_body": False,
            }
            await send(body)
            return
        counts[kind] += 1
        try:
            await app(scope, receive, send)
        finally:
            counts[kind] -= 1

    return middleware


def request_id_middleware(app: ASGIApp) -> ASGIApp:
    """Binds a request id (the client's `X-Request-ID` or a new one) to every log line of the
    request and echoes it in the response."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")[:64]
        request_id = incoming or uuid.uuid4().hex
        structlog.contextvars.bind_contextvars(request_id=request_id)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode("latin-1")))
                message["headers"] = headers
            await send(message)

        try:
            await app(scope, receive, send_with_id)
        finally:
            structlog.contextvars.unbind_contextvars("request_id")

    return middleware


def create_app(
    database_url: str | None = None,
    *,
    clock: Clock = system_clock,
    server_seeds: ServerSeeds = secure_server_seed,
    run_clock: bool = True,
    rate_limit_per_second: int = RATE_LIMIT_PER_SECOND,
    pool_size: int = 10,
    stream_heartbeat: float = 15.0,
) -> Litestar:
    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        url = database_url or os.environ.get("DATABASE_URL")
        if not url:
            raise RuntimeError("DATABASE_URL is not set (python -m service run sets it for you)")
        size = int(os.environ.get("SWARM_POOL_SIZE") or pool_size)
        pool = await open_pool(url, min_size=1, max_size=size)
        wakeups = Wakeups(url)  # its own connection: LISTEN needs one that stays open
        await wakeups.start()
        app.state.stream_heartbeat = stream_heartbeat
        service = bootstrap(
            EventStore(pool), pool, clock=clock, server_seeds=server_seeds, wakeups=wakeups
        )
        app.state.service = service
        timers = asyncio.create_task(service.clock.run()) if run_clock else None
        try:
            yield
        finally:
            if timers is not None:
                timers.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await timers
            await wakeups.close()
            await pool.close()

    exception_handlers: dict[Any, Any] = dict.fromkeys(
        problems.DATABASE_ERRORS, problems.database_unavailable
    )
    exception_handlers[PoolExhausted] = problems.overloaded
    exception_handlers[ValidationException] = problems.validation_failed  # names a missing body
    exception_handlers[Exception] = problems.internal_error

    return Litestar(
        route_handlers=[
            GuestController,
            TableController,
            GameController,
            *ACCOUNT_CONTROLLERS,
            health,
        ],
        dependencies={
            "service": Provide(provide_service, sync_to_thread=False),
            "player": Provide(provide_player),
        },
        lifespan=[lifespan],
        plugins=[
            ProblemDetailsPlugin(problems.problem_details_config()),
            StructlogPlugin(
                StructlogConfig(
                    structlog_logging_config=StructLoggingConfig(),
                    # Never bodies or headers: they carry bearer tokens and hidden hands.
                    middleware_logging_config=LoggingMiddlewareConfig(
                        request_log_fields=("method", "path", "path_params", "query"),
                        response_log_fields=["status_code"],
                        # The middleware logs every body chunk: one line per SSE message.
                        exclude_opt_key=NO_ACCESS_LOG,
                    ),
                )
            ),
        ],
        exception_handlers=exception_handlers,
        middleware=[request_id_middleware, in_flight_limit, *rate_limit(rate_limit_per_second)],
        request_max_body_size=MAX_BODY_BYTES,
        openapi_config=OpenAPIConfig(
            title="Swarm",
            version="1.0.0",
            description=(
                "Swarm, the bee card game of secret picks, as a REST API. Every action is an "
                "immutable event; every view is rebuilt from them. Errors are RFC 9457 problem "
                "details (`application/problem+json`)."
            ),
            path="/docs",
            render_plugins=[ScalarRenderPlugin(), SwaggerRenderPlugin(path="/swagger")],
            components=Components(
                security_schemes={
                    "bearer": SecurityScheme(
                        type="http",
                        scheme="bearer",
                        description="The token from createGuest, register or login",
                    )
                }
            ),
        ),
        debug=False,
    )
