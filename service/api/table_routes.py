"""HTTP handlers of tables: open (solo or online), the lobby, seats, starting, bees, play again,
seeds, and the table's live stream. Thin: each calls one use case.

`TableController` is one class on purpose: the table operations share one path prefix, one
set of dependencies and one tag, as Litestar's controllers are meant to."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import structlog
from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.params import JSONBody, QueryParameter
from litestar.response import Stream

from service.api.answers import LobbyPage, TableView, lobby_page, table_view
from service.api.bodies import (
    NO_STORE,
    FillWithBeesIn,
    OptionalSeedIn,
    PlayNowIn,
    SeedCommitmentIn,
    SeedIn,
    SoloTableIn,
    StreamTicketOut,
    TableIn,
    client_seed_of,
)
from service.api.dependencies import (
    AUTH,
    BODY,
    VIEWER,
    Caller,
    CallerToken,
    Service,
    TableId,
    stream_viewer,
    strict_body,
)
from service.api.problems import refuses
from service.api.sse import (
    NO_ACCESS_LOG,
    STREAM_SECURITY,
    TABLE_STREAM_DESCRIPTION,
    LastEventId,
    StreamAfter,
    Ticket,
    live,
    stream_form,
    stream_responses,
    stream_start,
    ticket_out,
)
from service.domain.ledger import InsufficientCoins
from service.domain.rules.bees import DEFAULT_LEVEL
from service.domain.rules.errors import InvalidSeats
from service.domain.rules.events import ClockSettings
from service.domain.seeds import NothingToReveal, SeedDoesNotMatch, SeedsStillOpen
from service.domain.tables import (
    AlreadySeated,
    BeesNotAllowed,
    BuyInNeedsAccount,
    GameInProgress,
    InvalidTable,
    NoGameToReplay,
    NoGameToSeed,
    NotEnoughPeople,
    NotHost,
    NotPermitted,
    NotSeated,
    SeedsAreClosed,
    TableClosed,
    TableFull,
    TooManyTables,
)
from service.store.rows import Reach
from service.usecases.errors import Conflict, Forbidden, NotFound

log = structlog.get_logger(__name__)

OPTIONAL_SEED = "Optional: your seed for the game that will be dealt (or no body at all)."


class TableController(Controller):
    path = "/"
    dependencies = VIEWER
    before_request = staticmethod(strict_body)
    tags = ["tables"]
    security = AUTH

    @post(
        "/solo-tables",
        operation_id="createSoloTable",
        summary="Play solo against bee players",
        status_code=201,
        opt={BODY: "How many players, you included (the rest are bee players)."},
    )
    @refuses(InvalidSeats, InvalidTable, Conflict)
    async def create_solo_table(
        self, data: JSONBody[SoloTableIn], service: Service, player: Caller
    ) -> TableView:
        """Sit at seat 1 against bee players (Buzz, Bumble, … in that order); the first game is
        dealt at once. With `"deal": false` the table opens with the commitment to its first
        game's deal (`next_game`) and deals when you call startGame, with your seed if you give
        one (docs/fairness.md). Nothing is timed, paid or recorded."""
        return table_view(
            await service.tables.create_solo_table(
                player, data.players, deal=data.deal, level=data.level
            )
        )

    @post(
        "/tables",
        operation_id="createTable",
        summary="Open an online table",
        status_code=201,
        opt={BODY: "The table's seats, stake and clock; every field has a default."},
    )
    @refuses(BuyInNeedsAccount, InvalidTable, TooManyTables, InsufficientCoins, Conflict)
    async def create_table(
        self, data: JSONBody[TableIn], service: Service, player: Caller
    ) -> TableView:
        """Open an online table of 2 to 8 seats (4 to start) and take seat 1 as its host. The
        game starts when the table is full, or when the host starts it with two people or
        more. Buy-in tables (`stake` > 0) need an account and are refused until accounts
        exist. Turns are timed by the table's clock (20 s a turn, 10 s to choose a stem). A
        player hosts at most 5 open online tables at once: 409 `too-many-tables`. A `rated`
        table's games change the ratings of the people with accounts who play them; a casual
        one's (the default) do not."""
        clock = ClockSettings(turn_seconds=data.turn_seconds, choice_seconds=data.choice_seconds)
        return table_view(
            await service.tables.create_table(
                player, data.seats, data.stake, clock, rated=data.rated
            )
        )

    @post(
        "/play-now",
        operation_id="playNow",
        summary="Be seated at a table now",
        status_code=200,
        opt={BODY: "The kind of table: seats, rated or casual, stake; every field has a default."},
    )
    @refuses(BuyInNeedsAccount, InvalidTable, TooManyTables, InsufficientCoins, Conflict)
    async def play_now(
        self, data: JSONBody[PlayNowIn], service: Service, player: Caller
    ) -> TableView:
        """Seat yourself at a waiting online table of the kind you ask for (its seats, rated
        or casual, its stake): of those waiting, the one whose people's average rating is
        closest to yours. If none waits, a table of that kind is opened with you as its host
        (`status` `open`, you alone): others asking for the same kind are seated with you as
        they come; nobody coming, start with two people or fill the empty seats with bee
        players (fillWithBees). Alone, bee players cannot fill an online table (they don't
        keep a game going): leave it (leaveTable; a buy-in comes back before the first deal)
        and play the same seats against bees on your own (createSoloTable: practice, nothing
        paid, recorded or rated), as the board offers after 30 seconds of waiting. Two people
        asking at once are seated at the same table, on any instance. The refusals are
        joining's and opening's."""
        return table_view(
            await service.play_now.play_now(player, data.seats, data.rated, data.stake)
        )

    @get(
        "/tables",
        operation_id="listTables",
        summary="The lobby: open tables",
    )
    @refuses()
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
        when they opened. Served from a projection written with the tables' events. While
        part of the database is away (a worker of a Citus cluster), the tables of the rest,
        with `partial` true."""
        reach = Reach()
        listed = await service.tables.list_tables(
            stake=stake, has_free_seat=has_free_seat, limit=limit + 1, offset=offset, reach=reach
        )
        return lobby_page(listed, limit, offset, reach.partial)

    @get(
        "/tables/{table_id:uuid}",
        operation_id="getTable",
        summary="A table and your view of its game",
    )
    @refuses(NotFound, Forbidden)
    async def get_table(self, table_id: TableId, service: Service, player: Caller) -> TableView:
        """The table (anyone may look at an online table) and, in `game`, the caller's view of
        its current game if they were dealt into it."""
        return table_view(await service.tables.get_table(player, str(table_id)))

    @post(
        "/tables/{table_id:uuid}/seats",
        operation_id="joinTable",
        summary="Take a seat",
        status_code=200,
        opt={BODY: OPTIONAL_SEED},
    )
    @refuses(
        NotFound,
        AlreadySeated,
        BuyInNeedsAccount,
        GameInProgress,
        TableFull,
        InsufficientCoins,
        Conflict,
        NoGameToSeed,
        NotPermitted,
        NotSeated,
        SeedsAreClosed,
        TableClosed,
    )
    async def join_table(
        self,
        table_id: TableId,
        service: Service,
        player: Caller,
        data: JSONBody[OptionalSeedIn | None] = None,
    ) -> TableView:
        """Take the next free seat. The game starts at once if that fills the table."""
        return table_view(
            await service.tables.join_table(player, str(table_id), client_seed_of(data))
        )

    @post(
        "/tables/{table_id:uuid}/leave",
        operation_id="leaveTable",
        summary="Leave the table",
        status_code=200,
    )
    @refuses(NotFound, NotSeated, TableClosed, Conflict)
    async def leave_table(self, table_id: TableId, service: Service, player: Caller) -> TableView:
        """Leave the table. During a game you pick no more bees (an unrevealed pick is
        withdrawn, a pending too-low choice is taken as the cheapest stem) and your stings stop
        counting; if one person is left they win at once. A host who leaves hands the table
        to the next person in seat order; a table with nobody left closes."""
        return table_view(await service.tables.leave_table(player, str(table_id)))

    @post(
        "/tables/{table_id:uuid}/start",
        operation_id="startGame",
        summary="Start the first game (host)",
        status_code=200,
        opt={BODY: OPTIONAL_SEED},
    )
    @refuses(
        NotFound,
        GameInProgress,
        NoGameToReplay,
        NotEnoughPeople,
        NotHost,
        Conflict,
        NoGameToSeed,
        NotSeated,
        SeedsAreClosed,
        TableClosed,
    )
    async def start_game(
        self,
        table_id: TableId,
        service: Service,
        player: Caller,
        data: JSONBody[OptionalSeedIn | None] = None,
    ) -> TableView:
        """The host starts the first game: with at least two people seated, or at a solo table
        opened with `"deal": false`."""
        return table_view(
            await service.tables.start_game(player, str(table_id), client_seed_of(data))
        )

    @post(
        "/tables/{table_id:uuid}/bees",
        operation_id="fillWithBees",
        summary="Fill empty seats with bee players (host)",
        status_code=200,
        opt={
            BODY: (
                "Optional: your seed for the game that will be dealt, and the bees' level (or no "
                "body at all)."
            )
        },
    )
    @refuses(
        NotFound,
        GameInProgress,
        NoGameToReplay,
        NotEnoughPeople,
        NotHost,
        BeesNotAllowed,
        Conflict,
        NoGameToSeed,
        NotSeated,
        SeedsAreClosed,
        TableClosed,
    )
    async def fill_with_bees(
        self,
        table_id: TableId,
        service: Service,
        player: Caller,
        data: JSONBody[FillWithBeesIn | None] = None,
    ) -> TableView:
        """On a free table with at least two people, the host fills every empty seat with bee
        players (Buzz, Bumble, … in that order) of the `level` asked ("easy" unless asked),
        and the game starts at once."""
        level = data.level if data is not None else DEFAULT_LEVEL
        return table_view(
            await service.tables.fill_with_bees(player, str(table_id), client_seed_of(data), level)
        )

    @post(
        "/tables/{table_id:uuid}/games",
        operation_id="playAgain",
        summary="Deal another game at the table",
        status_code=201,
        opt={BODY: OPTIONAL_SEED},
    )
    @refuses(
        NotFound,
        GameInProgress,
        NoGameToReplay,
        NotEnoughPeople,
        Conflict,
        NoGameToSeed,
        NotSeated,
        SeedsAreClosed,
        TableClosed,
    )
    async def play_again(
        self,
        table_id: TableId,
        service: Service,
        player: Caller,
        data: JSONBody[OptionalSeedIn | None] = None,
    ) -> TableView:
        """After a game ends, deal another to everyone still at the table (free, no buy-in).
        The new game's id is the last of `games`; followers of the table's stream see it as a
        `game_opened` event whose `follows` is the game just ended: whoever watched that game
        (a spectator) follows to the new one."""
        return table_view(
            await service.tables.play_again(player, str(table_id), client_seed_of(data))
        )

    @post(
        "/tables/{table_id:uuid}/seed",
        operation_id="contributeSeed",
        summary="Contribute a seed to the next deal",
        status_code=200,
        opt={BODY: "Your seed for the table's next game."},
    )
    @refuses(NotFound, Conflict, NoGameToSeed, NotSeated, SeedsAreClosed, TableClosed)
    async def contribute_seed(
        self, table_id: TableId, data: JSONBody[SeedIn], service: Service, player: Caller
    ) -> TableView:
        """Contribute your seed to the table's next game, whose commitment (`next_game`) is
        already public. Joining, starting, filling with bees and play again take the same
        optional `client_seed`. A later seed replaces yours; bee players give none."""
        return table_view(
            await service.tables.contribute_seed(player, str(table_id), data.client_seed)
        )

    @post(
        "/tables/{table_id:uuid}/seed-commitment",
        operation_id="commitSeed",
        summary="Commit to a seed by its hash",
        status_code=200,
        opt={BODY: "The hash of the seed you will reveal once seeds close."},
    )
    @refuses(NotFound, Conflict, NoGameToSeed, NotSeated, SeedsAreClosed, TableClosed)
    async def commit_seed(
        self,
        table_id: TableId,
        data: JSONBody[SeedCommitmentIn],
        service: Service,
        player: Caller,
    ) -> TableView:
        """Commit to a seed for the next game by its hash, keeping the seed to yourself until
        every seat is bound (docs/fairness.md, "Seeds: commit, then reveal"). When the deal is
        asked for, seeds close and the game waits for your reveal (revealSeed); a seed not
        revealed within the reveal window (30 s) is recorded withheld and your seat gets none."""
        return table_view(await service.tables.commit_seed(player, str(table_id), data.seed_hash))

    @post(
        "/tables/{table_id:uuid}/seed-reveal",
        operation_id="revealSeed",
        summary="Reveal the seed you committed to",
        status_code=200,
        opt={BODY: "The seed you committed to."},
    )
    @refuses(
        NotFound,
        NothingToReveal,
        SeedDoesNotMatch,
        SeedsStillOpen,
        Conflict,
        NoGameToSeed,
        NotSeated,
        SeedsAreClosed,
        TableClosed,
    )
    async def reveal_seed(
        self, table_id: TableId, data: JSONBody[SeedIn], service: Service, player: Caller
    ) -> TableView:
        """Reveal the seed you committed to, once seeds are closed (`next_game.seeds_closed`);
        422 if it is not the one committed. The last reveal deals the game."""
        return table_view(await service.tables.reveal_seed(player, str(table_id), data.client_seed))

    @post(
        "/tables/{table_id:uuid}/stream-tickets",
        operation_id="createTableStreamTicket",
        summary="A ticket to follow the table from a browser",
        cache_control=NO_STORE,
        status_code=201,
    )
    @refuses(NotFound, Forbidden)
    async def create_table_stream_ticket(
        self, table_id: TableId, service: Service, viewer: CallerToken
    ) -> StreamTicketOut:
        """A ticket that opens this table's stream without the bearer token in the URL, for
        a browser's `EventSource`: `new EventSource(base + stream_url)`. It lives 5 minutes
        (EventSource's reconnects reuse it), is good for this stream only, and dies with the
        token it was issued for (logout)."""
        issued = await service.watching.issue_ticket(viewer, "table", str(table_id))
        return ticket_out("table", str(table_id), issued.ticket, issued.expires_at)

    @get(
        "/tables/{table_id:uuid}/stream",
        operation_id="streamTableEvents",
        summary="Follow the table live (Server-Sent Events)",
        opt={NO_ACCESS_LOG: True},
        security=STREAM_SECURITY,
        responses=stream_responses(TABLE_STREAM_DESCRIPTION),
    )
    @refuses(NotFound, Forbidden, "not-acceptable")
    async def stream_table_events(
        self,
        table_id: TableId,
        request: Request[Any, Any, Any],
        service: Service,
        state: State,
        after: StreamAfter = None,
        last_event_id: LastEventId = None,
        ticket: Ticket = None,
    ) -> Stream:
        """Follow a table live: seats taken and freed, host changes, each game opened (its id
        is in the event) and finished, and the table closing. Anyone may follow an online
        table; a solo table only its player."""
        form = stream_form(request)
        viewer = await stream_viewer(request, service, "table", str(table_id), ticket)
        start = stream_start(after, last_event_id)
        events = await service.streams.follow_table(
            viewer, str(table_id), start, heartbeat=state.stream_heartbeat
        )
        log.info("stream opened", table_id=str(table_id), after=start)

        return live(form, events)
