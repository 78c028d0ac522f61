"""A game's or a table's log as one caller may see it: a page of events (`list_game_events`)
or followed live (`follow_game`, `follow_table`, served as Server-Sent Events).

One piece, on purpose: paging, following live, tickets and spectators all hand events to a
caller through the same redaction and the same envelopes, which must not drift apart.

What a seat may see of each event is decided in `service.domain.views.visible_event`: until
the game ends, other seats' hands and unrevealed picks are null (every seat's, for a
spectator). Each event comes in a typed envelope (`VisibleEvent`, `TableLogEntry`): one
struct per event type, tagged by `type`, so the API document gives a client a type for each."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

import msgspec

from service.domain.chain import CHAIN_V1
from service.domain.rules.cards import stings
from service.domain.rules.events import (
    BeeLanded,
    DealCommitted,
    DealRevealed,
    Event,
    GameEnded,
    PicksRevealed,
    SeatLeft,
    StemChoiceRequired,
    StemTaken,
    TurnStarted,
    decode_event,
)
from service.domain.tables import (
    BuyInHeld,
    BuyInReturned,
    GameFinished,
    GameOpened,
    GamePrepared,
    HostChanged,
    PotFormed,
    PotSettled,
    SeatFreed,
    SeatTaken,
    SeedCommitted,
    SeedsClosed,
    SeedWithheld,
    TableClosedEvent,
    TableOpened,
    TableState,
    decode_table_event,
    evolve_table,
)
from service.domain.views import (
    VisibleBeeTapped,
    VisibleGameStarted,
    VisiblePickConfirmed,
    VisibleSeedContributed,
    VisibleSeedRevealed,
    visible_event,
    visible_table_event,
)
from service.store.events import RecordedEvent
from service.store.pool import PoolExhausted
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


class _LogEntry(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """One event of a log, as a client receives it in an events page or a stream message.

    Attributes:
        version: Its position in the stream's log, from 1; pass the last one you have as
            `after` (or `Last-Event-ID`) to continue after it.
        recorded_at: When it was recorded (UTC).
        hash: Its hash-chain link (docs/fairness.md), lowercase hex; empty for events written
            before the chain existed, and, until the game ends, for a game still hashed under
            chain v1 (begun before 0.4.0).
        data: The event itself, as the caller may see it; its fields depend on `type`.
    """

    version: int
    recorded_at: datetime
    hash: str = ""


class _GameLogEntry(_LogEntry, frozen=True):
    pass


class _TableLogEntry(_LogEntry, frozen=True):
    pass


class DealCommittedEntry(_GameLogEntry, frozen=True, tag="deal_committed"):
    """The server's commitment to the game's secret seed, before anyone contributes a seed
    (docs/fairness.md). Hides nothing."""

    data: DealCommitted


class GameStartedEntry(_GameLogEntry, frozen=True, tag="game_started"):
    """The deal. Until the game ends, `data.hands` holds only the viewer's own hand; every
    other seat's (every seat's, for a spectator) is null."""

    data: VisibleGameStarted


class TurnStartedEntry(_GameLogEntry, frozen=True, tag="turn_started"):
    """A turn began; `data.deadline` is when its clock runs out (online games). Hides
    nothing."""

    data: TurnStarted


class BeeTappedEntry(_GameLogEntry, frozen=True, tag="bee_tapped"):
    """A seat tapped a bee. Until the game ends, `data.bee` is null unless the seat is the
    viewer's own."""

    data: VisibleBeeTapped


class PickConfirmedEntry(_GameLogEntry, frozen=True, tag="pick_confirmed"):
    """A seat's pick is final. Until the game ends, `data.bee` and `data.by_clock` are null
    unless the seat is the viewer's own."""

    data: VisiblePickConfirmed


class PicksRevealedEntry(_GameLogEntry, frozen=True, tag="picks_revealed"):
    """Everyone is in: every pick, lowest first (the order they fly in). Hides nothing.

    Attributes:
        stings: The stings of each pick's bee, index by index with `data.picks` (beside the
            event, not in it: `data` is the recorded event its `hash` chains).
    """

    data: PicksRevealed
    stings: tuple[int, ...] = ()


class BeeLandedEntry(_GameLogEntry, frozen=True, tag="bee_landed"):
    """A bee landed on a stem; `data.taken` holds the 5 it took when it was the sixth. Hides
    nothing.

    Attributes:
        bee_stings: The stings `data.bee` carries.
        taken_stings: The stings of each bee of `data.taken`, index by index (their sum is
            what the seat took).
    """

    data: BeeLanded
    bee_stings: int = 0
    taken_stings: tuple[int, ...] = ()


class StemChoiceRequiredEntry(_GameLogEntry, frozen=True, tag="stem_choice_required"):
    """A person's bee is too low for every stem: the game waits for them to choose. Hides
    nothing."""

    data: StemChoiceRequired


class StemTakenEntry(_GameLogEntry, frozen=True, tag="stem_taken"):
    """A too-low bee took every bee of a stem and starts it again alone. Hides nothing.

    Attributes:
        bee_stings: The stings `data.bee` carries.
        taken_stings: The stings of each bee of `data.taken`, index by index (their sum is
            what the seat took).
    """

    data: StemTaken
    bee_stings: int = 0
    taken_stings: tuple[int, ...] = ()


class SeatLeftEntry(_GameLogEntry, frozen=True, tag="seat_left"):
    """A person left mid-game. Hides nothing."""

    data: SeatLeft


class GameEndedEntry(_GameLogEntry, frozen=True, tag="game_ended"):
    """The game is over: final stings by seat (index 0 is seat 1) and the winners. From here
    on every event is shown whole."""

    data: GameEnded


class DealRevealedEntry(_GameLogEntry, frozen=True, tag="deal_revealed"):
    """After the game: the secret seed and the deck order, to check the deal
    (docs/fairness.md). The last event of a game."""

    data: DealRevealed


class TableOpenedEntry(_TableLogEntry, frozen=True, tag="table_opened"):
    """Someone opened the table (solo: with every seat filled)."""

    data: TableOpened


class SeatTakenEntry(_TableLogEntry, frozen=True, tag="seat_taken"):
    """A person or a bee player sat down."""

    data: SeatTaken


class BuyInHeldEntry(_TableLogEntry, frozen=True, tag="buy_in_held"):
    """A person who sat down before the first game of a buy-in table has their stake held for
    the pot (held in their wallet first, by the same `hold_id`)."""

    data: BuyInHeld


class BuyInReturnedEntry(_TableLogEntry, frozen=True, tag="buy_in_returned"):
    """A held stake went back to its wallet: its person left before the first deal, or the
    table never took it (the seat was refused, or the sit-down never finished)."""

    data: BuyInReturned


class SeatFreedEntry(_TableLogEntry, frozen=True, tag="seat_freed"):
    """A person left the table."""

    data: SeatFreed


class HostChangedEntry(_TableLogEntry, frozen=True, tag="host_changed"):
    """The host left; the next person in seat order hosts now."""

    data: HostChanged


class GamePreparedEntry(_TableLogEntry, frozen=True, tag="game_prepared"):
    """The next game has an id and the server's commitment: seeds may be contributed to it."""

    data: GamePrepared


class SeedContributedEntry(_TableLogEntry, frozen=True, tag="seed_contributed"):
    """A person contributed a seed to the prepared game. Until that game is dealt, another
    person's `data.seed` is null (its `seed_hash` shows that one was given)."""

    data: VisibleSeedContributed


class SeedCommittedEntry(_TableLogEntry, frozen=True, tag="seed_committed"):
    """A person committed to a seed by its hash, to reveal it once seeds close."""

    data: SeedCommitted


class SeedsClosedEntry(_TableLogEntry, frozen=True, tag="seeds_closed"):
    """No more seeds for the prepared game: those committed must now be revealed."""

    data: SeedsClosed


class SeedRevealedEntry(_TableLogEntry, frozen=True, tag="seed_revealed"):
    """A person revealed the seed they committed to. Until the game is dealt, another
    person's `data.seed` is null (its `seed_hash` is the commitment)."""

    data: VisibleSeedRevealed


class SeedWithheldEntry(_TableLogEntry, frozen=True, tag="seed_withheld"):
    """A committed seed was not revealed in time: that seat's seed counts as none."""

    data: SeedWithheld


class GameOpenedEntry(_TableLogEntry, frozen=True, tag="game_opened"):
    """A game was dealt at the table: follow it with `data.game_id`."""

    data: GameOpened


class PotFormedEntry(_TableLogEntry, frozen=True, tag="pot_formed"):
    """At the first deal of a buy-in table, every stake went into the pot."""

    data: PotFormed


class PotSettledEntry(_TableLogEntry, frozen=True, tag="pot_settled"):
    """The pot was paid out to the winners, or back to every payer."""

    data: PotSettled


class GameFinishedEntry(_TableLogEntry, frozen=True, tag="game_finished"):
    """The table's current game ended."""

    data: GameFinished


class TableClosedEntry(_TableLogEntry, frozen=True, tag="table_closed"):
    """Nobody is left: the table is closed. The last event of a table."""

    data: TableClosedEvent


VisibleEvent = (
    DealCommittedEntry
    | GameStartedEntry
    | TurnStartedEntry
    | BeeTappedEntry
    | PickConfirmedEntry
    | PicksRevealedEntry
    | BeeLandedEntry
    | StemChoiceRequiredEntry
    | StemTakenEntry
    | SeatLeftEntry
    | GameEndedEntry
    | DealRevealedEntry
)
"""An event of a game's log as one viewer may see it, tagged by `type`."""

TableLogEntry = (
    TableOpenedEntry
    | SeatTakenEntry
    | BuyInHeldEntry
    | BuyInReturnedEntry
    | SeatFreedEntry
    | HostChangedEntry
    | GamePreparedEntry
    | SeedContributedEntry
    | SeedCommittedEntry
    | SeedsClosedEntry
    | SeedRevealedEntry
    | SeedWithheldEntry
    | GameOpenedEntry
    | PotFormedEntry
    | PotSettledEntry
    | GameFinishedEntry
    | TableClosedEntry
)
"""An event of a table's log, tagged by `type`; another person's seed is hidden until its game
is dealt."""

_GAME_ENTRIES: dict[str, Callable[..., VisibleEvent]] = {
    "deal_committed": DealCommittedEntry,
    "game_started": GameStartedEntry,
    "turn_started": TurnStartedEntry,
    "bee_tapped": BeeTappedEntry,
    "pick_confirmed": PickConfirmedEntry,
    "picks_revealed": PicksRevealedEntry,
    "bee_landed": BeeLandedEntry,
    "stem_choice_required": StemChoiceRequiredEntry,
    "stem_taken": StemTakenEntry,
    "seat_left": SeatLeftEntry,
    "game_ended": GameEndedEntry,
    "deal_revealed": DealRevealedEntry,
}
_TABLE_ENTRIES: dict[str, Callable[..., TableLogEntry]] = {
    "table_opened": TableOpenedEntry,
    "seat_taken": SeatTakenEntry,
    "buy_in_held": BuyInHeldEntry,
    "buy_in_returned": BuyInReturnedEntry,
    "seat_freed": SeatFreedEntry,
    "host_changed": HostChangedEntry,
    "game_prepared": GamePreparedEntry,
    "seed_contributed": SeedContributedEntry,
    "seed_committed": SeedCommittedEntry,
    "seeds_closed": SeedsClosedEntry,
    "seed_revealed": SeedRevealedEntry,
    "seed_withheld": SeedWithheldEntry,
    "game_opened": GameOpenedEntry,
    "pot_formed": PotFormedEntry,
    "pot_settled": PotSettledEntry,
    "game_finished": GameFinishedEntry,
    "table_closed": TableClosedEntry,
}


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
) -> list[VisibleEvent]:
    """The game events as seat `seat` (None: a spectator) may see them, in their typed
    envelopes."""
    entries: list[VisibleEvent] = []
    for r in recorded:
        event = decode_event(r.data)
        entries.append(
            _GAME_ENTRIES[r.type](
                version=r.version,
                recorded_at=r.recorded_at,
                hash=head_shown(r, game_over) or "",
                data=visible_event(event, seat, game_over),
                **_stings_beside(event),
            )
        )
    return entries


def _stings_beside(event: Event) -> dict[str, Any]:
    """The stings of the bees an event shows, so a client never works them out (issue 25)."""
    match event:
        case PicksRevealed():
            return {"stings": tuple(stings(p.bee) for p in event.picks)}
        case BeeLanded() | StemTaken():
            return {
                "bee_stings": stings(event.bee),
                "taken_stings": tuple(stings(b) for b in event.taken),
            }
        case _:
            return {}


def table_renderer(viewer: str, table: TableState) -> Render:
    """Render a table's events for `viewer`, folding them onto `table` (its state before the
    first one rendered) so that another person's seed stays hidden until its game is dealt."""
    state = table

    def render(recorded: Sequence[RecordedEvent], _over: bool) -> list[TableLogEntry]:
        nonlocal state
        shown = []
        for r in recorded:
            event = decode_table_event(r.data)
            state = evolve_table(state, event) if r.version > state.version else state
            shown.append(
                _TABLE_ENTRIES[r.type](
                    version=r.version,
                    recorded_at=r.recorded_at,
                    hash=_hex(r),
                    data=visible_table_event(event, viewer, state),
                )
            )
        return shown

    return render


AnyLogEntry = VisibleEvent | TableLogEntry


def entry_type(entry: AnyLogEntry) -> str:
    """The `type` tag of a log entry (the SSE `event:` field)."""
    return str(type(entry).__struct_config__.tag)


Render = Callable[[Sequence[RecordedEvent], bool], Sequence[AnyLogEntry]]


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
    ) -> list[VisibleEvent]:
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
    ) -> AsyncIterator[VisibleEvent | None]:
        """The caller's live view of the game log after version `after`: each event as
        `list_game_events` would show it at that moment, and `None` for a heartbeat tick.
        A spectator (no seat, at an online table) sees every hand hidden.

        Checks access now (so 403/404 come before any streaming); the iterator ends after
        `game_ended`, or when the viewer's token is revoked or expires."""
        state = await self.repository.game(game_id)
        seat = await viewer_seat(self.repository, state, viewer.player)

        def render(recorded: Sequence[RecordedEvent], over: bool) -> list[VisibleEvent]:
            return visible_events(recorded, seat, game_over=over)

        return self._follow(  # type: ignore[return-value]
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
    ) -> AsyncIterator[TableLogEntry | None]:
        """A table's events (seats taken and freed, host changes, seeds, games opened and
        finished) after version `after`; another person's seed shows only as its hash until
        its game is dealt. Ends after `table_closed`, or when the viewer's token is revoked or
        expires."""
        table = await self.repository.table(table_id)
        if table.mode == "solo":
            require_seated(table, viewer.player)
        return self._follow(  # type: ignore[return-value]
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
    ) -> AsyncIterator[AnyLogEntry | None]:
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
