"""The tables and games a caller sits at now, solo ones included (listMyGames), so a client
that reloads can resume: read from the table members (`port.TableMembership`, written with
every table event, `rows.TableMembers`), then each table and its current game."""

from __future__ import annotations

from dataclasses import dataclass

from service.domain.rules.engine import GameState
from service.domain.tables import TableState
from service.usecases.context import Context
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

    async def list(self, player: Player) -> list[Seated]:
        table_ids = await self.ctx.ports.members.tables_of(player.player_id, MAX_LISTED)
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
