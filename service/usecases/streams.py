"""A game's or a table's log as one caller may see it: a page of events (`list_game_events`)
or followed live (`follow_game`, `follow_table`, served as Server-Sent Events).

What a seat may see of each event is decided in `service.domain.views.visible_event`: until
the game ends, other seats' hands and unrevealed picks are null."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from typing import Any

import msgspec

from service.domain.play import seat_of
from service.domain.rules.events import decode_event
from service.domain.seeds import seen_by
from service.domain.tables import TableState, decode_table_event, evolve_table
from service.domain.views import visible_event
from service.store.events import RecordedEvent
from service.usecases.context import Context, stream
from service.usecases.errors import Forbidden
from service.usecases.identity import Player
from service.usecases.repository import Repository
from service.usecases.tables import require_seated


class VisibleEvent(msgspec.Struct, frozen=True, kw_only=True):
    version: int  # position in the game's log, from 1
    type: str
    recorded_at: datetime
    data: dict[str, Any]
    # The event's hash-chain link (docs/fairness.md, "The hash chain"), 64 lowercase hex: keep
    # any of them to hold the game's export to it later (`--expect-head VERSION:HASH`).
    hash: str


Render = Callable[[Sequence[RecordedEvent], bool], list[VisibleEvent]]


def visible_events(
    recorded: Sequence[RecordedEvent], seat: int | None, game_over: bool
) -> list[VisibleEvent]:
    return [
        VisibleEvent(
            version=r.version,
            type=r.type,
            recorded_at=r.recorded_at,
            data=visible_event(decode_event(r.data), seat, game_over),
            hash=r.hash.hex(),
        )
        for r in recorded
    ]


def table_renderer(viewer: str, table: TableState) -> Render:
    """Render a table's events for `viewer`, folding them onto `table` (its state before the
    first one rendered) so that another person's seed stays hidden until its game is dealt."""
    state = table

    def render(recorded: Sequence[RecordedEvent], _over: bool) -> list[VisibleEvent]:
        nonlocal state
        shown = []
        for r in recorded:
            event = decode_table_event(r.data)
            state = evolve_table(state, event) if r.version > state.version else state
            shown.append(
                VisibleEvent(
                    version=r.version,
                    type=r.type,
                    recorded_at=r.recorded_at,
                    data=msgspec.to_builtins(seen_by(event, viewer, state)),
                    hash=r.hash.hex(),
                )
            )
        return shown

    return render


class Streams:
    def __init__(self, ctx: Context, repository: Repository) -> None:
        self.ctx = ctx
        self.repository = repository

    async def list_game_events(
        self, player: Player, game_id: str, after: int, limit: int
    ) -> list[VisibleEvent]:
        state = await self.repository.game(game_id)
        seat = seat_of(state, player.player_id)
        if seat is None:
            raise Forbidden("You do not sit at this game.")
        recorded = await self.ctx.store.read_stream(
            stream("game", game_id), after_version=after, up_to_version=after + limit
        )
        return visible_events(recorded, seat, game_over=state.phase == "ended")

    async def follow_game(
        self, player: Player, game_id: str, after: int, *, heartbeat: float
    ) -> AsyncIterator[VisibleEvent | None]:
        """The caller's live view of the game log after version `after`: each event as
        `list_game_events` would show it at that moment, and `None` for a heartbeat tick.

        Checks access now (so 403/404 come before any streaming); the iterator ends after
        `game_ended`."""
        state = await self.repository.game(game_id)
        seat = seat_of(state, player.player_id)
        if seat is None:
            raise Forbidden("You do not sit at this game.")

        def render(recorded: Sequence[RecordedEvent], over: bool) -> list[VisibleEvent]:
            return visible_events(recorded, seat, game_over=over)

        return self._follow(
            stream("game", game_id),
            after,
            heartbeat,
            render,
            last_type="game_ended",
            already_over=state.version if state.phase == "ended" else None,
        )

    async def follow_table(
        self, player: Player, table_id: str, after: int, *, heartbeat: float
    ) -> AsyncIterator[VisibleEvent | None]:
        """A table's events (seats taken and freed, host changes, seeds, games opened and
        finished) after version `after`; another person's seed shows only as its hash until its
        game is dealt. Ends after `table_closed`."""
        table = await self.repository.table(table_id)
        if table.mode == "solo":
            require_seated(table, player)
        return self._follow(
            stream("table", table_id),
            after,
            heartbeat,
            table_renderer(player.player_id, table),
            last_type="table_closed",
            already_over=table.version if table.closed else None,
        )

    async def _follow(
        self,
        followed: str,
        after: int,
        heartbeat: float,
        render: Render,
        *,
        last_type: str,
        already_over: int | None,
    ) -> AsyncIterator[VisibleEvent | None]:
        """Re-read the stream from our own last version after every wake-up (a NOTIFY from
        whichever process appended) and on every heartbeat tick, in case one was missed."""
        last = after
        wakeups = self.ctx.wakeups
        with (
            wakeups.subscribe(followed)
            if wakeups is not None
            else contextlib.nullcontext(asyncio.Event())
        ) as woken:
            while already_over is None or last < already_over:
                woken.clear()  # before reading, so a commit during the read wakes us again
                recorded = await self.ctx.store.read_stream(followed, after_version=last)
                if recorded:
                    over = any(r.type == last_type for r in recorded) or already_over is not None
                    for event in render(recorded, over):
                        yield event
                    last = recorded[-1].version
                    if over:
                        return
                    continue
                try:
                    await asyncio.wait_for(woken.wait(), heartbeat)
                except TimeoutError:
                    yield None
