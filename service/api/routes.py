"""HTTP handlers: parse, call one use case, return its view. No rules and no SQL here.

Each handler has a stable `operation_id`: clients and the contract tests use these names.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

import msgspec
import structlog
from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, HeaderParameter, JSONBody, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from service.api.limits import client_address
from service.api.problems import problem, responses
from service.bootstrap import Swarm
from service.domain.audit import Expectations, GameExport, parse_head
from service.domain.rules.bees import DEFAULT_LEVEL
from service.domain.rules.events import BeeLevel, ClockSettings
from service.domain.views import GameView
from service.usecases.errors import Unauthorized
from service.usecases.identity import Player, token_hash
from service.usecases.play import AnyMove
from service.usecases.streams import AnyLogEntry, VisibleEvent, entry_type
from service.usecases.tables import LobbyEntry, TableView
from service.usecases.watching import StreamKind, Viewer

# Patterns are searched (re.search), and Python's `$` also matches before a final newline:
# every pattern is anchored with `^...$(?!\n)`, a whole-string match in Python and ECMAScript.
# The rest of the name rules (service/domain/names.py) answer 422 `invalid-name`.
Name = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=40,  # and 40 again once NFKC-normalised (which can lengthen a name)
        pattern=r"^[^\x00-\x1f\x7f-\x9f]+$(?!\n)",
        description="1 to 40 characters, and once NFKC-normalised; at least one visible; "
        "no control, format (zero-width, bidi), surrogate, private-use, unassigned or invisible "
        "characters (by Unicode category; refused with 422 `invalid-name`)",
    ),
]
PlayerCount = Annotated[int, msgspec.Meta(ge=2, le=8)]


class GuestIn(msgspec.Struct, forbid_unknown_fields=True):
    name: Name


class GuestOut(msgspec.Struct):
    player_id: str
    name: str
    token: str  # send as `Authorization: Bearer <token>`


LevelIn = Annotated[
    BeeLevel,
    msgspec.Meta(
        description=(
            "How the bee players choose their bees: `heuristic` (the default) scores each bee"
            " by the stings it risks this turn; `strong` plays the next few turns out on random"
            " deals of the hands it cannot see and keeps the bee that takes the fewest stings."
            " Each bee seat's level is shown in the table and game views and in the lobby."
        )
    ),
]


class SoloTableIn(msgspec.Struct, forbid_unknown_fields=True):
    players: PlayerCount = 4
    # false: the table opens with its next game's commitment, and deals when you start it
    # (startGame, with your client_seed if you give one); true: the first game is dealt at once
    deal: bool = True
    level: LevelIn = DEFAULT_LEVEL


class TableIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    seats: PlayerCount = 4
    stake: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)] = 0  # 0 = a free table
    turn_seconds: Annotated[float, msgspec.Meta(ge=1, le=600)] = 20.0
    choice_seconds: Annotated[float, msgspec.Meta(ge=1, le=600)] = 10.0


HASH_PATTERN = "^[0-9a-f]{64}$"
# A hash chain head a player recorded: the event's version (from 1), a colon, its hash.
HeadText = Annotated[str, msgspec.Meta(pattern=r"^[1-9][0-9]{0,9}:[0-9a-f]{64}$")]

SeedHex = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^(?:[0-9a-f]{2}){0,64}$(?!\n)",
        description="Your seed for the next game: 0 to 64 bytes, lowercase hex",
    ),
]


class SeedIn(msgspec.Struct, forbid_unknown_fields=True):
    """A seed for the table's next game (docs/fairness.md): it goes into the transcript that
    the deck is drawn from, after the server's commitment was published."""

    client_seed: SeedHex


class SeedCommitmentIn(msgspec.Struct, forbid_unknown_fields=True):
    """`seed_hash` = SHA-256(encode("swarm/seed/v1", game_id, your player_id, seed)), hex."""

    seed_hash: Annotated[str, msgspec.Meta(pattern=HASH_PATTERN)]


class OptionalSeedIn(msgspec.Struct, forbid_unknown_fields=True):
    """An optional body: `{}` or no body gives no seed."""

    client_seed: SeedHex | None = None


class FillWithBeesIn(msgspec.Struct, forbid_unknown_fields=True):
    """An optional body: your seed for the game the bees start, and the bees' level."""

    client_seed: SeedHex | None = None
    level: LevelIn = DEFAULT_LEVEL


def _seed_of(data: OptionalSeedIn | FillWithBeesIn | None) -> str | None:
    return data.client_seed if data is not None else None


class LobbyPage(msgspec.Struct):
    tables: list[LobbyEntry]
    limit: int
    offset: int
    next_offset: int | None  # None on the last page


class EventPage(msgspec.Struct):
    """A page of a game's log, as the caller may see it.

    Attributes:
        events: The events after `after`, oldest first, each typed by `type`.
        game_version: The game's log so far; ask again with `after` set to the last version
            you have.
    """

    events: list[VisibleEvent]
    game_version: int


class StreamTicketOut(msgspec.Struct, kw_only=True):
    """A short-lived ticket that opens one stream without the bearer token in its URL.

    Attributes:
        ticket: Send it as `?ticket=` on the stream's URL (an `EventSource` cannot send an
            `Authorization` header). Usable, for reconnects, until `expires_at`.
        expires_at: After it, ask for a new ticket; a stream already open stays open.
        stream_url: The stream's path with the ticket, ready for `new EventSource(...)`.
    """

    ticket: str
    expires_at: datetime
    stream_url: str


class VerificationCheck(msgspec.Struct):
    name: str
    status: str  # ok, failed or skipped (after an earlier failure)
    reason: str


class VerificationStep(msgspec.Struct):
    name: str  # format, commitment, fairness, chain, replay, result
    status: str  # ok, failed or skipped (after an earlier failure)
    reason: str
    version: int | None  # the event to blame, when one is
    checks: list[VerificationCheck]  # the fairness step's own checks (docs/fairness.md)


class Verification(msgspec.Struct):
    game_id: str
    ok: bool
    steps: list[VerificationStep]


class Health(msgspec.Struct):
    status: str
    database: str


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


_QUERY_NAMES: dict[object, frozenset[str]] = {}


def _query_names(request: Request[Any, Any, Any]) -> frozenset[str]:
    """The query parameters the handler takes (cached per handler)."""
    handler = request.route_handler
    if handler not in _QUERY_NAMES:
        names = set()
        for name, field in handler.parsed_fn_signature.parameters.items():
            kwarg = field.kwarg_definition
            alias = getattr(kwarg, "query", None)
            names.add(alias or name)
        _QUERY_NAMES[handler] = frozenset(names)
    return _QUERY_NAMES[handler]


def _is_json(media_type: str) -> bool:
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


async def strict_body(request: Request[Any, Any, Any]) -> None:
    """Decode the body strictly before Litestar does: Litestar converts bodies with msgspec's
    lax rules (`"21"` and `21.0` become the integer 21), which would accept what the document
    refuses. Ours runs first (a `before_request` hook on every controller), so a body gets
    through only if it is exactly what the schema says; Litestar then decodes the same bytes.
    A body that is not `application/json` is a 415; an optional body may be absent. A query
    parameter the operation does not take is refused too, as unknown body fields are."""
    unknown = sorted(set(request.query_params) - _query_names(request))
    if unknown:
        raise problem(
            400,
            "bad-request",
            "Unknown query parameter",
            f"This operation takes no query parameter {unknown[0]!r}.",
        )
    decoder = _body_decoder(request)
    if decoder is None:
        return
    body = await request.body()
    if not body:
        return  # a required body is then refused by Litestar, an optional one is None
    media_type, _ = request.content_type
    if not _is_json(media_type.lower()):
        raise problem(
            415,
            "unsupported-media-type",
            "The body must be JSON",
            f"Send the body as `Content-Type: application/json` (got {media_type or 'none'!r}).",
        )
    try:
        decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise problem(
            400,
            "bad-request",
            "The body does not match its schema",
            str(exc),
            extra=[{"message": str(exc), "source": "body"}],
        ) from None
    except msgspec.DecodeError as exc:
        raise problem(400, "bad-request", "The body is not valid JSON", str(exc)) from None


def provide_service(state: State) -> Swarm:
    service: Service = state.service
    return service


async def provide_player(request: Request[Any, Any, State], service: Service) -> Player:
    token = bearer_token(request)
    if token is None:
        raise Unauthorized("Send `Authorization: Bearer <token>`; createGuest gives you one.")
    return await service.identity.authenticate(token)


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
CallerToken = NamedDependency[Viewer]
VIEWER = {"viewer": Provide(provide_viewer)}

log = structlog.get_logger(__name__)

AUTH: list[dict[str, list[str]]] = [{"bearer": []}]

_EVENT_ENCODER = msgspec.json.Encoder()

NO_ACCESS_LOG = "no_access_log"  # handler opt: skip the request/response logging middleware

SSE_FORMAT = (
    "Each message is three lines and a blank one: `id: <version>` (send it back as "
    "`Last-Event-ID`, as EventSource does on its own when it reconnects, to continue after "
    "it: nothing is lost or repeated), `event: <the event's type>` and `data: <the event>` "
    "(one line of JSON: `{version, type, recorded_at, hash, data}`, the schema named "
    "below). While nothing happens a comment line `: heartbeat` comes every 15 seconds. "
    "Authenticate with `Authorization: Bearer <token>`, or, from a browser, with "
    "`?ticket=<ticket>` (see the stream ticket operations): never put the bearer token in a "
    "URL. The stream is closed by the server when the token behind it is revoked (logout) "
    "or expires; a reconnect is then refused with 401, which makes an EventSource stop."
)

STREAM_DESCRIPTION = (
    "A Server-Sent Events stream (`text/event-stream`) of the game's log, with the same "
    "redaction as listGameEvents (schema `VisibleEvent`). "
    + SSE_FORMAT
    + " The stream ends after `game_ended` and the `deal_revealed` written with it: close "
    "the EventSource then, or it reconnects to an empty stream."
)

TABLE_STREAM_DESCRIPTION = (
    "A Server-Sent Events stream (`text/event-stream`) of the table's log (schema "
    "`TableLogEntry`): seats taken and freed, host changes, each game prepared, opened (its "
    "`game_id` is in `data`) and finished, pots, and the table closing. "
    + SSE_FORMAT
    + " The stream ends after `table_closed`."
)


StreamAfter = Annotated[
    int | None,
    QueryParameter(ge=0, le=2**31 - 1, description="Last version seen (start after it)"),
]
LastEventId = Annotated[
    int | None,
    HeaderParameter(
        name="Last-Event-ID",
        ge=0,
        le=2**31 - 1,
        description="Sent by EventSource on reconnect; wins over `after`",
    ),
]
Ticket = Annotated[
    str | None,
    QueryParameter(
        min_length=1,
        max_length=128,
        description=(
            "A stream ticket (createGameStreamTicket, createTableStreamTicket), for clients "
            "that cannot send an Authorization header (a browser's EventSource)"
        ),
    ),
]
STREAM_SECURITY: list[dict[str, list[str]]] = [{"bearer": []}, {"streamTicket": []}]


def _stream_responses(description: str) -> dict[int, ResponseSpec]:
    return {
        200: ResponseSpec(
            data_container=str,
            description=description,
            media_type="text/event-stream",
            generate_examples=False,
        ),
        **responses(400, 401, 403, 404, 503),
    }


def _server_sent(events: AsyncIterator[AnyLogEntry | None]) -> ServerSentEvent:
    async def messages() -> AsyncIterator[ServerSentEventMessage]:
        async for event in events:
            yield _sse_message(event)

    return ServerSentEvent(messages())


def _sse_message(event: AnyLogEntry | None) -> ServerSentEventMessage:
    if event is None:
        return ServerSentEventMessage(data=None, comment="heartbeat")
    return ServerSentEventMessage(
        data=_EVENT_ENCODER.encode(event).decode("utf-8"),
        event=entry_type(event),
        id=event.version,
    )


def _ticket_out(kind: str, ident: str, ticket: str, expires_at: datetime) -> StreamTicketOut:
    path = f"/{kind}s/{ident}/stream?ticket={ticket}"
    return StreamTicketOut(ticket=ticket, expires_at=expires_at, stream_url=path)


class GuestController(Controller):
    path = "/guests"
    before_request = staticmethod(strict_body)
    tags = ["players"]

    @post("/", operation_id="createGuest", status_code=201, responses=responses(400, 413, 422, 503))
    async def create_guest(
        self, data: JSONBody[GuestIn], service: Service, request: Request[object, object, State]
    ) -> GuestOut:
        """A guest identity to play with: no account needed for solo play."""
        player, token = await service.identity.create_guest(data.name, client_address(request))
        return GuestOut(player_id=player.player_id, name=player.name, token=token)


class TableController(Controller):
    path = "/"
    dependencies = VIEWER
    before_request = staticmethod(strict_body)
    tags = ["tables"]
    security = AUTH

    @post(
        "/solo-tables",
        operation_id="createSoloTable",
        status_code=201,
        responses=responses(400, 401, 413, 422, 503),
    )
    async def create_solo_table(
        self, data: JSONBody[SoloTableIn], service: Service, player: Caller
    ) -> TableView:
        """Sit at seat 1 against bee players (Buzz, Bumble, … in that order); the first game is
        dealt at once. With `"deal": false` the table opens with the commitment to its first
        game's deal (`next_game`) and deals when you call startGame, with your seed if you give
        one (docs/fairness.md). Nothing is timed, paid or recorded."""
        return await service.tables.create_solo_table(
            player, data.players, deal=data.deal, level=data.level
        )

    @post(
        "/tables",
        operation_id="createTable",
        status_code=201,
        responses=responses(400, 401, 409, 413, 422, 503),
    )
    async def create_table(
        self, data: JSONBody[TableIn], service: Service, player: Caller
    ) -> TableView:
        """Open an online table of 2 to 8 seats (4 to start) and take seat 1 as its host. The
        game starts when the table is full, or when the host starts it with two people or
        more. Buy-in tables (`stake` > 0) need an account and are refused until accounts
        exist. Turns are timed by the table's clock (20 s a turn, 10 s to choose a stem). A
        player hosts at most 5 open online tables at once: 409 `too-many-tables`."""
        clock = ClockSettings(turn_seconds=data.turn_seconds, choice_seconds=data.choice_seconds)
        return await service.tables.create_table(player, data.seats, data.stake, clock)

    @get(
        "/tables",
        operation_id="listTables",
        responses=responses(400, 401, 503),
    )
    async def list_tables(
        self,
        service: Service,
        player: Caller,
        stake: Annotated[
            Literal["any", "free", "buy_in"], QueryParameter(description="Free or buy-in tables")
        ] = "any",
        has_free_seat: Annotated[
            bool, QueryParameter(description="Only tables you can join")
        ] = False,
        limit: Annotated[int, QueryParameter(ge=1, le=100)] = 20,
        offset: Annotated[int, QueryParameter(ge=0, le=1_000_000)] = 0,
    ) -> LobbyPage:
        """The lobby: open tables, newest first, with seats taken of the total, stake, host and
        when they opened. Served from a projection written with the tables' events."""
        tables = await service.tables.list_tables(
            stake=stake, has_free_seat=has_free_seat, limit=limit + 1, offset=offset
        )
        more = len(tables) > limit
        return LobbyPage(
            tables=tables[:limit],
            limit=limit,
            offset=offset,
            next_offset=offset + limit if more else None,
        )

    @get(
        "/tables/{table_id:uuid}",
        operation_id="getTable",
        responses=responses(400, 401, 403, 404, 503),
    )
    async def get_table(
        self, table_id: FromPath[UUID], service: Service, player: Caller
    ) -> TableView:
        """The table (anyone may look at an online table) and, in `game`, the caller's view of
        its current game if they were dealt into it."""
        return await service.tables.get_table(player, str(table_id))

    @post(
        "/tables/{table_id:uuid}/seats",
        operation_id="joinTable",
        status_code=200,
        responses=responses(400, 401, 403, 404, 409, 503),
    )
    async def join_table(
        self,
        table_id: FromPath[UUID],
        service: Service,
        player: Caller,
        data: JSONBody[OptionalSeedIn | None] = None,
    ) -> TableView:
        """Take the next free seat. The game starts at once if that fills the table."""
        return await service.tables.join_table(player, str(table_id), _seed_of(data))

    @post(
        "/tables/{table_id:uuid}/leave",
        operation_id="leaveTable",
        status_code=200,
        responses=responses(400, 401, 403, 404, 409, 503),
    )
    async def leave_table(
        self, table_id: FromPath[UUID], service: Service, player: Caller
    ) -> TableView:
        """Leave the table. During a game you pick no more bees (an unrevealed pick is
        withdrawn, a pending too-low choice is taken as the cheapest stem) and your stings stop
        counting; if one person is left they win at once. A host who leaves hands the table
        to the next person in seat order; a table with nobody left closes."""
        return await service.tables.leave_table(player, str(table_id))

    @post(
        "/tables/{table_id:uuid}/start",
        operation_id="startGame",
        status_code=200,
        responses=responses(400, 401, 403, 404, 409, 503),
    )
    async def start_game(
        self,
        table_id: FromPath[UUID],
        service: Service,
        player: Caller,
        data: JSONBody[OptionalSeedIn | None] = None,
    ) -> TableView:
        """The host starts the first game: with at least two people seated, or at a solo table
        opened with `"deal": false`."""
        return await service.tables.start_game(player, str(table_id), _seed_of(data))

    @post(
        "/tables/{table_id:uuid}/bees",
        operation_id="fillWithBees",
        status_code=200,
        responses=responses(400, 401, 403, 404, 409, 503),
    )
    async def fill_with_bees(
        self,
        table_id: FromPath[UUID],
        service: Service,
        player: Caller,
        data: JSONBody[FillWithBeesIn | None] = None,
    ) -> TableView:
        """On a free table with at least two people, the host fills every empty seat with bee
        players (Buzz, Bumble, … in that order) of the `level` asked ("heuristic" unless
        asked), and the game starts at once."""
        level = data.level if data is not None else DEFAULT_LEVEL
        return await service.tables.fill_with_bees(player, str(table_id), _seed_of(data), level)

    @post(
        "/tables/{table_id:uuid}/games",
        operation_id="playAgain",
        status_code=201,
        responses=responses(400, 401, 403, 404, 409, 503),
    )
    async def play_again(
        self,
        table_id: FromPath[UUID],
        service: Service,
        player: Caller,
        data: JSONBody[OptionalSeedIn | None] = None,
    ) -> TableView:
        """After a game ends, deal another to everyone still at the table (free, no buy-in).
        The new game's id is the last of `games`; followers of the table's stream see it as a
        `game_opened` event."""
        return await service.tables.play_again(player, str(table_id), _seed_of(data))

    @post(
        "/tables/{table_id:uuid}/seed",
        operation_id="contributeSeed",
        status_code=200,
        responses=responses(400, 401, 403, 404, 409, 413, 503),
    )
    async def contribute_seed(
        self, table_id: FromPath[UUID], data: JSONBody[SeedIn], service: Service, player: Caller
    ) -> TableView:
        """Contribute your seed to the table's next game, whose commitment (`next_game`) is
        already public. Joining, starting, filling with bees and play again take the same
        optional `client_seed`. A later seed replaces yours; bee players give none."""
        return await service.tables.contribute_seed(player, str(table_id), data.client_seed)

    @post(
        "/tables/{table_id:uuid}/seed-commitment",
        operation_id="commitSeed",
        status_code=200,
        responses=responses(400, 401, 403, 404, 409, 413, 503),
    )
    async def commit_seed(
        self,
        table_id: FromPath[UUID],
        data: JSONBody[SeedCommitmentIn],
        service: Service,
        player: Caller,
    ) -> TableView:
        """Commit to a seed for the next game by its hash, keeping the seed to yourself until
        every seat is bound (docs/fairness.md, "Seeds: commit, then reveal"). When the deal is
        asked for, seeds close and the game waits for your reveal (revealSeed); a seed not
        revealed within the reveal window (30 s) is recorded withheld and your seat gets none."""
        return await service.tables.commit_seed(player, str(table_id), data.seed_hash)

    @post(
        "/tables/{table_id:uuid}/seed-reveal",
        operation_id="revealSeed",
        status_code=200,
        responses=responses(400, 401, 403, 404, 409, 413, 422, 503),
    )
    async def reveal_seed(
        self, table_id: FromPath[UUID], data: JSONBody[SeedIn], service: Service, player: Caller
    ) -> TableView:
        """Reveal the seed you committed to, once seeds are closed (`next_game.seeds_closed`);
        422 if it is not the one committed. The last reveal deals the game."""
        return await service.tables.reveal_seed(player, str(table_id), data.client_seed)

    @post(
        "/tables/{table_id:uuid}/stream-tickets",
        operation_id="createTableStreamTicket",
        status_code=201,
        responses=responses(400, 401, 403, 404, 503),
    )
    async def create_table_stream_ticket(
        self, table_id: FromPath[UUID], service: Service, viewer: CallerToken
    ) -> StreamTicketOut:
        """A ticket that opens this table's stream without the bearer token in the URL, for
        a browser's `EventSource`: `new EventSource(base + stream_url)`. It lives 5 minutes
        (EventSource's reconnects reuse it), is good for this stream only, and dies with the
        token it was issued for (logout)."""
        issued = await service.watching.issue_ticket(viewer, "table", str(table_id))
        return _ticket_out("table", str(table_id), issued.ticket, issued.expires_at)

    @get(
        "/tables/{table_id:uuid}/stream",
        operation_id="streamTableEvents",
        opt={NO_ACCESS_LOG: True},
        security=STREAM_SECURITY,
        responses=_stream_responses(TABLE_STREAM_DESCRIPTION),
    )
    async def stream_table_events(
        self,
        table_id: FromPath[UUID],
        request: Request[Any, Any, Any],
        service: Service,
        state: State,
        after: StreamAfter = None,
        last_event_id: LastEventId = None,
        ticket: Ticket = None,
    ) -> ServerSentEvent:
        """Follow a table live: seats taken and freed, host changes, each game opened (its id
        is in the event) and finished, and the table closing. Anyone may follow an online
        table; a solo table only its player."""
        viewer = await stream_viewer(request, service, "table", str(table_id), ticket)
        start = last_event_id if last_event_id is not None else (after or 0)
        events = await service.streams.follow_table(
            viewer, str(table_id), start, heartbeat=state.stream_heartbeat
        )
        log.info("stream opened", table_id=str(table_id), after=start)

        return _server_sent(events)


class GameController(Controller):
    path = "/games"
    dependencies = VIEWER
    before_request = staticmethod(strict_body)
    tags = ["games"]
    security = AUTH

    @get("/{game_id:uuid}", operation_id="getGame", responses=responses(400, 401, 403, 404, 503))
    async def get_game(self, game_id: FromPath[UUID], service: Service, player: Caller) -> GameView:
        """The caller's view: their hand, the stems, every seat's stings, pile and status, the
        forecast for each bee in hand, and any too-low choice with the cost of each stem; every
        bee with its stings beside it. Anyone may look at a game of an online table: without a
        seat, as a spectator (`you` is null, `hand` empty, no hand shown until the end)."""
        return await service.play.get_game(player, str(game_id))

    @post(
        "/{game_id:uuid}/moves",
        operation_id="submitMove",
        status_code=200,
        responses=responses(400, 401, 403, 404, 409, 413, 422, 503),
    )
    async def submit_move(
        self, game_id: FromPath[UUID], data: JSONBody[AnyMove], service: Service, player: Caller
    ) -> GameView:
        """Tap a bee (changeable), confirm (final), or take a stem when your bee is too low.
        Bee players react at once. Resending a move with its `move_id` returns the same result
        and writes nothing; a different move with a `move_id` already used in this game is
        refused with 409 `move-id-reused`. Integers must be JSON integers (`17`, not `"17"`
        or `17.0`)."""
        return await service.play.submit_move(player, str(game_id), data)

    @get(
        "/{game_id:uuid}/export",
        operation_id="exportGame",
        responses=responses(400, 401, 404, 409, 503),
    )
    async def export_game(
        self, game_id: FromPath[UUID], service: Service, player: Caller
    ) -> GameExport:
        """After the game: the whole game as one document, its events (each with its hash-chain
        link) and the revealed deal, for anyone to audit offline with
        `python -m service audit FILE` (docs/fairness.md). 409 while the game is running."""
        return await service.exports.export_game(str(game_id))

    @get(
        "/{game_id:uuid}/verification",
        operation_id="verifyGame",
        responses=responses(400, 401, 404, 409, 503),
    )
    async def verify_game(
        self,
        game_id: FromPath[UUID],
        service: Service,
        player: Caller,
        expect_commitment: Annotated[
            str | None,
            QueryParameter(pattern=HASH_PATTERN, description="The commitment you recorded"),
        ] = None,
        expect_fingerprint: Annotated[
            str | None,
            QueryParameter(
                pattern=HASH_PATTERN, description="The fingerprint you recorded before turn 1"
            ),
        ] = None,
        expect_head: Annotated[
            list[HeadText] | None,
            QueryParameter(description="A game event's VERSION:HASH you recorded (repeatable)"),
        ] = None,
        expect_table_head: Annotated[
            list[HeadText] | None,
            QueryParameter(description="A table event's VERSION:HASH you recorded (repeatable)"),
        ] = None,
    ) -> Verification:
        """After the game: the server's own verdict, step by step: the commitment came first,
        the deal is the fair one (commitment, transcript, deck, deal, fingerprint), the hash
        chain is whole, every move replays through the rules, and the result stands; held to
        what you recorded during play (the `expect_*` parameters, as `python -m service audit
        --expect-*` takes them), each checked by the step that owns it."""
        try:
            expect = Expectations(
                commitment=expect_commitment,
                fingerprint=expect_fingerprint,
                heads=tuple(parse_head(h) for h in expect_head or ()),
                table_heads=tuple(parse_head(h) for h in expect_table_head or ()),
            )
        except ValueError as error:
            raise ValidationException(f"expect_head or expect_table_head: {error}") from None
        report = await service.exports.verify_game(str(game_id), expect)
        return Verification(
            game_id=str(game_id),
            ok=report.ok,
            steps=[
                VerificationStep(
                    name=step.name,
                    status=step.status,
                    reason=step.reason,
                    version=step.version,
                    checks=[
                        VerificationCheck(name=d.name, status=d.status, reason=d.reason)
                        for d in step.details
                    ],
                )
                for step in report.steps
            ],
        )

    @get(
        "/{game_id:uuid}/events",
        operation_id="listGameEvents",
        responses=responses(400, 401, 403, 404, 503),
    )
    async def list_game_events(
        self,
        game_id: FromPath[UUID],
        service: Service,
        player: Caller,
        after: Annotated[
            int, QueryParameter(ge=0, le=2**31 - 1, description="Last version seen")
        ] = 0,
        limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 200,
    ) -> EventPage:
        """The game's log after version `after`, as the caller may see it: other seats' hands and
        unrevealed picks are null until the game ends, then everything is shown. Each event
        has its own schema (`type` tells which); a spectator of an online table sees every
        hand and unrevealed pick null."""
        view = await service.play.get_game(player, str(game_id))
        events = await service.streams.list_game_events(player, str(game_id), after, limit)
        return EventPage(events=events, game_version=view.version)

    @post(
        "/{game_id:uuid}/stream-tickets",
        operation_id="createGameStreamTicket",
        status_code=201,
        responses=responses(400, 401, 403, 404, 503),
    )
    async def create_game_stream_ticket(
        self, game_id: FromPath[UUID], service: Service, viewer: CallerToken
    ) -> StreamTicketOut:
        """A ticket that opens this game's stream without the bearer token in the URL, for
        a browser's `EventSource`: `new EventSource(base + stream_url)`. It lives 5 minutes
        (EventSource's reconnects reuse it), is good for this stream only, and dies with the
        token it was issued for (logout). Spectators of an online table may have one too."""
        issued = await service.watching.issue_ticket(viewer, "game", str(game_id))
        return _ticket_out("game", str(game_id), issued.ticket, issued.expires_at)

    @get(
        "/{game_id:uuid}/stream",
        operation_id="streamGameEvents",
        opt={NO_ACCESS_LOG: True},
        security=STREAM_SECURITY,
        responses=_stream_responses(STREAM_DESCRIPTION),
    )
    async def stream_game_events(
        self,
        game_id: FromPath[UUID],
        request: Request[Any, Any, Any],
        service: Service,
        state: State,
        after: StreamAfter = None,
        last_event_id: LastEventId = None,
        ticket: Ticket = None,
    ) -> ServerSentEvent:
        """Follow the game live: every event after `after` (or `Last-Event-ID`), as
        listGameEvents shows it, then each new one as it is recorded, by any server instance.
        Resume after a disconnect with the last `id` received: nothing is lost or repeated.
        Anyone may follow a game at an online table: without a seat, as a spectator who sees
        no hand until the game ends."""
        viewer = await stream_viewer(request, service, "game", str(game_id), ticket)
        start = last_event_id if last_event_id is not None else (after or 0)
        events = await service.streams.follow_game(
            viewer, str(game_id), start, heartbeat=state.stream_heartbeat
        )
        log.info("stream opened", game_id=str(game_id), after=start)

        return _server_sent(events)


@get(
    "/health",
    operation_id="health",
    tags=["operations"],
    before_request=strict_body,
    responses=responses(400, 503),
)
async def health(service: Service) -> Health:
    """Liveness and database readiness."""
    await service.ctx.pool.fetchval("SELECT 1")
    return Health(status="ok", database="ok")
