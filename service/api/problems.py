"""Every refusal as an RFC 9457 problem, mapped in this one place.

`type` is `urn:swarm:problem:<code>`; `code` repeats the slug so clients can switch on it
without parsing the URN. A 500 is always a bug: it is logged with the request id.
"""

from __future__ import annotations

import types
from typing import Any, Union, get_args, get_origin

import asyncpg
import msgspec
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsException

from service.domain.rules.errors import IllegalMove, InvalidMove, RuleViolation
from service.domain.tables import NotPermitted
from service.store.events import ConcurrencyConflict
from service.usecases.errors import Conflict, Forbidden, NotFound, Unauthorized
from service.usecases.identity import TooManySignUps

PROBLEM_MEDIA_TYPE = "application/problem+json"
log = structlog.get_logger(__name__)


class Problem(msgspec.Struct, kw_only=True):
    """An RFC 9457 problem details object."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    code: str | None = None
    extra: Any | None = None


def problem(
    status: int, code: str, title: str, detail: str, **headers: str
) -> ProblemDetailsException:
    return ProblemDetailsException(
        status_code=status,
        type_=f"urn:swarm:problem:{code}",
        title=title,
        detail=detail,
        extra={"code": code},
        headers=dict(headers) or None,
    )


def _rule_violation(exc: RuleViolation) -> ProblemDetailsException:
    status = (
        403
        if isinstance(exc, NotPermitted)
        else 422
        if isinstance(exc, InvalidMove)
        else 409
        if isinstance(exc, IllegalMove)
        else 400
    )
    return problem(status, exc.code, exc.title, exc.detail)


def _http_exception(exc: HTTPException) -> ProblemDetailsException:
    codes = {
        400: "bad-request",
        401: "unauthorized",
        404: "not-found",
        405: "method-not-allowed",
        413: "body-too-large",
        429: "too-many-requests",
    }
    code = codes.get(exc.status_code, f"http-{exc.status_code}")
    title = exc.detail or "Bad request"
    pd = ProblemDetailsException(
        status_code=exc.status_code,
        type_=f"urn:swarm:problem:{code}",
        title=title,
        detail=title,
        headers=exc.headers,
        extra={"code": code, "extra": exc.extra} if exc.extra else {"code": code},
    )
    return pd


def validation_failed(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    """Names the body an operation expects when the request sent none (or an empty one).

    Litestar reports a missing body as the `KeyError` of its `data` argument, `"'data'"`,
    which tells a newcomer nothing; every other validation error keeps Litestar's messages.
    """
    errors = exc.extra if isinstance(exc.extra, list) else []
    missing = any(
        isinstance(e, dict) and e.get("key") == "data" and e.get("message") == "'data'"
        for e in errors
    )
    data = request.route_handler.parsed_fn_signature.parameters.get("data")
    if not missing or data is None:
        return _http_exception(exc).to_response(request)
    return problem(
        400,
        "body-required",
        "A JSON body is required",
        f"{request.method} {request.url.path} expects a JSON body: {_describe(data.annotation)}.",
    ).to_response(request)


def _describe(body: Any) -> str:
    """`body` as a client would write it: an object's fields, or a union's tags."""
    if get_origin(body) in (Union, types.UnionType):
        options = [_describe(option) for option in get_args(body) if option is not type(None)]
        return "one of " + "; ".join(options)
    if isinstance(body, type) and issubclass(body, msgspec.Struct):
        config = body.__struct_config__
        fields = [
            f"{f.encode_name} ({'required' if f.required else 'optional'})"
            for f in msgspec.structs.fields(body)
        ]
        if config.tag_field is not None:
            fields.insert(0, f'{config.tag_field} = "{config.tag}"')
        described = f"a {body.__name__} object with " + ", ".join(fields)
        if not any(f.required for f in msgspec.structs.fields(body)):
            described += " (send {} for the defaults)"
        return described
    return getattr(body, "__name__", str(body))


def _not_found(exc: NotFound) -> ProblemDetailsException:
    return problem(404, "not-found", "Not found", str(exc))


def _unauthorized(exc: Unauthorized) -> ProblemDetailsException:
    return problem(
        401,
        "unauthorized",
        "A valid bearer token is required",
        str(exc),
        **{"WWW-Authenticate": "Bearer"},
    )


def _forbidden(exc: Forbidden) -> ProblemDetailsException:
    return problem(403, "forbidden", "Not yours to see or do", str(exc))


def _conflict(exc: Conflict) -> ProblemDetailsException:
    return problem(409, "conflict", "Conflicts with the table's state", str(exc))


def _concurrency(exc: ConcurrencyConflict) -> ProblemDetailsException:
    return problem(409, "concurrent-change", "Changed by another request", "Try again.")


def _too_many_sign_ups(exc: TooManySignUps) -> ProblemDetailsException:
    return problem(
        429,
        "too-many-sign-ups",
        "Too many new players from this address",
        str(exc),
        **{"Retry-After": str(exc.retry_after)},
    )


def problem_details_config() -> ProblemDetailsConfig:
    return ProblemDetailsConfig(
        enable_for_all_http_exceptions=True,
        exception_to_problem_detail_map={
            HTTPException: _http_exception,
            RuleViolation: _rule_violation,
            NotFound: _not_found,
            Unauthorized: _unauthorized,
            Forbidden: _forbidden,
            Conflict: _conflict,
            ConcurrencyConflict: _concurrency,
            TooManySignUps: _too_many_sign_ups,
        },
    )


def database_unavailable(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.warning("database unavailable", error=repr(exc))
    return problem(
        503,
        "database-unavailable",
        "The database is not reachable",
        "Try again shortly.",
        **{"Retry-After": "2"},
    ).to_response(request)


def overloaded(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """Shed load: no database connection came free in time, or too many requests in flight."""
    log.warning("overloaded", error=repr(exc))
    return problem(
        503,
        "overloaded",
        "The service is busy",
        "Too much work in flight; try again shortly.",
        **{"Retry-After": "1"},
    ).to_response(request)


def internal_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.exception("unhandled error", exc_info=exc)
    return problem(500, "internal-error", "Internal server error", "This is a bug.").to_response(
        request
    )


DATABASE_ERRORS: tuple[type[Exception], ...] = (
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.PostgresConnectionError,
    # 57xxx: the server is shutting down or restarting (admin/crash shutdown), or a statement
    # ran past statement_timeout (57014, query canceled).
    asyncpg.exceptions.OperatorInterventionError,
    # 55P03: a lock wait ran past lock_timeout (the append lock under a slow database).
    asyncpg.exceptions.LockNotAvailableError,
    # 53xxx: too many connections, out of memory or disk.
    asyncpg.exceptions.InsufficientResourcesError,
    ConnectionError,
    OSError,
    TimeoutError,
)


def responses(*statuses: int) -> dict[int, ResponseSpec]:
    descriptions = {
        400: "Malformed request (wrong types, unknown fields, bad parameters)",
        401: "Missing or unknown bearer token",
        403: "Not the caller's to see or do (not seated here, or not the host)",
        404: "No such table or game",
        409: "Not allowed now (a rule, or the table's state)",
        413: "Request body too large",
        422: "Can never be valid (a stem that does not exist, a name with hidden characters)",
        429: "Too many requests from this player or address, or too many new players from "
        "this address (see Retry-After)",
        503: "The database is not reachable, or the service is overloaded (see Retry-After)",
    }
    statuses = (*statuses, 429)  # every operation is rate limited (service/api/app.py)
    return {
        status: ResponseSpec(
            data_container=Problem,
            description=descriptions[status],
            media_type=PROBLEM_MEDIA_TYPE,
            generate_examples=False,  # random examples would make the document drift
        )
        for status in statuses
    }
