"""Play now (issue 43): one request seats a person at a waiting online table of the kind they
ask for (seats, rated or casual, buy-in), the one whose people's average rating is closest to
theirs, or opens one and waits there for others (the host may fill it with bees).

Two people asking at once must end at the same table, also on two instances. The asks for
one kind of table take turns on a stream of their own, `playnow-<seats>-<rated|casual>-<stake>`:
an ask that finds no table to join appends `play_now_opened` naming the table it is about to
open, at the version it read (`ConcurrencyConflict` if another ask appended first, on any
instance), then opens it. The other ask, decided again, finds that table named and joins it
(waiting a moment if it is still being opened). An ask names a table only once opening it
would not be refused (`Tables.check_open`: the cap on tables hosted, an account and the coins
for a buy-in), so a refused ask writes nothing. A table named but never opened (its opener
crashed, or lost a race for its coins) is waited for, up to `OPENING_WAIT`, only when it is
the newest name (the one an ask right behind its opener can find still being opened): names
that never became tables cannot make every later ask wait. No clock is compared: the
database's and an instance's may differ.
"""

from __future__ import annotations

import asyncio
import uuid

import msgspec

from service.domain.refusals import Refused
from service.domain.rules.events import ClockSettings
from service.domain.tables import TableState
from service.store.log import NewEvent, StreamAppend
from service.usecases.context import Context
from service.usecases.errors import NotFound
from service.usecases.identity import Player
from service.usecases.repository import Repository
from service.usecases.retry import StreamTurns, until_applied
from service.usecases.tables import Tables, TableSeen

# A table opened by Play now has createTable's default clock.
CLOCK_DEFAULT = ClockSettings(turn_seconds=20.0, choice_seconds=10.0)
OPENING_WAIT = 2.0  # seconds an ask waits for a named table to be opened
RECENT = 20  # tables named on a kind's stream that an ask looks at, newest first


class PlayNowOpened(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="play_now_opened"
):
    table_id: str
    host: str


_DECODER = msgspec.json.Decoder(PlayNowOpened)


def kind_stream(seats: int, rated: bool, stake: int) -> str:
    return f"playnow-{seats}-{'rated' if rated else 'casual'}-{stake}"


class PlayNow:
    def __init__(
        self, ctx: Context, repository: Repository, tables: Tables, turns: StreamTurns
    ) -> None:
        self.ctx = ctx
        self.repository = repository
        self.tables = tables
        self.turns = turns

    async def play_now(self, player: Player, seats: int, rated: bool, stake: int) -> TableSeen:
        """Seat `player` at a waiting table of this kind (the closest average rating first),
        or open one. Refusals are the ones joining or opening gives (an account for a buy-in,
        the coins for it, the cap on tables hosted)."""
        key = kind_stream(seats, rated, stake)
        async with self.turns.turn(key):
            return await until_applied(
                lambda: self._attempt(player, key, seats, rated, stake), what="table"
            )

    async def _attempt(
        self, player: Player, key: str, seats: int, rated: bool, stake: int
    ) -> TableSeen:
        version = await self.ctx.store.stream_version(key)
        rows = await self.ctx.store.read_stream(key, after_version=max(0, version - RECENT))
        version = rows[-1].version if rows else version
        named = [_DECODER.decode(r.data) for r in rows][::-1]
        for table in await self._joinable(named, player, seats, rated, stake):
            try:
                return await self.tables.join_table(player, table.table_id, None)
            except Refused:  # full or started meanwhile: the next one
                continue
        await self.tables.check_open(player, seats, stake, rated)  # refused: nothing named
        table_id = str(uuid.uuid4())
        opened = PlayNowOpened(table_id=table_id, host=player.player_id)
        event = NewEvent(type="play_now_opened", data=msgspec.json.encode(opened))
        await self.ctx.store.append(
            StreamAppend(stream=key, expected_version=version, events=[event]),
            metadata={"actor": player.player_id, "causation": "play_now"},
        )
        return await self.tables.create_table(
            player, seats, stake, CLOCK_DEFAULT, rated=rated, table_id=table_id
        )

    async def _joinable(
        self,
        named: list[PlayNowOpened],
        player: Player,
        seats: int,
        rated: bool,
        stake: int,
    ) -> list[TableState]:
        """The tables named on the stream that still wait for people and could seat the
        caller, closest average rating first (a table being opened is waited for)."""
        found = []
        for i, entry in enumerate(named):
            table = await self._opened(entry.table_id, wait=i == 0)  # the newest name
            if (
                table is None
                or table.status != "open"
                or len(table.seats) >= table.capacity
                or table.seat_of(player.player_id) is not None
                or (table.capacity, table.rated, table.stake) != (seats, rated, stake)
            ):
                continue
            found.append(table)
        if len(found) < 2:
            return found
        people = {s.player_id for t in found for s in t.people if s.player_id} | {player.player_id}
        ratings = await self.ctx.ports.standings.ratings(sorted(people))
        mine = ratings[player.player_id].points if player.player_id in ratings else 1500

        def distance(table: TableState) -> float:
            seated = [ratings[s.player_id].points for s in table.people if s.player_id in ratings]
            return abs(sum(seated) / len(seated) - mine) if seated else 0.0

        return sorted(found, key=distance)

    async def _opened(self, table_id: str, *, wait: bool) -> TableState | None:
        """The table, once opened; None if it is not opened (within `OPENING_WAIT` when
        `wait`)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + (OPENING_WAIT if wait else 0.0)
        while True:
            try:
                return await self.repository.table(table_id)
            except NotFound:
                if loop.time() >= until:
                    return None
                await asyncio.sleep(0.05)
