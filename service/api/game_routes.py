"""HTTP handlers of games: the caller's view, moves, the log (paged and live), stream tickets,
the export and the server's own verification. Thin: each calls one use case."""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import State
from litestar.exceptions import ValidationException
from litestar.params import JSONBody, QueryParameter
from litestar.response import Stream

from service.api.bodies import (
    HASH_PATTERN,
    NO_STORE,
    EventPage,
    HeadText,
    StreamTicketOut,
    Verification,
    VerificationCheck,
    VerificationStep,
)
from service.api.dependencies import (
    AUTH,
    BODY,
    MOVER,
    VIEWER,
    Caller,
    CallerToken,
    GameId,
    Moving,
    Service,
    stream_viewer,
    strict_body,
)
from service.api.envelopes import entries
from service.api.idempotency import OWN_KEY, REPLAYED
from service.api.limits import client_address
from service.api.moves import AnyMove, person_move
from service.api.problems import refuses
from service.api.sse import (
    NO_ACCESS_LOG,
    STREAM_DESCRIPTION,
    STREAM_SECURITY,
    LastEventId,
    StreamAfter,
    Ticket,
    live,
    stream_form,
    stream_responses,
    stream_start,
    ticket_out,
)
from service.domain.analysis import GameAnalysis, TurnAnalysis
from service.domain.audit import Expectations, GameExport, parse_head
from service.domain.rules.errors import (
    AlreadyConfirmed,
    BeeNotInHand,
    GameNotOver,
    GameNotStarted,
    GameOver,
    NothingTapped,
    NotYourDecision,
    SeatNotPlaying,
    StemOutOfRange,
)
from service.domain.views import GameView
from service.usecases.errors import Conflict, Forbidden, NotFound
from service.usecases.exports import TooManyAnalyses
from service.usecases.play import MoveIdReused

log = structlog.get_logger(__name__)

REPLAYED_HEADER = {REPLAYED: "true"}


class GameController(Controller):
    path = "/games"
    dependencies = VIEWER
    before_request = staticmethod(strict_body)
    tags = ["games"]
    security = AUTH

    @get("/{game_id:uuid}", operation_id="getGame", summary="Your view of a game")
    @refuses(NotFound, Forbidden)
    async def get_game(self, game_id: GameId, service: Service, player: Caller) -> GameView:
        """The caller's view: their hand, the stems, every seat's stings, pile and status, the
        forecast for each bee in hand, and any too-low choice with the cost of each stem; every
        bee with its stings beside it. Anyone may look at a game of an online table: without a
        seat, as a spectator (`you` is null, `hand` empty, no hand shown until the end)."""
        return await service.play.get_game(player, str(game_id))

    @post(
        "/{game_id:uuid}/moves",
        operation_id="submitMove",
        summary="Tap, confirm or take a stem",
        status_code=200,
        dependencies=MOVER,
        opt={
            OWN_KEY: True,  # `move_id` is the move's idempotency key
            BODY: "The move, with a `move_id` of your choosing (unique per move).",
        },
    )
    @refuses(
        NotFound,
        Forbidden,
        MoveIdReused,
        Conflict,
        StemOutOfRange,
        BeeNotInHand,
        AlreadyConfirmed,
        NothingTapped,
        NotYourDecision,
        SeatNotPlaying,
        GameNotStarted,
        GameOver,
    )
    async def submit_move(
        self, game_id: GameId, data: JSONBody[AnyMove], service: Service, mover: Moving
    ) -> Response[GameView]:
        """Tap a bee (changeable), confirm (final), or take a stem when your bee is too low.
        Bee players react at once. `move_id` is the move's idempotency key, per player per
        game: resending a move with its `move_id` returns the same result, marked
        `Idempotent-Replayed: true`, and writes nothing; a different move with a `move_id` you
        already used in this game is refused with 409 `move-id-reused`. (This operation takes
        no `Idempotency-Key`.) Integers are JSON numbers without a fraction (`17`
        or `17.0`, never `"17"`); a stem other than 1 to 4 is 422 `stem-out-of-range`."""
        moved = await service.play.submit_move(
            mover.player, str(game_id), person_move(data), check=mover.check
        )
        return Response(moved.view, headers=REPLAYED_HEADER if moved.replayed else None)

    @get(
        "/{game_id:uuid}/export",
        operation_id="exportGame",
        summary="The whole game, for an offline audit",
    )
    @refuses(NotFound, Forbidden, GameNotOver)
    async def export_game(self, game_id: GameId, service: Service, player: Caller) -> GameExport:
        """After the game: the whole game as one document, its events (each with its hash-chain
        link) and the revealed deal, for anyone to audit offline with
        `python -m service audit FILE` (docs/fairness.md). 409 while the game is running. A
        solo game is its player's alone: 403 `forbidden` for anyone else, ended or not."""
        return await service.exports.export_game(str(game_id), player)

    @get(
        "/{game_id:uuid}/analysis",
        operation_id="analyseTurn",
        summary="What the expert bee would have played (a finished game)",
    )
    @refuses(NotFound, Forbidden, GameNotOver, SeatNotPlaying, TooManyAnalyses)
    async def analyse_turn(
        self,
        game_id: GameId,
        request: Request[Any, Any, Any],
        service: Service,
        player: Caller,
        seat: Annotated[int, QueryParameter(ge=1, le=8, description="The seat (1 to 8)")],
        turn: Annotated[int, QueryParameter(ge=1, le=10, description="The turn (1 to 10)")],
    ) -> TurnAnalysis:
        """After the game: what the expert bee level would have played at this seat at the
        start of this turn, with its estimate, for each bee in its hand, of the
        stings the seat would take from then to the end and of its share of the win, worked out
        from only what that seat could see then (its hand, the stems, the bees already played,
        everyone's stings). Beside it, the bee the seat did play. The same question gets the
        same answer every time (the decision's seed is SHA-256 of
        `analysis/{game_id}/{seat}/{turn}`), and costs one expert decision, under a tenth of a
        second: one analysis runs at a time on a server (503 `overloaded` with Retry-After
        meanwhile) and answers are kept: asking again costs nothing. Each decision made for
        you counts against your player's budget on the server (`SWARM_ANALYSES_PER_HOUR`, 240
        an hour by default, a sixth of it at once; your address carries ten players' worth);
        past it, 429 `too-many-analyses` with Retry-After, and an answer already kept is
        still given. 409 `game-not-over` while the game runs;
        409 `seat-not-playing` for a seat the game does not have or that had left by then.
        A solo game is its player's alone: 403 `forbidden` for anyone else, ended or not."""
        address = client_address(request)
        return await service.exports.analyse_turn(str(game_id), seat, turn, player, address)

    @get(
        "/{game_id:uuid}/review",
        operation_id="analyseGame",
        summary="What each of a seat's picks cost against the expert bee's (a finished game)",
    )
    @refuses(NotFound, Forbidden, GameNotOver, SeatNotPlaying, TooManyAnalyses)
    async def analyse_game(
        self,
        game_id: GameId,
        request: Request[Any, Any, Any],
        service: Service,
        player: Caller,
        seat: Annotated[int, QueryParameter(ge=1, le=8, description="The seat (1 to 8)")],
    ) -> GameAnalysis:
        """After the game: the whole game of one seat against the expert bee level, turn by
        turn: the bee the seat played, the bee the expert would have played, the expert's
        estimate of the stings the seat would take from then to the end with each, and what the
        seat's pick cost against the expert's (the first less the second, never below 0); then
        the costs added up and the turns where the seat lost most (at most 3, the costliest
        first). Each turn is `analyseTurn`'s answer for that seat and turn, worked out from
        only what the seat could see then, the same every time. It costs one expert decision a
        turn, about a second in all: one analysis runs at a time on a server (503 `overloaded`
        with Retry-After meanwhile) and answers are kept: asking again costs nothing. The turns
        not already kept count against your player's budget, as analyseTurn's do (429
        `too-many-analyses` with Retry-After past it). 409 `game-not-over` while the game
        runs; 409 `seat-not-playing` for a seat the game does not have or that played no turn.
        A solo game is its player's alone: 403 `forbidden` for anyone else, ended or not."""
        address = client_address(request)
        return await service.exports.analyse_game(str(game_id), seat, player, address)

    @get(
        "/{game_id:uuid}/verification",
        operation_id="verifyGame",
        summary="The server's verification of a game",
    )
    @refuses(NotFound, Forbidden, GameNotOver)
    async def verify_game(
        self,
        game_id: GameId,
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
        --expect-*` takes them), each checked by the step that owns it. A solo game is its
        player's alone: 403 `forbidden` for anyone else, ended or not."""
        try:
            expect = Expectations(
                commitment=expect_commitment,
                fingerprint=expect_fingerprint,
                heads=tuple(parse_head(h) for h in expect_head or ()),
                table_heads=tuple(parse_head(h) for h in expect_table_head or ()),
            )
        except ValueError as error:
            raise ValidationException(f"expect_head or expect_table_head: {error}") from None
        report = await service.exports.verify_game(str(game_id), expect, player)
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
        summary="The game's log, a page at a time",
    )
    @refuses(NotFound, Forbidden)
    async def list_game_events(
        self,
        game_id: GameId,
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
        return EventPage(events=entries(events), game_version=view.version)

    @post(
        "/{game_id:uuid}/stream-tickets",
        operation_id="createGameStreamTicket",
        summary="A ticket to follow the game from a browser",
        cache_control=NO_STORE,
        status_code=201,
    )
    @refuses(NotFound, Forbidden)
    async def create_game_stream_ticket(
        self, game_id: GameId, service: Service, viewer: CallerToken
    ) -> StreamTicketOut:
        """A ticket that opens this game's stream without the bearer token in the URL, for
        a browser's `EventSource`: `new EventSource(base + stream_url)`. It lives 5 minutes
        (EventSource's reconnects reuse it), is good for this stream only, and dies with the
        token it was issued for (logout). Spectators of an online table may have one too."""
        issued = await service.watching.issue_ticket(viewer, "game", str(game_id))
        return ticket_out("game", str(game_id), issued.ticket, issued.expires_at)

    @get(
        "/{game_id:uuid}/stream",
        operation_id="streamGameEvents",
        summary="Follow the game live (Server-Sent Events)",
        opt={NO_ACCESS_LOG: True},
        security=STREAM_SECURITY,
        responses=stream_responses(STREAM_DESCRIPTION),
    )
    @refuses(NotFound, Forbidden, "not-acceptable")
    async def stream_game_events(
        self,
        game_id: GameId,
        request: Request[Any, Any, Any],
        service: Service,
        state: State,
        after: StreamAfter = None,
        last_event_id: LastEventId = None,
        ticket: Ticket = None,
    ) -> Stream:
        """Follow the game live: every event after `after` (or `Last-Event-ID`), as
        listGameEvents shows it, then each new one as it is recorded, by any server instance.
        Resume after a disconnect with the last `id` received: nothing is lost or repeated.
        Anyone may follow a game at an online table: without a seat, as a spectator who sees
        no hand until the game ends."""
        form = stream_form(request)
        viewer = await stream_viewer(request, service, "game", str(game_id), ticket)
        start = stream_start(after, last_event_id)
        events = await service.streams.follow_game(
            viewer, str(game_id), start, heartbeat=state.stream_heartbeat
        )
        log.info("stream opened", game_id=str(game_id), after=start)

        return live(form, events)
