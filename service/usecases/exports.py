"""A finished game, for anyone to check: its export (every event with its chain hash, and the
revealed deal), the server's own audit of it (`service.domain.audit`, the same code an
outsider runs on the export with `python -m service audit`), and what the expert bee would
have played at one seat and turn, or at every turn of one seat (`service.domain.analysis`)."""

from __future__ import annotations

import asyncio
import math
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from typing import TypeVar

import msgspec

from service.domain.analysis import (
    GameAnalysis,
    TurnAnalysis,
    analyse_turn,
    game_analysis,
    seat_turns,
)
from service.domain.audit import FORMAT as EXPORT_FORMAT
from service.domain.audit import (
    AuditReport,
    Expectations,
    ExportedEvent,
    FairnessRecord,
    GameExport,
    TableRecord,
    audit,
)
from service.domain.chain import CHAIN_V1, GENESIS
from service.domain.rules import errors as rule_errors
from service.domain.rules.engine import GameState
from service.domain.rules.events import DealRevealed, GameStarted, decode_event
from service.domain.table_events import (
    GameOpened,
    GamePrepared,
    TableEventUnion,
    decode_table_event,
)
from service.store.log import RecordedEvent
from service.usecases.budget import Budget
from service.usecases.context import Context, stream
from service.usecases.errors import Busy
from service.usecases.identity import Player
from service.usecases.repository import Repository
from service.usecases.watching import viewer_seat

# An analysis is one expert decision (about 0.1 s of CPU, `expert.WORK`), made in a worker
# thread; a whole seat's game is one a turn the seat played (about 1 s). At most this many run
# at once on an instance; one more is shed (503 `overloaded`, Retry-After) rather than queued.
# The answers are deterministic, so the last ones are kept (a whole game's reuses them, and
# keeps its own), and one already kept costs nothing: 4,096 turns are about 50 whole games of 8
# seats, under 6 MB (1.4 kB a turn at 8 seats).
ANALYSES_AT_ONCE = 1
ANALYSES_KEPT = 4096
# Each caller's decisions made on an instance are bounded (`budget.Budget`): a player's
# `Context.analyses_per_hour`, refilled evenly, with a sixth of that in hand at most (a whole
# seat's game at least); a client address, whoever its players are, `ADDRESS_PLAYERS` times
# that (people behind one address share it; it bounds what guests made there can ask).
ANALYSES_IN_HAND = 1 / 6
MOST_TURNS = 10  # a seat's game: the most one request asks for
ADDRESS_PLAYERS = 10


class TooManyAnalyses(Exception):
    """The caller's player, or its client address, asked for more expert decisions than its
    budget holds now (429 `too-many-analyses` with Retry-After); nothing was done."""

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


T = TypeVar("T")

# How many of a player's games their export reads from the history at a time.
PLAYER_GAMES_PAGE = 500

# A table's stream as read for an export: its rows, and each decoded.
_TableLog = tuple[list[RecordedEvent], list[TableEventUnion]]


class Exports:
    def __init__(self, ctx: Context, repository: Repository) -> None:
        self.ctx = ctx
        self.repository = repository
        self._analysing = 0
        self._analyses: OrderedDict[tuple[str, int, int], TurnAnalysis] = OrderedDict()
        per_hour = ctx.analyses_per_hour
        in_hand = max(MOST_TURNS, per_hour * ANALYSES_IN_HAND)
        self.players = Budget(per_hour, in_hand)
        self.addresses = Budget(ADDRESS_PLAYERS * per_hour, ADDRESS_PLAYERS * in_hand)

    async def _may_open(self, game_id: str, player: Player | None) -> GameState:
        """The game's state, once `player` may open it (None: the server itself): anyone may an
        online game's, only its player a solo game's (403 `forbidden` for anyone else, before
        and after the end alike, as getGame answers: a stranger learns neither its contents
        nor whether it has ended)."""
        state = await self.repository.game(game_id)
        if player is not None:
            await viewer_seat(self.repository, state, player)
        return state

    async def analyse_turn(
        self,
        game_id: str,
        seat: int,
        turn: int,
        player: Player | None = None,
        address: str | None = None,
    ) -> TurnAnalysis:
        """What the expert bee would have played at `seat` at the start of `turn` of a finished
        game, from only what that seat could see then (`service.domain.analysis`). A decision
        made is charged to `player` and `address` (`_admit`); a kept answer is not."""
        state = await self._may_open(game_id, player)
        if state.phase != "ended":
            raise rule_errors.GameNotOver("A game is analysed once it has ended.")
        key = (game_id, seat, turn)
        kept = self._analyses.get(key)
        if kept is not None:
            self._analyses.move_to_end(key)
            return kept
        payers = self._admit(player, address, 1)
        try:
            recorded = await self.ctx.store.read_stream(stream("game", game_id))
            events = [decode_event(r.data) for r in recorded]
        except BaseException:
            self._done(payers, 1)
            raise
        answer = await self._made(payers, 1, lambda: analyse_turn(game_id, events, seat, turn))
        self._keep(key, answer)
        return answer

    async def analyse_game(
        self, game_id: str, seat: int, player: Player | None = None, address: str | None = None
    ) -> GameAnalysis:
        """What each of `seat`'s picks in a finished game cost against the expert's, turn by
        turn: the turns' analyses are `analyse_turn`'s (kept answers are reused, new ones
        kept, and only those are charged)."""
        state = await self._may_open(game_id, player)
        if state.phase != "ended":
            raise rule_errors.GameNotOver("A game is analysed once it has ended.")
        recorded = await self.ctx.store.read_stream(stream("game", game_id))
        events = [decode_event(r.data) for r in recorded]
        turns = seat_turns(events, seat)
        kept = {t: self._analyses.get((game_id, seat, t)) for t in turns}
        missing = [t for t, answer in kept.items() if answer is None]
        if missing:
            payers = self._admit(player, address, len(missing))
            made = await self._made(
                payers,
                len(missing),
                lambda: [analyse_turn(game_id, events, seat, t) for t in missing],
            )
            for answer in made:
                kept[answer.turn] = answer
                self._keep((game_id, seat, answer.turn), answer)
        else:
            for t in turns:
                self._analyses.move_to_end((game_id, seat, t))
        return game_analysis(game_id, seat, [a for a in kept.values() if a is not None])

    def _admit(
        self, player: Player | None, address: str | None, decisions: int
    ) -> list[tuple[Budget, str]]:
        """Take a place to make `decisions` expert decisions, charged to the player's budget
        and the address's (none for the server itself), or refuse before anything is spent:
        429 when either budget holds too little (`TooManyAnalyses`, told when it will hold
        enough), else 503 while another analysis runs (`Busy`). `_done` gives the place back."""
        payers: list[tuple[Budget, str]] = []
        if player is not None:
            payers.append((self.players, player.player_id))
        if address is not None:
            payers.append((self.addresses, address))
        waits = [(budget.wait(key, decisions), budget) for budget, key in payers]
        wait, budget = max(waits, key=lambda w: w[0], default=(0.0, None))
        if wait > 0:
            who = "this player" if budget is self.players else "this client address"
            seconds = max(1, math.ceil(wait))
            raise TooManyAnalyses(
                f"{who.capitalize()} has had its share of analyses on this server for now "
                f"({self.ctx.analyses_per_hour} expert decisions an hour for a player; "
                f"answers already made are kept, and free): ask again in {_span(seconds)}.",
                seconds,
            )
        if self._analysing >= ANALYSES_AT_ONCE:
            raise Busy("Another analysis is running on this server: try again in a moment.")
        for budget, key in payers:
            budget.take(key, decisions)
        self._analysing += 1
        return payers

    async def _made(
        self, payers: list[tuple[Budget, str]], decisions: int, work: Callable[[], T]
    ) -> T:
        """`work`'s answer, made in a worker thread in the place `_admit` took. The place is
        given back when the thread ends, not before: a caller that goes away mid-analysis
        (the request cancelled) neither frees it early nor gets its decisions back. If `work`
        fails (a seat or turn the game does not have: before any search), they are."""
        running = asyncio.ensure_future(asyncio.to_thread(work))

        def ended(task: asyncio.Future[T]) -> None:
            failed = not task.cancelled() and task.exception() is not None
            self._done(payers, decisions if failed else 0)

        running.add_done_callback(ended)
        return await asyncio.shield(running)

    def _done(self, payers: list[tuple[Budget, str]], undone: int) -> None:
        """Give back `_admit`'s place, and the decisions it charged that were not made."""
        self._analysing -= 1
        for budget, key in payers:
            budget.give_back(key, undone)

    def _keep(self, key: tuple[str, int, int], answer: TurnAnalysis) -> None:
        self._analyses[key] = answer
        self._analyses.move_to_end(key)
        while len(self._analyses) > ANALYSES_KEPT:
            self._analyses.popitem(last=False)

    async def export_game(self, game_id: str, player: Player | None = None) -> GameExport:
        """The whole finished game: its events with their hashes, and the revealed deal.
        Anyone may export an online game once it is over (before that it would give hands
        away); a solo game only its player."""
        return await self._export(game_id, player, {})

    async def _export(
        self, game_id: str, player: Player | None, tables: dict[str, _TableLog]
    ) -> GameExport:
        """`export_game`, reading each table's stream once for all the games of one answer
        (`tables`: those read so far): a table that played 150 games made a bulk export read
        and decode its whole stream 150 times (6.6 s; issue 43's review)."""
        state = await self._may_open(game_id, player)
        if state.phase != "ended":
            raise rule_errors.GameNotOver("A game is exported once it has ended.")
        recorded = await self.ctx.store.read_stream(stream("game", game_id))
        events = [decode_event(r.data) for r in recorded]
        started = next(e for e in events if isinstance(e, GameStarted))
        revealed = next((e for e in events if isinstance(e, DealRevealed)), None)
        if started.proof is None or revealed is None:
            raise rule_errors.GameNotOver("This game was dealt before fair deals were recorded.")
        proof = started.proof
        return GameExport(
            format=EXPORT_FORMAT,
            game_id=game_id,
            table_id=state.table_id,
            events=_rows(recorded),
            fairness=FairnessRecord(
                scheme=proof.scheme,
                commitment=proof.commitment,
                client_seeds=proof.client_seeds,
                transcript=proof.transcript,
                fingerprint=proof.fingerprint,
                server_seed=revealed.server_seed,
                deck_order=revealed.deck_order,
                hands=started.hands,
                stems=started.stems,
            ),
            table=await self._table_record(state.table_id, game_id, tables),
        )

    async def player_games(
        self,
        player_id: str,
        caller: Player,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        most: int | None = None,
    ) -> AsyncIterator[GameExport]:
        """Every finished game `player_id` was dealt into, newest first, each as `export_game`
        gives it: those that ended from `since` (included) to `until` (excluded), `most` of
        them at most. Another caller gets the online games alone (a solo game is its player's
        alone). Games dealt before fair deals were recorded have no export and are left out.
        The games are found here, before the first export is read: the answer can still be a
        refusal until then, and games ending meanwhile shift nothing."""
        online_only = caller.player_id != player_id
        games: list[str] = []
        while most is None or len(games) < most:
            page = await self.ctx.ports.members.games_of(
                player_id,
                online_only=online_only,
                since=since,
                until=until,
                limit=PLAYER_GAMES_PAGE,
                offset=len(games),
            )
            games += [played.game_id for played in page]
            if len(page) < PLAYER_GAMES_PAGE:
                break
        return self._exports(games[:most] if most is not None else games)

    async def _exports(self, games: Sequence[str]) -> AsyncIterator[GameExport]:
        tables: dict[str, _TableLog] = {}
        for game_id in games:
            try:
                yield await self._export(game_id, None, tables)
            except rule_errors.GameNotOver:  # dealt before fair deals: nothing to audit
                continue

    async def _table_record(
        self, table_id: str, game_id: str, tables: dict[str, _TableLog]
    ) -> TableRecord | None:
        """The table's events for this game: its game_prepared to its game_opened (None for a
        game whose table stream does not hold both, e.g. one dealt before they existed). A
        table's stream read for an earlier game of the same answer is read again only if it
        lacks this game's (a game dealt since)."""
        log = tables.get(table_id)
        if log is None or not any(
            isinstance(e, GameOpened) and e.game_id == game_id for e in log[1]
        ):
            recorded = await self.ctx.store.read_stream(stream("table", table_id))
            log = tables[table_id] = (recorded, [decode_table_event(r.data) for r in recorded])
        recorded, events = log
        first = next(
            (
                i
                for i, e in enumerate(events)
                if isinstance(e, GamePrepared) and e.game_id == game_id
            ),
            None,
        )
        last = next(
            (i for i, e in enumerate(events) if isinstance(e, GameOpened) and e.game_id == game_id),
            None,
        )
        if first is None or last is None or last < first:
            return None
        prev = recorded[first - 1].hash if first > 0 else GENESIS
        return TableRecord(prev_hash=prev.hex(), events=_rows(recorded[first : last + 1]))

    async def verify_game(
        self, game_id: str, expect: Expectations | None = None, player: Player | None = None
    ) -> AuditReport:
        """The server's own verdict on a finished game: the same audit an outsider runs on the
        export, over the events as stored now, held to what the caller recorded (`expect`)."""
        export = await self.export_game(game_id, player)
        return audit(msgspec.to_builtins(export), expect or Expectations())


def _span(seconds: int) -> str:
    """`seconds` for a person: "40 seconds", "3 minutes"."""
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    return f"{math.ceil(seconds / 60)} minutes"


def _rows(recorded: Sequence[RecordedEvent]) -> tuple[ExportedEvent, ...]:
    return tuple(
        ExportedEvent(
            version=r.version,
            type=r.type,
            recorded_at=r.recorded_at,
            hash=r.hash.hex(),
            data=msgspec.json.decode(r.data),
            chain=r.chain,
            metadata=r.metadata if r.chain != CHAIN_V1 else None,
        )
        for r in recorded
    )
