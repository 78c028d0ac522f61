"""The tables and games a caller sits at now, solo ones included (listMyGames), so a client
that reloads can resume: read from the table members (`port.TableMembership`, written with
every table event, `rows.TableMembers`), then each table and its current game.

And the games a person has played (`history`, listMyHistory): the finished games they were
dealt into (`rows.GamesPlayed`, written with the append that ends each game), newest first,
each read from its stream, with its rating change from the person's record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from service.domain.players import rating_changes
from service.domain.ratings import RatingChanged
from service.domain.rules.engine import GameState
from service.domain.rules.events import EndReason, SeatInfo
from service.domain.tables import TableState
from service.store.rows import PlayedGame, Reach
from service.usecases.context import Context, stream
from service.usecases.errors import NotFound
from service.usecases.identity import Player
from service.usecases.repository import Repository

MAX_LISTED = 100  # far more than anyone sits at; the open-table cap keeps it so


@dataclass(frozen=True)
class Seated:
    """A table the caller sits at (not closed), their seat, its current (or last) game if one
    was dealt, and whether that game waits for the caller: a pick not yet confirmed, or their
    too-low choice."""

    table: TableState
    seat: int
    game: GameState | None
    your_move: bool


class MyGamesQuery:
    def __init__(self, ctx: Context, repository: Repository) -> None:
        self.ctx = ctx
        self.repository = repository

    async def list(self, player: Player, reach: Reach | None = None) -> list[Seated]:
        """Where ``player`` sits; with `reach`, at the tables of the shards that answer."""
        table_ids = await self.ctx.ports.members.tables_of(player.player_id, MAX_LISTED, reach)
        tables = []
        for table_id in table_ids:
            try:
                table = await self.repository.table(table_id)
            except NotFound:  # pragma: no cover - the projection is written with the events
                continue
            seat = table.seat_of(player.player_id)
            if seat is None or table.closed:
                continue
            game = None
            your_move = False
            if table.current_game is not None:
                game = await self.repository.game(table.current_game)
                me = next((s for s in game.seats if s.info.player_id == player.player_id), None)
                if me is not None and not me.left:
                    if game.phase == "picking":
                        your_move = me.confirmed is None
                    elif game.phase == "choosing" and game.pending is not None:
                        your_move = game.pending.seat == me.info.seat
            tables.append(Seated(table, seat, game, your_move))
        return tables

    async def history(
        self, player: Player, kind: HistoryKind, limit: int, offset: int, reach: Reach | None = None
    ) -> Sequence[PastGame]:
        """The caller's finished games (`history`)."""
        return await history(
            self.ctx, self.repository, player.player_id, kind, limit, offset, reach
        )


# --- the games a person has played ------------------------------------------------------------

HistoryKind = Literal["all", "rated", "casual"]


@dataclass(frozen=True)
class PastSeat:
    """A seat of a finished game: who sat there, their stings and their place at the table
    (1 is best: fewest stings; people with as many share it; those who left come last)."""

    info: SeatInfo
    stings: int
    place: int
    left: bool


@dataclass(frozen=True)
class PastGame:
    """A finished game on a person's history: when it ended, its table's kind, the person's
    seat and everyone else's, and what it did to their rating (None: it was not rated for
    them, or the change is still on its way)."""

    played: PlayedGame
    end_reason: EndReason | None
    you: PastSeat
    others: tuple[PastSeat, ...]
    rating: RatingChanged | None


def past_seats(game: GameState) -> list[PastSeat]:
    """Every seat of an ended game with its place."""
    stayed = sorted({s.stings for s in game.seats if s.playing})
    last = len(stayed) + 1
    return [
        PastSeat(
            info=s.info,
            stings=s.stings,
            place=stayed.index(s.stings) + 1 if s.playing else last,
            left=s.left,
        )
        for s in game.seats
    ]


async def history(
    ctx: Context,
    repository: Repository,
    player_id: str,
    kind: HistoryKind,
    limit: int,
    offset: int,
    reach: Reach | None = None,
) -> list[PastGame]:
    """Up to `limit` of the games `player_id` was dealt into and that ended, newest first,
    from `offset` on; `kind`: all, rated or casual ones. With `reach`, the games of the
    shards that answer; the rating changes come from the person's own stream, which must
    answer (else `ShardsAway`: a game shown without its change would read as unrated)."""
    rated = None if kind == "all" else kind == "rated"
    played = await ctx.ports.members.games_of(
        player_id, rated=rated, limit=limit, offset=offset, reach=reach
    )
    if not played:
        return []
    changes = {
        change.game_id: change
        for _, change in rating_changes(
            (r.version, r.type, r.data)
            for r in await ctx.store.read_stream(stream("player", player_id))
        )
    }
    out = []
    for row in played:
        game = await repository.game(row.game_id)
        seats = past_seats(game)
        you = next(s for s in seats if s.info.player_id == player_id)
        out.append(
            PastGame(
                played=row,
                end_reason=game.end_reason,
                you=you,
                others=tuple(s for s in seats if s is not you),
                rating=changes.get(row.game_id),
            )
        )
    return out
