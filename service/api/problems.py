"""Every refusal as an RFC 9457 problem, mapped in this one place.

Long because of `CATALOGUE`, the one list of problem codes (its entries are data: status,
meaning, what a client should do), kept beside the handlers that raise them so that the
document, docs/errors.md and the server cannot disagree.

`type` is `urn:swarm:problem:<code>`; `code` repeats the slug so clients can switch on it
without parsing the URN. A 500 is always a bug: it is logged with the request id.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

import msgspec
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsException
from litestar.types import Message

from service.domain.refusals import Malformed, NotAllowedNow, Refused
from service.domain.tables import NotPermitted
from service.store.log import ConcurrencyConflict
from service.store.pool import node_lost
from service.usecases.errors import (
    Busy,
    Conflict,
    Forbidden,
    NotFound,
    Unauthorized,
    VersionNotFound,
)
from service.usecases.exports import TooManyAnalyses
from service.usecases.identity import TooManySignUps
from service.usecases.play import MoveIdReused

PROBLEM_MEDIA_TYPE = "application/problem+json"
log = structlog.get_logger(__name__)


class Entry(msgspec.Struct, frozen=True):
    """One code of the catalogue: its status, what it means, what a client should do, and
    whether the same request, sent again unchanged (after `Retry-After` when the answer has
    one), can succeed: a passing condition (load, a race, a rate limit) rather than the
    request or the state it meets."""

    status: int
    meaning: str
    action: str
    retryable: bool = False


# Every problem `code` the service can answer with (docs/errors.md is written from this table
# by `python -m service documents`; tests/contract/test_errors.py fails when the code can
# raise a code missing here).
CATALOGUE: dict[str, Entry] = {
    # --- the request itself ---
    "bad-request": Entry(
        400,
        "The request is malformed: a body that is not valid JSON or does not match its schema "
        '(wrong types, no coercion of `"21"` or `true` to an integer, unknown fields, '
        "missing fields), or a bad path, query or header parameter.",
        "Fix the request; `detail` says which part is wrong. Do not retry it unchanged.",
    ),
    "body-required": Entry(
        400,
        "The operation needs a JSON body and none was sent.",
        "Send the body; `detail` names the fields (or the move types) expected.",
    ),
    "unsupported-media-type": Entry(
        415,
        "A body was sent with a `Content-Type` other than `application/json`.",
        "Send bodies as JSON with `Content-Type: application/json`.",
    ),
    "body-too-large": Entry(
        413,
        "The body is larger than the limit (16 KiB).",
        "Send a smaller body; no valid request comes near the limit.",
    ),
    "not-acceptable": Entry(
        406,
        "The request's `Accept` accepts none of the forms the answer comes in (a stream: "
        "`text/event-stream` or `application/x-ndjson`); a type weighted `q=0` is refused. An "
        "`Accept` that names none of the forms is disregarded, not refused.",
        "Accept one of the forms the operation lists (or send no `Accept`); `detail` names them.",
    ),
    "method-not-allowed": Entry(
        405,
        "The path exists but not with this HTTP method.",
        "Use the method the document gives for the path.",
    ),
    "not-found": Entry(
        404,
        "No such path, table, game or player.",
        "Check the id; a table or game id comes from createTable, createSoloTable, listTables "
        "or listMyGames.",
    ),
    "version-not-found": Entry(
        404,
        "The game has no such version: its versions run from 1 (its first event) to its "
        "`version` now.",
        "Ask for a version from 1 to the game's `version` (getGame, or `latest` in "
        "getGameState's answer).",
    ),
    "http-error": Entry(
        400,
        "Another HTTP-level refusal by the framework (status as given).",
        "Read `status` and `detail`; fix the request.",
    ),
    # --- who you are ---
    "unauthorized": Entry(
        401,
        "No bearer token, or one that is unknown, expired or revoked; or a stream ticket that "
        "is unknown, for another stream, expired, or whose token was revoked.",
        "Get a token (createGuest, register or login) and send `Authorization: Bearer "
        "<token>`; for a stream ticket, ask for a new one.",
    ),
    "invalid-credentials": Entry(
        401,
        "Wrong account name or password (the same answer for both).",
        "Ask the person to check both; after 5 failures in 15 minutes logins are refused with "
        "`too-many-logins`.",
    ),
    "forbidden": Entry(
        403,
        "Not the caller's to see or do: a solo game or table of someone else, or a move in a "
        "game the caller has no seat in.",
        "Do not retry; only the seated player may do this.",
    ),
    "not-permitted": Entry(
        403,
        "A table action the caller is not permitted to take.",
        "Do not retry; `detail` says why.",
    ),
    "not-seated": Entry(
        403,
        "The caller does not sit at this table.",
        "Join the table first (joinTable), if it has a free seat.",
    ),
    "not-host": Entry(
        403,
        "Only the table's host may do this (start, fill with bees).",
        "Ask the host; `host` in getTable says who it is.",
    ),
    "buy-in-needs-account": Entry(
        403,
        "Buy-in tables (stake > 0) need an account, not a guest.",
        "Register (a guest keeps its identity), then open or join the table again.",
    ),
    # --- limits ---
    "too-many-requests": Entry(
        429,
        "Too many requests from this token (or address) in the last second.",
        "Wait for `Retry-After` seconds, then retry; slow down.",
        retryable=True,
    ),
    "too-many-analyses": Entry(
        429,
        "This player (or this client address) has had its share of expert analyses on this "
        "server for now: `SWARM_ANALYSES_PER_HOUR` decisions an hour, a turn each (answers "
        "already kept cost nothing).",
        "Wait for `Retry-After` seconds, then ask again; answers already given are kept.",
        retryable=True,
    ),
    "too-many-logins": Entry(
        429,
        "Too many failed logins for this name or from this address in 15 minutes.",
        "Wait for `Retry-After` seconds before trying again.",
        retryable=True,
    ),
    # --- the server ---
    "database-unavailable": Entry(
        503,
        "The database is not reachable right now.",
        "Retry after `Retry-After` seconds; moves carry a `move_id`, so a retried move is "
        "applied once.",
        retryable=True,
    ),
    "overloaded": Entry(
        503,
        "Too much work in flight on this instance (or too many open streams).",
        "Retry after `Retry-After` seconds.",
        retryable=True,
    ),
    "internal-error": Entry(
        500,
        "A bug in the server.",
        "Report it with the response's `X-Request-ID`; a retry may or may not help.",
        retryable=True,
    ),
    "request-timeout": Entry(
        408,
        "The request's body did not arrive in time (`SWARM_BODY_TIMEOUT`).",
        "Send the whole body promptly; retry on a working connection.",
        retryable=True,
    ),
    "migrations-pending": Entry(
        503,
        "Readiness only: this instance's database lacks migrations its code expects.",
        "Operators: run `swarm migrate`; clients: use another instance or wait.",
        retryable=True,
    ),
    # --- tables ---
    "invalid-table": Entry(
        422,
        "Table settings that can never be valid.",
        "Fix the settings; `detail` says which.",
    ),
    "table-full": Entry(
        409,
        "Every seat of the table is taken.",
        "Pick another table (listTables with `has_free_seat=true`).",
    ),
    "already-seated": Entry(
        409,
        "The caller already sits at this table.",
        "Nothing to do: getTable shows your seat.",
    ),
    "not-enough-people": Entry(
        409,
        "A game needs at least two people at the table (bees do not count for play again).",
        "Wait for someone to join.",
    ),
    "game-in-progress": Entry(
        409,
        "A game is running at the table: wait for it to end (to join, play again or seed).",
        "Follow the table's stream and try again after `game_finished`.",
    ),
    "no-game-to-replay": Entry(
        409,
        "No game has ended at this table yet, so there is nothing to play again.",
        "Start the first game (startGame, or fill the table).",
    ),
    "table-closed": Entry(
        409,
        "The table has closed (everyone left).",
        "Open or join another table.",
    ),
    "bees-not-allowed": Entry(
        409,
        "Bee players can only fill a free table, once a second person has joined.",
        "Wait for a second person, or play at a free table.",
    ),
    "no-game-to-seed": Entry(
        409,
        "There is no prepared next game to contribute a seed to.",
        "Seeds go to the next game, prepared when the current one ends; try then.",
    ),
    "insufficient-coins": Entry(
        409,
        "The caller's spendable coins are fewer than the table's stake.",
        "Choose a smaller stake or a free table; getMe shows your coins.",
    ),
    "conflict": Entry(
        409,
        "Others changed the same table, game or wallet too often while the request was being "
        "decided, or your buy-in hold expired before you sat down; nothing was done.",
        "Retry the same request (a POST with its `Idempotency-Key`, a move with its `move_id`).",
        retryable=True,
    ),
    "concurrent-change": Entry(
        409,
        "Your player record changed at the same moment, again and again (register only); "
        "nothing was done.",
        "Retry the same request (with its `Idempotency-Key`).",
        retryable=True,
    ),
    # --- retrying safely (service/api/idempotency.py) ---
    "idempotency-key-reused": Entry(
        409,
        "This `Idempotency-Key` was already used, within 24 hours, for another request (another "
        "method, path or body); nothing was done.",
        "Send each new request with a new key (a UUID); retry a request only with its own key "
        "and the very same body.",
    ),
    "idempotency-key-in-use": Entry(
        409,
        "The first request with this `Idempotency-Key` has not answered yet; nothing was done.",
        "Retry after `Retry-After` seconds with the same key: you get the first request's "
        "answer once it has one.",
        retryable=True,
    ),
    # --- moves ---
    "move-id-reused": Entry(
        409,
        "This `move_id` was already used in this game for a different move; nothing was "
        "written. (The same move with the same `move_id` again is answered as the first was.)",
        "Use a new, unique `move_id` for every new move (a UUID is a good choice).",
    ),
    "rule-violation": Entry(400, "A move breaks a rule.", "Reload the game and decide again."),
    "invalid-move": Entry(
        422, "A move that can never be valid.", "Fix the move; `detail` says why."
    ),
    "illegal-move": Entry(
        409, "A move that is not allowed now.", "Reload the game (getGame) and decide again."
    ),
    "stem-out-of-range": Entry(
        422, "There is no such stem: stems are numbered 1 to 4.", "Send a stem from 1 to 4."
    ),
    "invalid-deal": Entry(
        422,
        "The deal is not a shuffle of the table's deck (an internal consistency check).",
        "Report it: a client cannot cause this.",
    ),
    "invalid-seats": Entry(
        422,
        "The seats do not make a table of 2 to 8.",
        "Choose 2 to 8 players.",
    ),
    "invalid-account": Entry(
        422,
        "An account name or password that can never be valid.",
        "Fix it; `detail` says why.",
    ),
    "bee-not-in-hand": Entry(
        409,
        "That bee is not in the caller's hand.",
        "Pick a bee from `hand` of getGame.",
    ),
    "already-confirmed": Entry(
        409,
        "The caller's pick for this turn is already confirmed (final).",
        "Wait for the next turn (follow the stream for `turn_started`).",
    ),
    "nothing-tapped": Entry(
        409,
        "A confirm without a bee, and nothing tapped this turn.",
        "Tap a bee first, or send `confirm` with its `bee`.",
    ),
    "not-your-decision": Entry(
        409,
        "It is not the caller's decision now (another seat's too-low choice, or not a "
        "choosing phase).",
        "Wait; the view's `choice.yours` says when it is yours.",
    ),
    "seat-not-playing": Entry(
        409,
        "The caller's seat is not playing any more (they left the game).",
        "Nothing to do in this game; join or open another table.",
    ),
    "game-not-started": Entry(
        409, "The game has not started yet.", "Wait for `game_started` on the stream."
    ),
    "game-already-started": Entry(
        409, "The game has already started.", "Reload the game; it is running."
    ),
    "game-not-over": Entry(
        409,
        "Only an ended game can be exported or verified (and only one dealt fairly).",
        "Wait for `game_ended`, then ask again.",
    ),
    "game-over": Entry(
        409, "The game has ended: no more moves.", "Show the result; play again if you like."
    ),
    "seeds-closed": Entry(
        409,
        "Seeds for the next game are closed: it waits for the committed seeds' reveals.",
        "Reveal yours if you committed one (revealSeed); otherwise wait for the deal.",
    ),
    "seeds-still-open": Entry(
        409,
        "Seeds are still open: nothing is to be revealed yet.",
        "Wait until seeds close (`next_game.seeds_closed`), then reveal.",
    ),
    "nothing-to-reveal": Entry(
        409,
        "The caller committed no seed for the next game.",
        "Nothing to do; contribute or commit a seed for a later game.",
    ),
    "seed-does-not-match": Entry(
        422,
        "The revealed seed is not the one committed to (its hash differs).",
        "Reveal the very seed whose hash you committed.",
    ),
    # --- accounts ---
    "name-taken": Entry(
        409,
        "An account with that name exists: names are compared after NFKC, case folding and "
        "the Unicode confusable skeleton, so look-alikes count as the same name.",
        "Choose another name.",
    ),
    "invalid-name": Entry(
        422,
        "The name has no visible character, or holds control, format or bidi-override characters.",
        "Send a name of 1 to 40 visible characters.",
    ),
    "too-many-sign-ups": Entry(
        429,
        "Too many guests or accounts were created from this address in the last hour.",
        "Retry after `Retry-After` seconds, or reuse the token you have.",
        retryable=True,
    ),
    "too-many-tables": Entry(
        409,
        "You already host the most open online tables a player may (5).",
        "Close or leave one of your tables (leaving as the only person closes it), then open "
        "another.",
    ),
    "already-registered": Entry(
        409,
        "This player has an account already.",
        "Log in instead (login).",
    ),
}


class ProblemField(msgspec.Struct, kw_only=True):
    """One part of the request that was refused.

    Attributes:
        message: What is wrong with it.
        key: Which field or parameter, when known.
        source: Where it was: `body`, `query`, `path`, `header` or `cookie`, when known.
    """

    message: str
    key: str | None = None
    source: str | None = None


def _fields(extra: Any) -> list[dict[str, Any]]:
    """The framework's `extra` as a list of `ProblemField`s."""
    items = extra if isinstance(extra, list) else [extra]
    return [
        {k: v for k, v in item.items() if k in ("message", "key", "source")}
        if isinstance(item, dict) and "message" in item
        else {"message": str(item)}
        for item in items
    ]


class Problem(msgspec.Struct, kw_only=True):
    """An RFC 9457 problem details object (`application/problem+json`): every 4xx and 5xx.

    Attributes:
        type: `urn:swarm:problem:<code>`: names the code (a URN, not a link: `doc_url` is
            the link).
        title: A short summary of the problem, the same for every occurrence of the code.
        status: The HTTP status code.
        detail: What went wrong this time, for a person to read.
        code: The problem's code (the end of `type`): switch on it. Every code is listed in
            docs/errors.md with what to do.
        extra: Which parts of the request were refused and why, when known (for example
            which parameter failed validation).
        retryable: Whether sending the same request again, unchanged, can succeed (after
            `Retry-After` seconds when the answer has that header): true for a passing
            condition (load, a race, a rate limit), false when the request or the state it
            meets must change first. Every code's value is in docs/errors.md; a problem
            without it (an older server) is not retryable.
        doc_url: Where the code is documented: its section of the catalogue of codes this
            server serves (`/docs/errors#<code>`, relative to the server; docs/errors.md in
            the repository). A problem without it (an older server): the catalogue's page.
    """

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    code: Annotated[str, msgspec.Meta(extra_json_schema={"enum": sorted(CATALOGUE)})]
    extra: list[ProblemField] | None = None
    retryable: bool = False
    doc_url: Annotated[str, msgspec.Meta(extra_json_schema={"format": "uri-reference"})] = (
        "/docs/errors"
    )


ERRORS_PAGE = "/docs/errors"


def doc_url(code: str) -> str:
    """Where `code` is documented: its section of the catalogue's page (`errors_page.py`)."""
    return f"{ERRORS_PAGE}#{code}"


def retryable(code: str) -> bool:
    """Whether the same request can succeed sent again (`Entry.retryable`); an unknown code
    is not."""
    entry = CATALOGUE.get(code)
    return entry is not None and entry.retryable


# The title of each code that no `Refused` class names (those carry their own `title`): one
# title a code, whatever the occurrence; `detail` says what went wrong this time.
TITLES: dict[str, str] = {
    "bad-request": "The request is malformed",
    "body-required": "A JSON body is required",
    "unsupported-media-type": "The body must be JSON",
    "http-error": "The request was refused",
    "unauthorized": "A valid bearer token is required",
    "invalid-credentials": "Wrong name or password",
    "forbidden": "Not yours to see or do",
    "not-found": "Not found",
    "version-not-found": "No such version of the game",
    "method-not-allowed": "The path does not take this method",
    "not-acceptable": "None of the answer's forms is acceptable",
    "request-timeout": "The request body did not arrive in time",
    "conflict": "Conflicts with the current state",
    "concurrent-change": "Changed by another request",
    "move-id-reused": "This move_id was used for another move",
    "body-too-large": "Request body too large",
    "too-many-logins": "Too many failed logins",
    "too-many-requests": "Too many requests",
    "too-many-analyses": "Too many analyses asked for",
    "too-many-sign-ups": "Too many new players from this address",
    "internal-error": "Internal server error",
    "database-unavailable": "The database is not reachable",
    "migrations-pending": "Migrations pending",
    "overloaded": "The service is busy",
    "idempotency-key-reused": "This Idempotency-Key was used for another request",
    "idempotency-key-in-use": "A request with this Idempotency-Key is still in progress",
}


def problem_messages(
    status: int, code: str, detail: str, headers: list[tuple[bytes, bytes]] | None = None
) -> list[Message]:
    """A problem as the two ASGI messages of an answer, for the layers outside the handlers."""
    body = msgspec.json.encode(
        {
            "type": f"urn:swarm:problem:{code}",
            "title": title_of(code),
            "status": status,
            "detail": detail,
            "code": code,
            "retryable": retryable(code),
            "doc_url": doc_url(code),
        }
    )
    return [
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/problem+json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or ()),
            ],
        },
        {"type": "http.response.body", "body": body, "more_body": False},
    ]


def _refusals(cls: type[Refused] = Refused) -> dict[str, type[Refused]]:
    found: dict[str, type[Refused]] = {}
    for sub in cls.__subclasses__():
        if "code" in sub.__dict__:
            found[sub.code] = sub
        found.update(_refusals(sub))
    return found


def title_of(code: str) -> str:
    """The one title of a code (`TITLES`, else its `Refused` class's)."""
    if code in TITLES:
        return TITLES[code]
    refusal = _refusals().get(code)
    return refusal.title if refusal is not None else TITLES["http-error"]


def _members(code: str) -> dict[str, Any]:
    """The members every problem has beside RFC 9457's own."""
    return {"code": code, "retryable": retryable(code), "doc_url": doc_url(code)}


def problem(
    status: int, code: str, detail: str, extra: Any = None, **headers: str
) -> ProblemDetailsException:
    return ProblemDetailsException(
        status_code=status,
        type_=f"urn:swarm:problem:{code}",
        title=title_of(code),
        detail=detail,
        extra=_members(code) if extra is None else {**_members(code), "extra": _fields(extra)},
        headers=dict(headers) or None,
    )


def rule_violation(exc: Refused) -> ProblemDetailsException:
    """Every refusal of the domain (`service/domain/refusals.py`), the rules' among them."""
    status = (
        403
        if isinstance(exc, NotPermitted)
        else 422
        if isinstance(exc, Malformed)
        else 409
        if isinstance(exc, NotAllowedNow)
        else 400
    )
    return problem(status, exc.code, exc.detail)


def _http_exception(exc: HTTPException) -> ProblemDetailsException:
    codes = {
        400: "bad-request",
        401: "unauthorized",
        403: "forbidden",
        404: "not-found",
        405: "method-not-allowed",
        406: "not-acceptable",
        409: "conflict",
        413: "body-too-large",
        415: "unsupported-media-type",
        429: "too-many-requests",
        500: "internal-error",
        503: "overloaded",
    }
    code = codes.get(exc.status_code, "http-error")
    detail = exc.detail or title_of(code)
    headers = dict(exc.headers or {})
    if exc.status_code in (429, 503):
        # Every 429 and 503 says when to come back: the rate limit's own reset (seconds until
        # its window ends, at least 1), else a second.
        reset = headers.get("RateLimit-Reset", "1")
        headers["Retry-After"] = str(max(1, int(reset) if reset.isdigit() else 1))
    pd = ProblemDetailsException(
        status_code=exc.status_code,
        type_=f"urn:swarm:problem:{code}",
        title=title_of(code),
        detail=detail,
        headers=headers or None,
        extra={**_members(code), "extra": _fields(exc.extra)} if exc.extra else _members(code),
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
    return problem(404, "not-found", str(exc))


def _version_not_found(exc: VersionNotFound) -> ProblemDetailsException:
    return problem(404, "version-not-found", str(exc))


def _unauthorized(exc: Unauthorized) -> ProblemDetailsException:
    return problem(
        401,
        "unauthorized",
        str(exc),
        **{"WWW-Authenticate": "Bearer"},
    )


def _forbidden(exc: Forbidden) -> ProblemDetailsException:
    return problem(403, "forbidden", str(exc))


def _conflict(exc: Conflict) -> ProblemDetailsException:
    return problem(409, "conflict", str(exc))


def _move_id_reused(exc: MoveIdReused) -> ProblemDetailsException:
    return problem(409, "move-id-reused", str(exc))


def _concurrency(exc: ConcurrencyConflict) -> ProblemDetailsException:
    return problem(409, "concurrent-change", "Try again.")


def _too_many_sign_ups(exc: TooManySignUps) -> ProblemDetailsException:
    return problem(
        429,
        "too-many-sign-ups",
        str(exc),
        **{"Retry-After": str(exc.retry_after)},
    )


def _too_many_analyses(exc: TooManyAnalyses) -> ProblemDetailsException:
    return problem(
        429,
        "too-many-analyses",
        str(exc),
        **{"Retry-After": str(exc.retry_after)},
    )


def problem_details_config() -> ProblemDetailsConfig:
    return ProblemDetailsConfig(
        enable_for_all_http_exceptions=True,
        exception_to_problem_detail_map={
            HTTPException: _http_exception,
            Refused: rule_violation,
            NotFound: _not_found,
            VersionNotFound: _version_not_found,
            Unauthorized: _unauthorized,
            Forbidden: _forbidden,
            Conflict: _conflict,
            MoveIdReused: _move_id_reused,
            ConcurrencyConflict: _concurrency,
            TooManySignUps: _too_many_sign_ups,
            TooManyAnalyses: _too_many_analyses,
        },
    )


def database_unavailable(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.warning("database unavailable", error=repr(exc))
    return problem(
        503,
        "database-unavailable",
        "Try again shortly.",
        **{"Retry-After": "2"},
    ).to_response(request)


def node_lost_or_bug(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """An internal error from the database: a Citus worker out of reach is the database
    being away (503); anything else is a bug (500)."""
    if node_lost(exc):
        return database_unavailable(request, exc)
    return internal_error(request, exc)


def overloaded(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """Shed load: no database connection came free in time, or too many requests in flight."""
    log.warning("overloaded", error=repr(exc))
    return problem(
        503,
        "overloaded",
        "Too much work in flight; try again shortly.",
        **{"Retry-After": "1"},
    ).to_response(request)


def internal_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.exception("unhandled error", exc_info=exc)
    return problem(500, "internal-error", "This is a bug.").to_response(request)


# The code each exception is answered with, for those that carry none of their own (every
# `Refused` has its `code`); the nearest class in an exception's MRO decides.
EXCEPTION_CODES: dict[type[Exception], str] = {
    NotFound: "not-found",
    VersionNotFound: "version-not-found",
    Unauthorized: "unauthorized",
    Forbidden: "forbidden",
    Conflict: "conflict",
    MoveIdReused: "move-id-reused",
    ConcurrencyConflict: "concurrent-change",
    TooManySignUps: "too-many-sign-ups",
    TooManyAnalyses: "too-many-analyses",
    Busy: "overloaded",
}

F = TypeVar("F", bound=Callable[..., Any])
REFUSALS = "__refusals__"


def code_of(refusal: type[Exception] | str) -> str:
    """The problem code a refusal (an exception class, or a code raised as it is) gets."""
    if isinstance(refusal, str):
        return refusal
    if issubclass(refusal, Refused):
        return refusal.code
    for cls in refusal.__mro__:
        if cls in EXCEPTION_CODES:
            return EXCEPTION_CODES[cls]
    raise KeyError(f"{refusal.__name__} is answered with no problem code")


def refuses(*refusals: type[Exception] | str) -> Callable[[F], F]:
    """Declares, on a handler (below its route decorator), what it can refuse with beyond what
    every operation can (service/api/openapi.py `common_codes`): the document lists exactly
    these codes for the operation, each under its status, and the tests fail when the handler
    answers with a code it does not declare (tests/problem_codes.py)."""
    codes = tuple(sorted({code_of(r) for r in refusals}))
    unknown = [c for c in codes if c not in CATALOGUE]
    if unknown:
        raise KeyError(f"not in the catalogue: {unknown}")

    def mark(handler: F) -> F:
        setattr(handler, REFUSALS, codes)
        return handler

    return mark


def declared_codes(handler: Any) -> tuple[str, ...]:
    """What a route handler declared with `refuses` (none: it refuses only what all do)."""
    codes: tuple[str, ...] = getattr(handler.fn, REFUSALS, ())
    return codes
