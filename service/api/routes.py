"""HTTP handlers: parse, call one use case, return its view. No rules and no SQL here.

Each handler has a stable `operation_id`: clients and the contract tests use these names.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Literal
from uuid import UUID

import msgspec
import structlog
from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, HeaderParameter, JSONBody, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from service.api.limits import client_address
from service.api.problems import responses
from service.bootstrap import Swarm
from service.domain.audit import Expectations, GameExport, parse_head
from service.domain.rules.events import ClockSettings
from service.domain.views import GameView
from service.usecases.errors import Unauthorized
from service.usecases.identity import Player
from service.usecases.play import AnyMove
from service.usecases.streams import VisibleEvent
from service.usecases.tables import LobbyEntry, TableView

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
        "no control, format (zero-width, bidi) or invisible characters",
    ),
]
PlayerCount = Annotated[int, msgspec.Meta(ge=2, le=8)]


class GuestIn(msgspec.Struct, forbid_unknown_fields=True):
    name: Name


class GuestOut(msgspec.Struct):
    player_id: str
    name: str
    token: str  # send as `Authorization: Bearer <token>`


class SoloTableIn(msgspec.Struct, forbid_unknown_fields=True):
    players: PlayerCount = 4
    # false: the table opens with its next game's commitment, and deals when you start it
    # (startGame, with your client_seed if you give one); true: the first game is dealt at once
    deal: bool = True


class TableIn(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    seats: PlayerCount = 4
    stake: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)] = 0  # 0 = a free table
    turn_seconds: Annotated[float, msgspec.Meta(ge=1, le=600)] = 20.0
    choice_seconds: Annotated[float, msgspec.Meta(ge=1, le=600)] = 10.0


HASH_PATTERN = "^[0-9a-f]{64}$"

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


def _seed_of(data: OptionalSeedIn | None) -> str | None:
    return data.client_seed if data is not None else None


class LobbyPage(msgspec.Struct):
    tables: list[LobbyEntry]
    limit: int
    offset: int
    next_offset: int | None  # None on the last page


class EventPage(msgspec.Struct):
    events: list[VisibleEvent]
    game_version: int  # the game's log so far; ask again with after=<last version you have>


class SseMessage(msgspec.Struct):
    """One Server-Sent Events message of a stream, as an EventSource client receives it."""

    data: str  # the event as listGameEvents returns it, as JSON text
    id: str | None = None  # the stream version: send it back as Last-Event-ID to resume
    event: str | None = None  # the event type


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


def provide_service(state: State) -> Swarm:
    service: Service = state.service
    return service


async def provide_player(request: Request[object, object, State], service: Service) -> Player:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Send `Authorization: Bearer <token>`; createGuest gives you one.")
    return await service.identity.authenticate(token.strip())


Service = NamedDependency[Swarm]
Caller = NamedDependency[Player]

log = structlog.get_logger(__name__)

AUTH: list[dict[str, list[str]]] = [{"bearer": []}]

_EVENT_ENCODER = msgspec.json.Encoder()

NO_ACCESS_LOG = "no_access_log"  # handler opt: skip the request/response logging middleware

STREAM_DESCRIPTION = (
    "A Server-Sent Events stream (`text/event-stream`). Each message is `id: <game version>`, "
    "`event: <event type>` and `data: <the event as listGameEvents returns it>` (one JSON "
    "object, with the same redaction). A `: heartbeat` comment comes every few seconds while "
    "nothing happens. The stream ends after `game_ended` and the `deal_revealed` written with "
    "it."
)

TABLE_STREAM_DESCRIPTION = (
    "A Server-Sent Events stream (`text/event-stream`) of the table's events: `id: <table "
    "version>`, `event: <event type>` and `data: {version, type, recorded_at, data}`. Types: "
    "`table_opened`, `seat_taken`, `seat_freed`, `host_changed`, `game_opened` (a new game: "
    "its `game_id` is in the data), `game_finished`, `table_closed`. Heartbeats as for games; "
    "the stream ends after `table_closed`."
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


def _stream_responses(description: str) -> dict[int, ResponseSpec]:
    return {
        200: ResponseSpec(
            data_container=SseMessage,
            description=description,
            media_type="text/event-stream",
            generate_examples=False,
        ),
        **responses(400, 401, 403, 404, 503),
    }


def _server_sent(events: AsyncIterator[VisibleEvent | None]) -> ServerSentEvent:
    async def messages() -> AsyncIterator[ServerSentEventMessage]:
        async for event in events:
            yield _sse_message(event)

    return ServerSentEvent(messages())


def _sse_message(event: VisibleEvent | None) -> ServerSentEventMessage:
    if event is None:
        return ServerSentEventMessage(data=None, comment="heartbeat")
    return ServerSentEventMessage(
        data=_EVENT_ENCODER.encode(event).decode("utf-8"), event=event.type, id=event.version
    )


class GuestController(Controller):
    path = "/guests"
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
        return await service.tables.create_solo_table(player, data.players, deal=data.deal)

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
        data: JSONBody[OptionalSeedIn | None] = None,
    ) -> TableView:
        """On a free table with at least two people, the host fills every empty seat with bee
        players (Buzz, Bumble, … in that order) and the game starts at once."""
        return await service.tables.fill_with_bees(player, str(table_id), _seed_of(data))

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

    @get(
        "/tables/{table_id:uuid}/stream",
        operation_id="streamTableEvents",
        opt={NO_ACCESS_LOG: True},
        responses=_stream_responses(TABLE_STREAM_DESCRIPTION),
    )
    async def stream_table_events(
        self,
        table_id: FromPath[UUID],
        service: Service,
        player: Caller,
        state: State,
        after: StreamAfter = None,
        last_event_id: LastEventId = None,
    ) -> ServerSentEvent:
        """Follow a table live: seats taken and freed, host changes, each game opened (its id
        is in the event) and finished, and the table closing."""
        start = last_event_id if last_event_id is not None else (after or 0)
        events = await service.streams.follow_table(
            player, str(table_id), start, heartbeat=state.stream_heartbeat
        )
        log.info("stream opened", table_id=str(table_id), after=start)

        return _server_sent(events)


class GameController(Controller):
    path = "/games"
    tags = ["games"]
    security = AUTH

    @get("/{game_id:uuid}", operation_id="getGame", responses=responses(400, 401, 403, 404, 503))
    async def get_game(self, game_id: FromPath[UUID], service: Service, player: Caller) -> GameView:
        """The caller's view: their hand, the stems, every seat's stings and status, the forecast
        for each bee in hand, and any too-low choice with the cost of each stem."""
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
        Bee players react at once. Resending a `move_id` returns the same result and writes
        nothing."""
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
            list[str] | None,
            QueryParameter(description="A game event's VERSION:HASH you recorded (repeatable)"),
        ] = None,
        expect_table_head: Annotated[
            list[str] | None,
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
        unrevealed picks are null until the game ends, then everything is shown."""
        view = await service.play.get_game(player, str(game_id))
        events = await service.streams.list_game_events(player, str(game_id), after, limit)
        return EventPage(events=events, game_version=view.version)

    @get(
        "/{game_id:uuid}/stream",
        operation_id="streamGameEvents",
        opt={NO_ACCESS_LOG: True},
        responses=_stream_responses(STREAM_DESCRIPTION),
    )
    async def stream_game_events(
        self,
        game_id: FromPath[UUID],
        service: Service,
        player: Caller,
        state: State,
        after: StreamAfter = None,
        last_event_id: LastEventId = None,
    ) -> ServerSentEvent:
        """Follow the game live: every event after `after` (or `Last-Event-ID`), as
        listGameEvents shows it, then each new one as it is recorded, by any server instance.
        Resume after a disconnect with the last `id` received: nothing is lost or repeated."""
        start = last_event_id if last_event_id is not None else (after or 0)
        events = await service.streams.follow_game(
            player, str(game_id), start, heartbeat=state.stream_heartbeat
        )
        log.info("stream opened", game_id=str(game_id), after=start)

        return _server_sent(events)


@get("/health", operation_id="health", tags=["operations"], responses=responses(503))
async def health(service: Service) -> Health:
    """Liveness and database readiness."""
    await service.ctx.pool.fetchval("SELECT 1")
    return Health(status="ok", database="ok")
