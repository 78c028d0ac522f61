"""Tables and seats (seed §8 "Playing on your own", §9 "Playing online"): open a solo or an
online table, join, start, fill with bees, play again, contribute a seed, leave, and the lobby.

`Tables` is one class on purpose: every change at a table is a `TableChange` (`Join`, `Start`,
…, `Leave`: what the caller asks, as data) that goes through the same load, decide and commit
(`_change`; `_decide`, one case for each change; `_commit`), and reads best beside it.

The table's rules are in `service.domain.tables`; this module loads the table, asks them, and
commits the table events with whatever they set off (a deal, a stake, a game left) in one
unit of work. Stream `table-<id>`; its lobby listing and members are written with it. Coins never
ride in that unit: a buy-in is held in the wallet before the table is asked, and what the
table owes wallets is delivered after it commits (`service.usecases.money`)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from service.domain.bee_answers import seat_of
from service.domain.refusals import Refused
from service.domain.rules import errors as rule_errors
from service.domain.rules.bees import BEE_NAMES, DEFAULT_LEVEL
from service.domain.rules.cards import MAX_PLAYERS, MIN_PLAYERS
from service.domain.rules.commands import LeaveGame
from service.domain.rules.engine import GameState
from service.domain.rules.events import BeeLevel, ClockSettings, Event, SeatInfo
from service.domain.seeds import (
    decide_close_seeds,
    decide_commit_seed,
    decide_reveal,
    decide_withhold,
    reveal_window_over,
)
from service.domain.table_events import TableClosedEvent, TableEventUnion, TableOpened
from service.domain.tables import (
    TableState,
    decide_contribute,
    decide_fill_with_bees,
    decide_join,
    decide_leave,
    decide_open,
    decide_play_again,
    decide_start,
    fold_table,
    should_start_when_full,
)
from service.domain.views import GameView, game_view
from service.store.log import DuplicateCommand
from service.store.rows import ListedTable, LobbyListing, Reach
from service.usecases.bee_threads import decide_with_bees
from service.usecases.context import Context, stream
from service.usecases.deals import Deals
from service.usecases.errors import Conflict, Forbidden
from service.usecases.identity import Player
from service.usecases.money import Hold, Money
from service.usecases.repository import Repository
from service.usecases.retry import STALE, Stale, StreamTurns, until_applied
from service.usecases.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class TableSeen:
    """A table as one caller may see it (what every table use case answers): the table, the
    caller's seat at it and the seed they contributed to its next game, and their view of its
    current game, only if they were dealt into it (never another's hand)."""

    table: TableState
    you: int | None
    your_seed: str | None
    game: GameView | None


# --- the changes at a table, as this use case takes them --------------------------------------


@dataclass(frozen=True)
class Join:
    """Take the next free seat; `hold`: the stake the caller's wallet already holds for it."""

    seed: str | None
    hold: Hold | None = None


@dataclass(frozen=True)
class Start:
    seed: str | None


@dataclass(frozen=True)
class FillWithBees:
    seed: str | None
    level: BeeLevel


@dataclass(frozen=True)
class PlayAgain:
    seed: str | None


@dataclass(frozen=True)
class ContributeSeed:
    seed: str


@dataclass(frozen=True)
class CommitSeed:
    seed_hash: str


@dataclass(frozen=True)
class RevealSeed:
    seed: str


@dataclass(frozen=True)
class Leave:
    pass


TableChange = (
    Join | Start | FillWithBees | PlayAgain | ContributeSeed | CommitSeed | RevealSeed | Leave
)


@dataclass(frozen=True, kw_only=True)
class TableDecision:
    """What a change decides on the table as loaded: its table events, and what they set off."""

    events: Sequence[TableEventUnion]
    cause: str
    deal: bool = False  # deal the prepared game to the seats
    game_change: tuple[GameState, list[Event]] | None = None  # a person leaving mid-game
    hold: Hold | None = None  # a buy-in the caller's wallet holds, for the table to take
    leaving: str | None = None  # a person leaving: a stake they paid in goes back


@dataclass(frozen=True)
class Listed:
    """A lobby row, whether its table is rated, and the average rating (points) of the
    people with accounts seated there (None: nobody with an account)."""

    listed: ListedTable
    rated: bool
    average_rating: int | None

    @property
    def listing(self) -> LobbyListing:
        return self.listed.listing

    @property
    def opened_at(self) -> datetime:
        return self.listed.opened_at


class Tables:
    def __init__(
        self, ctx: Context, repository: Repository, deals: Deals, money: Money, turns: StreamTurns
    ) -> None:
        self.ctx = ctx
        self.repository = repository
        self.deals = deals
        self.money = money
        self.turns = turns

    # --- opening ------------------------------------------------------------------------------

    async def create_solo_table(
        self,
        player: Player,
        players: int,
        *,
        deal: bool = True,
        level: BeeLevel = DEFAULT_LEVEL,
    ) -> TableSeen:
        """A solo table (seed §8): the caller in seat 1, bee players of `level` in every other
        seat, in the seed's order. Its first game is dealt at once; or, with `deal=False`, only
        prepared (its commitment published) and dealt when the player starts it, with their
        seed if they give one (docs/fairness.md). Nothing is paid or recorded."""
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise rule_errors.InvalidSeats(f"A table has {MIN_PLAYERS} to {MAX_PLAYERS} seats.")
        seats = (
            SeatInfo(seat=1, name=player.name, kind="person", player_id=player.player_id),
            *(
                SeatInfo(seat=i + 2, name=BEE_NAMES[i], kind="bee", level=level)
                for i in range(players - 1)
            ),
        )
        opened = TableOpened(
            table_id=str(uuid.uuid4()),
            mode="solo",
            host=player.player_id,
            seats=seats,
            capacity=players,
        )
        return await self._open(player, TableDecision(events=[opened], cause="open", deal=deal))

    async def create_table(
        self,
        player: Player,
        capacity: int,
        stake: int,
        clock: ClockSettings | None,
        *,
        rated: bool = False,
        table_id: str | None = None,
    ) -> TableSeen:
        """An online table with the caller as host in seat 1 (their buy-in held, if any), up
        to `MAX_OPEN_TABLES` hosted at once. One player's openings take turns on an instance,
        so a burst cannot slip past the count (across instances it can by one per instance)."""
        table_id = table_id or str(uuid.uuid4())  # Play now names it before opening it
        async with self.turns.turn(f"host-{player.player_id}"):
            opened = await self._decide_open(player, table_id, capacity, stake, clock, rated)
            hold = await self._hold(player, table_id, stake)
            return await self._open(player, TableDecision(events=opened, cause="open", hold=hold))

    async def check_open(self, player: Player, capacity: int, stake: int, rated: bool) -> None:
        """Raise the refusal opening such a table would meet now (the cap on tables hosted, an
        account for a buy-in, the coins for it), changing nothing: Play now asks before it
        names a table it may not be able to open."""
        await self._decide_open(player, str(uuid.uuid4()), capacity, stake, None, rated)
        if stake > 0:
            await self.money.check_hold(player, stake)

    async def _decide_open(
        self,
        player: Player,
        table_id: str,
        capacity: int,
        stake: int,
        clock: ClockSettings | None,
        rated: bool,
    ) -> list[TableEventUnion]:
        hosting = await self.ctx.ports.lobby.hosting(player.player_id)
        return decide_open(
            table_id,
            player.player_id,
            player.name,
            capacity,
            stake,
            clock,
            registered=player.registered,
            hosting=hosting,
            rated=rated,
        )

    # --- changes at a table -------------------------------------------------------------------

    async def join_table(self, player: Player, table_id: str, seed: str | None) -> TableSeen:
        """Sit down. At a buy-in table before its first game the wallet holds the stake first
        (refused there if short), so the rules are asked on the table as loaded before anything
        is held: a join they refuse holds nothing."""
        hold = None
        table = await self.repository.table(table_id)
        decide_join(table, player.player_id, player.name, registered=player.registered)
        if table.holds_stakes:
            hold = await self._hold(player, table_id, table.stake)
        try:
            return await self._change(player, table_id, Join(seed, hold))
        except (Refused, Conflict):
            if hold is not None:  # the seat was refused after all: the stake goes back
                await self.money.give_back(hold, actor=player.player_id)
            raise

    async def start_game(self, player: Player, table_id: str, seed: str | None) -> TableSeen:
        return await self._change(player, table_id, Start(seed))

    async def fill_with_bees(
        self, player: Player, table_id: str, seed: str | None, level: BeeLevel = DEFAULT_LEVEL
    ) -> TableSeen:
        return await self._change(player, table_id, FillWithBees(seed, level))

    async def play_again(self, player: Player, table_id: str, seed: str | None) -> TableSeen:
        return await self._change(player, table_id, PlayAgain(seed))

    async def contribute_seed(self, player: Player, table_id: str, seed: str) -> TableSeen:
        return await self._change(player, table_id, ContributeSeed(seed))

    async def commit_seed(self, player: Player, table_id: str, seed_hash: str) -> TableSeen:
        """Commit to a seed by its hash (`fairness.seed_commitment`), to reveal once seeds
        close: nobody, the server included, learns it before every seat is bound."""
        return await self._change(player, table_id, CommitSeed(seed_hash))

    async def reveal_seed(self, player: Player, table_id: str, seed: str) -> TableSeen:
        """Reveal a committed seed after seeds closed; the last reveal deals the game."""
        return await self._change(player, table_id, RevealSeed(seed))

    async def leave_table(self, player: Player, table_id: str) -> TableSeen:
        """Leave (seed §9 "Leaving"): mid-game the seat stops picking and its stings stop
        counting; before the first deal of a buy-in table the stake comes back."""
        return await self._change(player, table_id, Leave())

    # --- reading ------------------------------------------------------------------------------

    async def get_table(self, player: Player, table_id: str) -> TableSeen:
        table = await self.repository.table(table_id)
        if table.mode == "solo":
            require_seated(table, player)
        state = await self.repository.game(table.current_game) if table.current_game else None
        return self._view(table, state, player)

    async def list_tables(
        self,
        *,
        stake: str,
        has_free_seat: bool,
        limit: int,
        offset: int,
        reach: Reach | None = None,
    ) -> list[Listed]:
        """The lobby: online tables not closed, newest first; `stake` "any", "free" or
        "buy_in"; `has_free_seat`: only those with a seat left. Each with whether it is rated
        and the average rating of the people with accounts seated there (from the table and
        the standings: one read for every person of the page). With `reach` (on Citus, a
        worker away): the tables of the shards that answer, each average of the people whose
        records answer; what was left out is noted in it."""
        listed = await self.ctx.ports.lobby.page(stake, has_free_seat, limit, offset, reach)
        tables = [await self.repository.table(t.listing.table_id) for t in listed]
        people = {s.player_id for t in tables for s in t.people if s.player_id is not None}
        ratings = await self.ctx.ports.standings.ratings(sorted(people), reach)
        out = []
        for entry, table in zip(listed, tables, strict=True):
            seated = [ratings[s.player_id] for s in table.people if s.player_id in ratings]
            average = round(sum(r.points for r in seated) / len(seated)) if seated else None
            out.append(Listed(listed=entry, rated=table.rated, average_rating=average))
        return out

    # --- how a change is committed ------------------------------------------------------------

    async def _change(self, player: Player, table_id: str, change: TableChange) -> TableSeen:
        """Load the table, decide `change` on it, commit; decided again on the fresh table
        whenever someone else changed it (or its game) first (service.usecases.retry)."""
        async with self.turns.turn(stream("table", table_id)):
            attempt = partial(self._attempt, player, table_id, change)
            return await until_applied(attempt, what="table")

    async def _attempt(
        self, player: Player, table_id: str, change: TableChange
    ) -> TableSeen | Stale:
        table = await self.repository.table(table_id)
        committed = await self._commit(player, table, await self._decide(table, player, change))
        if isinstance(committed, Stale):
            return committed
        new_table, game = committed
        if game is None and new_table.current_game is not None:
            game = await self.repository.game(new_table.current_game)
        return self._view(new_table, game, player)

    async def _decide(
        self, table: TableState, player: Player, change: TableChange
    ) -> TableDecision:
        """What `change` decides on the table as loaded (the table's rules refuse it here)."""
        me = player.player_id
        match change:
            case Join(seed=seed, hold=hold):
                joined = decide_join(table, me, player.name, registered=player.registered)
                events = joined + _seed(fold_table(joined, table), player, seed)
                full = should_start_when_full(fold_table(events, table))
                return TableDecision(events=events, cause="join", deal=full, hold=hold)
            case Start(seed=seed):
                decide_start(table, me)
                return TableDecision(events=_seed(table, player, seed), cause="start", deal=True)
            case FillWithBees(seed=seed, level=level):
                bees = decide_fill_with_bees(table, me, BEE_NAMES, level)
                events = bees + _seed(table, player, seed)
                return TableDecision(events=events, cause="fill_with_bees", deal=True)
            case PlayAgain(seed=seed):
                decide_play_again(table, me)
                return TableDecision(
                    events=_seed(table, player, seed), cause="play_again", deal=True
                )
            case ContributeSeed(seed=seed):
                contributed = decide_contribute(table, me, seed)
                return TableDecision(events=contributed, cause="contribute_seed")
            case CommitSeed(seed_hash=seed_hash):
                committed = decide_commit_seed(table, me, seed_hash)
                return TableDecision(events=committed, cause="commit_seed")
            case RevealSeed(seed=seed):
                revealed = decide_reveal(table, me, seed)
                return TableDecision(events=revealed, cause="reveal_seed", deal=True)
            case Leave():
                left = decide_leave(table, me)
                game_change = await self._leave_game(table, player)
                return TableDecision(
                    events=left, cause="leave", game_change=game_change, leaving=me
                )
        raise AssertionError(f"unknown change {change!r}")  # pragma: no cover

    async def _leave_game(
        self, table: TableState, player: Player
    ) -> tuple[GameState, list[Event]] | None:
        """What leaving does to the table's game: mid-game the seat leaves it too (with what
        follows: a reveal, a cheapest stem, the last person's win); else nothing."""
        if not table.playing or table.current_game is None:
            return None
        game = await self.repository.game(table.current_game)
        seat = seat_of(game, player.player_id)
        if seat is None or not game.seat(seat).playing or game.phase == "ended":
            return None
        leave = LeaveGame(seat=seat, at=self.ctx.clock())
        seeds = await self.repository.bee_seeds(game)
        return game, (await decide_with_bees(game, leave, seeds))[1]

    async def _open(self, player: Player, decided: TableDecision) -> TableSeen:
        """Commit a new table (its first game prepared in the same unit of work, so never
        stale) and answer it."""
        committed = await self._commit(player, TableState(), decided)
        assert not isinstance(committed, Stale), "a new table's game was prepared just now"
        table, game = committed
        return self._view(table, game, player)

    async def _commit(
        self, player: Player, before: TableState, decided: TableDecision
    ) -> tuple[TableState, GameState | None] | Stale:
        """Append the table events and the games they prepare, start or change, in one unit
        of work. A new table gets its first game prepared (its deal committed); a game that a
        table change ended (the last person left) is concluded; closing comes last. `Stale`,
        appending nothing, when the game to deal was dealt meanwhile (by another instance)."""
        uow = UnitOfWork(self.repository, before)
        closing = [e for e in decided.events if isinstance(e, TableClosedEvent)]
        for event in decided.events:
            if not isinstance(event, TableClosedEvent):
                uow.table_event(event)
        if before.version == 0:
            await self.deals.prepare(uow)
        if decided.hold is not None:
            self.money.take_buy_in(uow, decided.hold)
        if decided.leaving is not None:
            self.money.return_stake(uow, decided.leaving)
        if decided.game_change is not None:
            game_before, game_events = decided.game_change
            uow.game_events(game_before, game_events)
            await self.deals.conclude(uow, game_before.game_id, prepare=not closing)
        for event in closing:
            uow.table_event(event)
        if decided.deal and not await self._deal_once_seeded(uow):
            return STALE
        metadata = {"actor": player.player_id, "causation": decided.cause}
        try:
            # A sit-down with a hold is appended under the hold's command id, which the hold's
            # give-back also uses: if that got there first, the hold is gone.
            await uow.commit(metadata, command=decided.hold.command if decided.hold else None)
        except DuplicateCommand:
            raise Conflict(
                "Your buy-in hold expired before you sat down; it is back in your wallet. "
                "Try again."
            ) from None
        await self.money.deliver(uow.transfers)
        return uow.table, uow.current_game()

    async def _hold(self, player: Player, table_id: str, stake: int) -> Hold | None:
        return await self.money.hold(player, table_id, stake) if stake > 0 else None

    async def _deal_once_seeded(self, uow: UnitOfWork) -> bool:
        """Deal, unless a committed seed is still owed (docs/fairness.md, "Seeds: commit, then
        reveal"): then close seeds and wait. Asked again once the reveal window is over, the
        seats still owing are recorded withheld and the game is dealt. False when the game
        was dealt meanwhile (`Deals.deal`)."""
        now = self.ctx.clock()
        for event in decide_close_seeds(uow.table, now):
            uow.table_event(event)
        if reveal_window_over(uow.table, now):
            for event in decide_withhold(uow.table):
                uow.table_event(event)
        return await self.deals.deal(uow) if uow.table.ready_to_deal else True

    def _view(self, table: TableState, state: GameState | None, player: Player) -> TableSeen:
        game = None
        if state is not None:
            game_seat = seat_of(state, player.player_id)
            # Only those dealt into the game see it from the table; never another's hand.
            game = game_view(state, game_seat, self.ctx.clock()) if game_seat is not None else None
        you, your_seed = table.seat_of(player.player_id), table.seed_of(player.player_id)
        return TableSeen(table, you, your_seed, game)


def require_seated(table: TableState, player: Player) -> int:
    seat = table.seat_of(player.player_id)
    if seat is None:
        raise Forbidden("You do not sit at this table.")
    return seat


def _seed(table: TableState, player: Player, seed: str | None) -> list[TableEventUnion]:
    return decide_contribute(table, player.player_id, seed) if seed is not None else []
