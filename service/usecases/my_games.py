"""The tables and games a caller sits at now, solo ones included (listMyGames), so a client
that reloads can resume: read from the table members (`port.TableMembership`, written with
every table event, `rows.TableMembers`), then each table and its current game."""

from __future__ import annotations

import msgspec

from service.domain.rules.cards import TURNS
from service.domain.tables import TableMode, TableStatus
from service.domain.views import ViewPhase
from service.usecases.context import Context
from service.usecases.errors import NotFound
from service.usecases.identity import Player
from service.usecases.repository import Repository

MAX_LISTED = 100  # far more than anyone sits at; the open-table cap keeps it so


class MyTable(msgspec.Struct, frozen=True, kw_only=True):
    """A table the caller sits at, and its current game.

    Attributes:
        table_id: The table (getTable, streamTableEvents).
        mode: `solo` (against bee players) or `online`.
        status: The table's status: `open` (waiting for people), `playing`, `between_games`
            (a game ended; play again or leave) or `closed`.
        seat: The caller's seat at the table, from 1.
        stake: The buy-in, in coins; 0 for a free table.
        game_id: The table's current (or last) game, if one was dealt (getGame,
            streamGameEvents); null before the first.
        game_phase: That game's phase as the caller sees it: `picking`, `choosing` or `ended`;
            null when there is no game.
        turn: That game's turn, 1 to 10; null when there is no game.
        turns: How many turns a game lasts (seed §6: 10).
        your_move: The game waits for the caller: a pick not yet confirmed, or their too-low
            choice.
    """

    table_id: str
    mode: TableMode
    status: TableStatus
    seat: int
    stake: int
    game_id: str | None
    game_phase: ViewPhase | None
    turn: int | None
    your_move: bool
    turns: int


class MyGames(msgspec.Struct, frozen=True, kw_only=True):
    """Where the caller sits now, most recently joined first.

    Attributes:
        tables: Each table the caller sits at, with its current game.
    """

    tables: tuple[MyTable, ...]


class MyGamesQuery:
    def __init__(self, ctx: Context, repository: Repository) -> None:
        self.ctx = ctx
        self.repository = repository

    async def list(self, player: Player) -> MyGames:
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
            phase: ViewPhase | None = None
            turn: int | None = None
            your_move = False
            if table.current_game is not None:
                game = await self.repository.game(table.current_game)
                phase = _phase(game.phase)
                turn = game.turn
                me = next((s for s in game.seats if s.info.player_id == player.player_id), None)
                if me is not None and not me.left:
                    if game.phase == "picking":
                        your_move = me.confirmed is None
                    elif game.phase == "choosing" and game.pending is not None:
                        your_move = game.pending.seat == me.info.seat
            tables.append(
                MyTable(
                    table_id=table.table_id,
                    mode=table.mode,
                    status=table.status,
                    seat=seat,
                    stake=table.stake,
                    game_id=table.current_game,
                    game_phase=phase,
                    turn=turn,
                    your_move=your_move,
                    turns=TURNS,
                )
            )
        return MyGames(tables=tuple(tables))


def _phase(phase: str) -> ViewPhase:
    return "ended" if phase == "ended" else "choosing" if phase == "choosing" else "picking"
