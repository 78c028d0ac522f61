"""A game's or a table's log as one caller may see it: a page of events (`list_game_events`)
or followed live (`follow_game`, `follow_table`, served as Server-Sent Events).

One piece, on purpose: paging, following live, tickets and spectators all hand events to a
caller through the same redaction and the same envelopes, which must not drift apart.

What a seat may see of each event is decided in `service.domain.views.visible_event`: until
the game ends, other seats' hands and unrevealed picks are null (every seat's, for a
spectator). Each comes as a `LogItem` (its place in the log and its visible form), which the
API puts in its typed envelope (`service/api/envelopes.py`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import datetime
from functools import partial
from typing import NamedTuple, TypeVar

from service.domain.chain import CHAIN_V1
from service.domain.rules.events import (
    decode_event,
)
from service.domain.table_events import decode_table_event
from service.domain.tables import TableState, evolve_table
from service.domain.views import (
    VisibleEventData,
    VisibleTableEventData,
    visible_event,
    visible_table_event,
)
from service.store.log import RecordedEvent
from service.store.port import PoolExhausted
from service.usecases.context import Context, stream
from service.usecases.identity import Player
from service.usecases.repository import Repository
from service.usecases.tables import require_seated
from service.usecases.watching import Viewer, Watching, revocation_channel, viewer_seat

T = TypeVar("T")

# Seconds a follower waits before reading again when no pool connection came free in time.
BUSY_RETRY = 1.0
# Followers' re-reads on one process at once: a move to a followed game wakes every follower
# of it, and a thousand streams woken together would otherwise queue for the pool ahead of the
# moves (issue 28); they take turns here instead, so the pool stays the requests'.
FOLLOWER_READS = 4


class LogItem(NamedTuple):
    """One event of a log as one caller may see it: where it is in the log, and its visible
    form (the API puts it in its envelope, `service/api/envelopes.py`)."""

    version: int
    recorded_at: datetime
    hash: str
    data: VisibleEventData | VisibleTableEventData


def _hex(r: RecordedEvent) -> str:
    return r.hash.hex()


def head_shown(r: RecordedEvent, over: bool) -> str | None:
    """The hash of a game event as a player may be shown it (`hash` beside an event, getGame's
    `head_hash`): None for a stream under chain v1 until the game ends.

    A v1 hash covers the event's data open, hidden bees included, so a guess of the bee can be
    tried against it (docs/fairness.md, "Hidden values"); a game that was running when the
    service moved to chain v2 (migration 0015) stays under v1 to its end. Its hashes are shown
    once it has ended (in the export too), when nothing is hidden any more."""
    return hash_shown(r.hash, r.chain, over=over)


def hash_shown(hash_: bytes, chain: int, *, over: bool) -> str | None:
    """`head_shown` of an event known by its hash and chain version."""
    if chain == CHAIN_V1 and not over:
        return None
    return hash_.hex()


def visible_events(
    recorded: Sequence[RecordedEvent], seat: int | None, game_over: bool
) -> list[LogItem]:
    """The game events as seat `seat` (None: a spectator) may see them."""
    return [
        LogItem(
            r.version,
            r.recorded_at,
            head_shown(r, game_over) or "",
            visible_event(decode_event(r.data), seat, game_over),
        )
        for r in recorded
    ]


def table_renderer(viewer: str, table: TableState) -> Render:
    """Render a table's events for `viewer`, folding them onto `table` (its state before the
    first one rendered) so that another person's seed stays hidden until its game is dealt."""
    state = table

    def render(recorded: Sequence[RecordedEvent], _over: bool) -> list[LogItem]:
        nonlocal state
        shown = []
        for r in recorded:
            event = decode_table_event(r.data)
            state = evolve_table(state, event) if r.version > state.version else state
            shown.append(
                LogItem(
                    r.version, r.recorded_at, _hex(r), visible_table_event(event, viewer, state)
                )
            )
        return shown

    return render


Render = Callable[[Sequence[RecordedEvent], bool], Sequence[LogItem]]


# The last version a stream can hold (`events.version` is a PostgreSQL integer).
MAX_VERSION = 2**31 - 1


class Streams:
    def __init__(self, ctx: Context, repository: Repository, watching: Watching) -> None:
        self.ctx = ctx
        self.repository = repository
        self.watching = watching
        self._reads = asyncio.Semaphore(FOLLOWER_READS)

    async def list_game_events(
        self, player: Player, game_id: str, after: int, limit: int
    ) -> list[LogItem]:
        state = await self.repository.game(game_id)
        seat = await viewer_seat(self.repository, state, player)
        recorded = await self.ctx.store.read_stream(
            stream("game", game_id),
            after_version=after,
            up_to_version=min(after + limit, MAX_VERSION),  # a version is an int4 column
        )
        return visible_events(recorded, seat, game_over=state.phase == "ended")

    async def follow_game(
        self, viewer: Viewer, game_id: str, after: int, *, heartbeat: float
    ) -> AsyncIterator[LogItem | None]:
        """The caller's live view of the game log after version `after`: each event as
        `list_game_events` would show it at that moment, and `None` for a heartbeat tick.
        A spectator (no seat, at an online table) sees every hand hidden.

        Checks access now (so 403/404 come before any streaming); the iterator ends after
        `game_ended`, or when the viewer's token is revoked or expires."""
        state = await self.repository.game(game_id)
        seat = await viewer_seat(self.repository, state, viewer.player)

        def render(recorded: Sequence[RecordedEvent], over: bool) -> list[LogItem]:
            return visible_events(recorded, seat, game_over=over)

        return self._follow(
            viewer,
            stream("game", game_id),
            after,
            heartbeat,
            render,
            last_type="game_ended",
            already_over=state.version if state.phase == "ended" else None,
        )

    async def follow_table(
        self, viewer: Viewer, table_id: str, after: int, *, heartbeat: float
    ) -> AsyncIterator[LogItem | None]:
        """A table's events (seats taken and freed, host changes, seeds, games opened and
        finished) after version `after`; another person's seed shows only as its hash until
        its game is dealt. Ends after `table_closed`, or when the viewer's token is revoked or
        expires."""
        table = await self.repository.table(table_id)
        if table.mode == "solo":
            require_seated(table, viewer.player)
        return self._follow(
            viewer,
            stream("table", table_id),
            after,
            heartbeat,
            table_renderer(viewer.player.player_id, table),
            last_type="table_closed",
            already_over=table.version if table.closed else None,
        )

    async def _follow(
        self,
        viewer: Viewer,
        followed: str,
        after: int,
        heartbeat: float,
        render: Render,
        *,
        last_type: str,
        already_over: int | None,
    ) -> AsyncIterator[LogItem | None]:
        """Re-read the stream from our own last version after every wake-up (a NOTIFY from
        whichever process appended) and on every heartbeat tick, in case one was missed. The
        viewer's token is checked again when it is revoked anywhere and on every tick."""
        last = after
        wakeups = self.ctx.wakeups
        with (
            (
                wakeups.subscribe(followed)
                if wakeups is not None
                else contextlib.nullcontext(asyncio.Event())
            ) as woken,
            (
                wakeups.subscribe(revocation_channel(viewer.token_hash))
                if wakeups is not None
                else contextlib.nullcontext(asyncio.Event())
            ) as revoked,
        ):
            while already_over is None or last < already_over:
                if revoked.is_set():
                    revoked.clear()
                    valid = await self._when_free(partial(self.watching.still_valid, viewer))
                    if valid is None:  # not checked (the pool is busy): check on the next turn
                        revoked.set()
                    elif not valid:
                        return
                woken.clear()  # before reading, so a commit during the read wakes us again
                recorded = await self._when_free(
                    partial(self.ctx.store.read_stream, followed, after_version=last)
                )
                if recorded is None:
                    # The pool is busy (the service is overloaded): the stream is already
                    # open, so it stays open and reads again shortly, rather than being cut.
                    yield None
                    await asyncio.sleep(min(heartbeat, BUSY_RETRY))
                    continue
                if recorded:
                    over = any(r.type == last_type for r in recorded) or already_over is not None
                    for event in render(recorded, over):
                        yield event
                    last = recorded[-1].version
                    if over:
                        return
                    continue
                if not await _either(woken, revoked, heartbeat):
                    if await self._when_free(partial(self.watching.still_valid, viewer)) is False:
                        return
                    yield None

    async def _when_free(self, read: Callable[[], Awaitable[T]]) -> T | None:
        """`read()`'s answer (a follower's turn among `FOLLOWER_READS`), or None when no pool
        connection came free in time."""
        try:
            async with self._reads:
                return await read()
        except PoolExhausted:
            return None


async def _either(first: asyncio.Event, second: asyncio.Event, timeout: float) -> bool:
    """Wait until either event is set (True) or `timeout` passes (False)."""
    if first.is_set() or second.is_set():
        return True
    waits = [asyncio.ensure_future(first.wait()), asyncio.ensure_future(second.wait())]
    try:
        done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
    return bool(done)
