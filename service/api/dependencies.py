"""What every handler is given: strict body decoding before Litestar's lax conversion, the use
cases (`Service`), the caller behind the bearer token (`Caller`), a stream's viewer, and the ids
in its path (`TableId`, `GameId`, `PlayerId`, each described where it is declared)."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any
from uuid import UUID

import msgspec
import structlog
from litestar import Request
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.params import PathParameter

from service.api.problems import problem
from service.bootstrap import Swarm
from service.usecases.errors import Unauthorized
from service.usecases.identity import Player, TokenCheck, token_hash
from service.usecases.watching import StreamKind, Viewer

_BODY_DECODERS: dict[object, msgspec.json.Decoder[Any] | None] = {}


def _body_decoder(request: Request[Any, Any, Any]) -> msgspec.json.Decoder[Any] | None:
    """A strict decoder for the handler's `data` type (cached per handler), or None."""
    handler = request.route_handler
    if handler not in _BODY_DECODERS:
        field = handler.parsed_fn_signature.parameters.get("data")
        _BODY_DECODERS[handler] = (
            msgspec.json.Decoder(field.annotation, strict=True) if field is not None else None
        )
    return _BODY_DECODERS[handler]


class _QueryNames(msgspec.Struct, frozen=True):
    """The query parameters a handler takes: all of them, those that take one value (not a
    list, like verifyGame's repeatable `expect_head`), and the single booleans and integers,
    whose text is read as the document writes them."""

    names: frozenset[str]
    single: frozenset[str]
    booleans: frozenset[str]
    integers: frozenset[str]


_QUERY_NAMES: dict[object, _QueryNames] = {}

# How the document's query scalars are written (OpenAPI's form style: a boolean is `true` or
# `false`, an integer its decimal digits). Litestar's conversion is laxer (`1`, `True` and
# `5.0` pass), which would accept what a client validating against the document refuses.
_SPELLINGS = {bool: re.compile(r"true|false"), int: re.compile(r"-?(0|[1-9][0-9]*)")}


def _scalar(field: Any) -> type | None:
    """`bool` or `int` when the parameter is one (or an optional one), else None."""
    kinds = [t.annotation for t in field.inner_types] if field.is_optional else [field.annotation]
    for kind in (bool, int):  # bool first: it is an int to Python
        if kind in kinds:
            return kind
    return None


def _query_names(request: Request[Any, Any, Any]) -> _QueryNames:
    """The handler's query parameters (`_QueryNames`), cached per handler."""
    handler = request.route_handler
    if handler not in _QUERY_NAMES:
        names: set[str] = set()
        single: set[str] = set()
        booleans: set[str] = set()
        integers: set[str] = set()
        for name, field in handler.parsed_fn_signature.parameters.items():
            kwarg = field.kwarg_definition
            alias = getattr(kwarg, "query", None) or name
            names.add(alias)
            if not field.is_non_string_sequence:
                single.add(alias)
                kind = _scalar(field)
                if kind is bool:
                    booleans.add(alias)
                elif kind is int:
                    integers.add(alias)
        _QUERY_NAMES[handler] = _QueryNames(
            frozenset(names), frozenset(single), frozenset(booleans), frozenset(integers)
        )
    return _QUERY_NAMES[handler]


def _misspelled_scalar(request: Request[Any, Any, Any], query: _QueryNames) -> str | None:
    """A boolean or integer query parameter not written as the document writes it, or None."""
    for names, kind in ((query.booleans, bool), (query.integers, int)):
        for name in names:
            value = request.query_params.get(name)
            if value is not None and not _SPELLINGS[kind].fullmatch(value):
                return name
    return None


class DuplicateKey(Exception):
    pass


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return value


def duplicate_key(body: bytes) -> str | None:
    """A key that appears twice in one object of the (valid JSON) body, or None. msgspec, like
    most decoders, keeps the last of them, while another reader of the same bytes (a proxy, a
    log) may keep the first: so such a body is refused rather than read one way."""
    if body.count(b":") < 2:
        return None  # one key at most: nothing can repeat
    if b"\\" not in body and body.count(b"{") == 1 and b"[" not in body:
        return flat_duplicate_key(body)
    try:
        json.loads(body, object_pairs_hook=no_duplicate_keys)
    except DuplicateKey as exc:
        return str(exc.args[0])
    except ValueError:  # what msgspec read and the standard library does not (never a 500)
        return None
    return None


def flat_duplicate_key(body: bytes) -> str | None:
    """`duplicate_key` of valid JSON holding one object and no array, string or escape with a
    bracket or backslash in it (a move, issue 28): without escapes, the quotes alone delimit the
    strings, and a key is a string followed by a colon, written as it reads; so the keys are
    compared as bytes, without decoding the body a second time."""
    parts = body.split(b'"')  # the odd parts are inside strings
    keys = [parts[i] for i in range(1, len(parts) - 1, 2) if parts[i + 1].lstrip().startswith(b":")]
    if len(set(keys)) == len(keys):
        return None
    seen: set[bytes] = set()
    for key in keys:
        if key in seen:
            return key.decode("utf-8")
        seen.add(key)
    return None  # pragma: no cover (a repeat was counted)


def _canonical_ids(request: Request[Any, Any, Any]) -> bool:
    """Whether every id in the path is written as the document's `format: uuid` (8-4-4-4-12 hex
    digits, either case): Python's UUID also reads `{…}`, `urn:uuid:…` and 32 bare digits."""
    ids = [str(v) for v in request.path_params.values() if isinstance(v, UUID)]
    if not ids:
        return True
    segments = {segment.lower() for segment in request.scope["path"].split("/")}
    return all(ident in segments for ident in ids)


def _is_json(media_type: str) -> bool:
    """The one media type the document gives every body (README: anything else is a 415; a
    `+json` type such as `application/problem+json` was taken as JSON too)."""
    return media_type == "application/json"


def _whole_numbers_as_integers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole_numbers_as_integers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_numbers_as_integers(v) for v in value]
    return value


def decode_strictly(decoder: msgspec.json.Decoder[Any], body: bytes) -> Any:
    """`body` decoded as the document says: no coercion of strings or booleans, and an integer
    is any JSON number without a fraction (`17`, `17.0` or `1.7e1`: JSON Schema's `integer`,
    which the document cannot tell apart). Strict first (the common case, one pass); a body it
    refuses is tried once more with whole floats made integers."""
    try:
        return decoder.decode(body)
    except msgspec.ValidationError:
        if not any(c in body for c in b".eE"):
            raise
        loose = _whole_numbers_as_integers(msgspec.json.decode(body))
        return msgspec.convert(loose, decoder.type, strict=True)


async def strict_body(request: Request[Any, Any, Any]) -> None:
    """Decode the body strictly before Litestar does: Litestar converts bodies with msgspec's lax
    rules (`"21"` becomes the integer 21), which would accept what the document refuses. Ours runs
    first (a `before_request` hook on every controller), so a body gets through only if it is
    exactly what the schema says, and Litestar's `data` is the value decoded here (not the bytes
    decoded again). A body that is not `application/json` is a 415; an optional body may be
    absent. A query parameter the operation does not take is refused too, as unknown body fields
    are, and so are a single-valued query parameter given twice and an object's key given twice
    (readers disagree on which counts); a path's id must be written as a UUID is (8-4-4-4-12 hex
    digits), else 404."""
    if not _canonical_ids(request):
        raise problem(404, "not-found", "Not Found")  # as any other path that names no id
    query = _query_names(request)
    unknown = sorted(set(request.query_params) - query.names)
    if unknown:
        raise problem(
            400,
            "bad-request",
            f"This operation takes no query parameter {unknown[0]!r}.",
        )
    repeated = sorted(
        name for name in query.single if len(request.query_params.getall(name, ())) > 1
    )
    if repeated:
        raise problem(
            400,
            "bad-request",
            f"The query parameter {repeated[0]!r} is given more than once; it takes one value.",
        )
    misspelled = _misspelled_scalar(request, query)
    if misspelled is not None:
        spelling = "`true` or `false`" if misspelled in query.booleans else "decimal digits"
        raise problem(
            400,
            "bad-request",
            f"The query parameter {misspelled!r} is written as {spelling}.",
            extra=[{"message": f"written as {spelling}", "key": misspelled, "source": "query"}],
        )
    decoder = _body_decoder(request)
    if decoder is None:
        return
    body = await request.body()
    if not body:
        return  # a required body is then refused by Litestar, an optional one is None
    kinds = request.headers.getall("content-type", ())
    if len(kinds) > 1 or any("," in kind for kind in kinds):  # several, maybe folded into one
        raise problem(400, "bad-request", "Send one Content-Type header, not several.")
    media_type, _ = request.content_type
    if not _is_json(media_type.lower()):
        raise problem(
            415,
            "unsupported-media-type",
            f"Send the body as `Content-Type: application/json` (got {media_type or 'none'!r}).",
        )
    try:
        decoded = decode_strictly(decoder, body)
    except msgspec.ValidationError as exc:
        raise problem(
            400,
            "bad-request",
            str(exc),
            extra=[{"message": str(exc), "source": "body"}],
        ) from None
    except msgspec.DecodeError as exc:
        raise problem(400, "bad-request", str(exc)) from None
    key = duplicate_key(body)
    if key is not None:
        raise problem(
            400,
            "bad-request",
            f"Object contains the key {key!r} more than once.",
            extra=[{"message": f"duplicate key {key!r}", "source": "body"}],
        )
    # Litestar's own reading of the body is this one: its `request.json()` takes the value
    # from the connection's state, and its conversion of `data` passes a value of the right
    # type through (one decode of a move, not two: issue 28).
    request._connection_state.json = decoded


def provide_service(state: State) -> Swarm:
    service: Service = state.service
    return service


async def provide_player(request: Request[Any, Any, State], service: Service) -> Player:
    token = bearer_token(request)
    if token is None:
        raise Unauthorized(NO_TOKEN)
    return await service.identity.authenticate(token)


class Mover(msgspec.Struct, frozen=True):
    """Who sends a move: the player, and the token check still to be made with the move's
    append (`check`), or None when the token was checked already (this instance had not seen
    it before, so did not know whose it was)."""

    player: Player
    check: TokenCheck | None


async def provide_mover(request: Request[Any, Any, State], service: Service) -> Mover:
    """`Caller` for submitMove, one round trip cheaper: the token is checked inside the move's
    append when this instance already knows whose it is (`Identity.check`), as exactly as by
    `provide_player` (service.usecases.play makes sure no answer goes out unchecked)."""
    token = bearer_token(request)
    if token is None:
        raise Unauthorized(NO_TOKEN)
    check = service.identity.check(token)
    if check is not None:
        return Mover(player=check.player, check=check)
    return Mover(player=await service.identity.authenticate(token), check=None)


NO_TOKEN = "Send `Authorization: Bearer <token>`; createGuest gives you one."


def bearer_token(request: Request[Any, Any, Any]) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def stream_viewer(
    request: Request[Any, Any, Any],
    service: Swarm,
    kind: StreamKind,
    ident: str,
    ticket: str | None,
) -> Viewer:
    """Who opens a stream: by its ticket (browsers), else by the bearer token."""
    if ticket is not None:
        return await service.watching.redeem(ticket, kind, ident)
    token = bearer_token(request)
    if token is None:
        raise Unauthorized(
            "Send `Authorization: Bearer <token>`, or `?ticket=` from createGameStreamTicket "
            "or createTableStreamTicket."
        )
    player = await service.identity.authenticate(token)
    return Viewer(player=player, token_hash=token_hash(token))


async def provide_viewer(request: Request[Any, Any, Any], player: Caller) -> Viewer:
    token = bearer_token(request)
    assert token is not None  # `player` already required it
    return Viewer(player=player, token_hash=token_hash(token))


Service = NamedDependency[Swarm]
Caller = NamedDependency[Player]
Moving = NamedDependency[Mover]
MOVER = {"mover": Provide(provide_mover)}
CallerToken = NamedDependency[Viewer]
VIEWER = {"viewer": Provide(provide_viewer)}

log = structlog.get_logger(__name__)

AUTH: list[dict[str, list[str]]] = [{"bearer": []}]

# The ids a path names, each with what it is and where a client finds it.
TableId = Annotated[
    UUID,
    PathParameter(
        description="The table's id (from createTable, createSoloTable, listTables or listMyGames)"
    ),
]
GameId = Annotated[
    UUID,
    PathParameter(
        description="The game's id (from a table's `games`, `game.game_id`, or listMyGames)"
    ),
]
PlayerId = Annotated[UUID, PathParameter(description="The player's id")]

# A handler's `opt[BODY]`: its request body, in words (the document's `requestBody`
# description: Litestar has no place of its own for it).
BODY = "request_body"
