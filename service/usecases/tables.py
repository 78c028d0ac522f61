"""Tables and seats (seed §8 "Playing on your own", §9 "Playing online"): open a solo or an
online table, join, start, fill with bees, play again, contribute a seed, leave, and the lobby.

`Tables` is one class on purpose: every change at a table goes through the same load, decide
and commit (`_change`, `_commit`), and reads best beside it.

The table's rules are in `service.domain.tables`; this module loads the table, asks them, and
commits the table events with whatever they set off (a deal, a stake, a game left) in one
unit of work. Stream `table-<id>`; its lobby listing and members are written with it. Coins never
ride in that unit: a buy-in is held in the wallet before the table is asked, and what the
table owes wallets is delivered after it commits (`service.usecases.money`)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

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
from service.domain.tables import (
    TableClosedEvent,
    TableEventUnion,
    TableOpened,
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
from service.store.events import DuplicateCommand
from service.store.rows import ListedTable
from service.usecases.bee_threads import decide_with_bees
from service.usecases.context import Context, stream
from service.usecases.deals import Deals
from service.usecases.errors import Conflict, Forbidden
from service.usecases.identity import Player
from service.usecases.money import Hold, Money
from service.usecases.repository import Repository
from service.usecases.retry import StreamTurns, until_applied
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


# What a change decides on the table as loaded: its table events, and what they set off.
Change = Callable[[TableState], Awaitable["Decided"]]


@dataclass(frozen=True, kw_only=True)
class Decided:
    events: Sequence[TableEventUnion]
    cause: str
    deal: bool = False  # deal the prepared game to the seats
    game_change: tuple[GameState, list[Event]] | None = None  # a person leaving mid-game
    hold: Hold | None = None  # a buy-in the caller's wallet holds, for the table to take
    leaving: str | None = None  # a person leaving: a stake they paid in goes back


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
        decided = Decided(events=[opened], cause="open", deal=deal)
        table, game = await self._commit(player, TableState(), decided)
        return self._view(table, game, player)

    async def create_table(
        self, player: Player, capacity: int, stake: int, clock: ClockSettings | None
    ) -> TableSeen:
        """An online table with the caller as host in seat 1 (their buy-in held, if any), up
        to `MAX_OPEN_TABLES` hosted at once. One player's openings take turns on an instance,
        so a burst cannot slip past the count (across instances it can by one per instance)."""
        table_id = str(uuid.uuid4())
        async with self.turns.turn(f"host-{player.player_id}"):
            hosting = await self.ctx.ports.lobby.hosting(player.player_id)
            opened = decide_open(
                table_id,
                player.player_id,
                player.name,
                capacity,
                stake,
                clock,
                registered=player.registered,
                hosting=hosting,
            )

            hold = await self._hold(player, table_id, stake)
            decided = Decided(events=opened, cause="open", hold=hold)
            table, game = await self._commit(player, TableState(), decided)
        return self._view(table, game, player)

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

        async def change(table: TableState) -> Decided:
            joined = decide_join(table, player.player_id, player.name, registered=player.registered)
            events = joined + _seed(fold_table(joined, table), player, seed)
            full = should_start_when_full(fold_table(events, table))
            return Decided(events=events, cause="join", deal=full, hold=hold)

        try:
            return await self._change(player, table_id, change)
        except (Refused, Conflict):
            if hold is not None:  # the seat was refused after all: the stake goes back
                await self.money.give_back(hold, actor=player.player_id)
            raise

    async def start_game(self, player: Player, table_id: str, seed: str | None) -> TableSeen:
        async def change(table: TableState) -> Decided:
            decide_start(table, player.player_id)
            return Decided(events=_seed(table, player, seed), cause="start", deal=True)

        return await self._change(player, table_id, change)

    async def fill_with_bees(
        self, player: Player, table_id: str, seed: str | None, level: BeeLevel = DEFAULT_LEVEL
    ) -> TableSeen:
        async def change(table: TableState) -> Decided:
            bees = decide_fill_with_bees(table, player.player_id, BEE_NAMES, level)
            events = bees + _seed(table, player, seed)
            return Decided(events=events, cause="fill_with_bees", deal=True)

        return await self._change(player, table_id, change)

    async def play_again(self, player: Player, table_id: str, seed: str | None) -> TableSeen:
        async def change(table: TableState) -> Decided:
            decide_play_again(table, player.player_id)
            return Decided(events=_seed(table, player, seed), cause="play_again", deal=True)

        return await self._change(player, table_id, change)

    async def contribute_seed(self, player: Player, table_id: str, seed: str) -> TableSeen:
        async def change(table: TableState) -> Decided:
            contributed = decide_contribute(table, player.player_id, seed)
            return Decided(events=contributed, cause="contribute_seed")

        return await self._change(player, table_id, change)

    async def commit_seed(self, player: Player, table_id: str, seed_hash: str) -> TableSeen:
        """Commit to a seed by its hash (`fairness.seed_commitment`), to reveal once seeds
        close: nobody, the server included, learns it before every seat is bound."""

        async def change(table: TableState) -> Decided:
            committed = decide_commit_seed(table, player.player_id, seed_hash)
            return Decided(events=committed, cause="commit_seed")

        return await self._change(player, table_id, change)

    async def reveal_seed(self, player: Player, table_id: str, seed: str) -> TableSeen:
        """Reveal a committed seed after seeds closed; the last reveal deals the game."""

        async def change(table: TableState) -> Decided:
            revealed = decide_reveal(table, player.player_id, seed)
            return Decided(events=revealed, cause="reveal_seed", deal=True)

        return await self._change(player, table_id, change)

    async def leave_table(self, player: Player, table_id: str) -> TableSeen:
        """Leave (seed §9 "Leaving"): mid-game the seat stops picking and its stings stop
        counting; before the first deal of a buy-in table the stake comes back."""

        async def change(table: TableState) -> Decided:
            left = decide_leave(table, player.player_id)
            game_change = None
            if table.playing and table.current_game is not None:
                game = await self.repository.game(table.current_game)
                seat = seat_of(game, player.player_id)
                if seat is not None and game.seat(seat).playing and game.phase != "ended":
                    leave = LeaveGame(seat=seat, at=self.ctx.clock())
                    seeds = await self.repository.bee_seeds(game)
                    game_change = (game, (await decide_with_bees(game, leave, seeds))[1])

            return Decided(
                events=left, cause="leave", game_change=game_change, leaving=player.player_id
            )

        return await self._change(player, table_id, change)

    # --- reading ------------------------------------------------------------------------------

    async def get_table(self, player: Player, table_id: str) -> TableSeen:
        table = await self.repository.table(table_id)
        if table.mode == "solo":
            require_seated(table, player)
        state = await self.repository.game(table.current_game) if table.current_game else None
        return self._view(table, state, player)

    async def list_tables(
        self, *, stake: str, has_free_seat: bool, limit: int, offset: int
    ) -> list[ListedTable]:
        """The lobby: online tables not closed, newest first; `stake` "any", "free" or
        "buy_in"; `has_free_seat`: only those with a seat left."""
        return await self.ctx.ports.lobby.page(stake, has_free_seat, limit, offset)

    # --- how a change is committed ------------------------------------------------------------

    async def _change(self, player: Player, table_id: str, change: Change) -> TableSeen:
        """Load the table, decide, commit; decided again on the fresh table whenever someone
        else changed it (or its game) first (service.usecases.retry)."""

        async def attempt() -> TableSeen:
            table = await self.repository.table(table_id)
            new_table, game = await self._commit(player, table, await change(table))
            if game is None and new_table.current_game is not None:
                game = await self.repository.game(new_table.current_game)
            return self._view(new_table, game, player)

        async with self.turns.turn(stream("table", table_id)):
            return await until_applied(attempt, what="table")

    async def _commit(
        self, player: Player, before: TableState, decided: Decided
    ) -> tuple[TableState, GameState | None]:
        """Append the table events and the games they prepare, start or change, in one unit
        of work. A new table gets its first game prepared (its deal committed); a game that a
        table change ended (the last person left) is concluded; closing comes last."""
        uow = UnitOfWork(self.repository, before)
        closing = [e for e in decided.events if isinstance(e, TableClosedEvent)]
        for event in decided.events:
            if not isinstance(event, TableClosedEvent):
                uow.table_event(event)
        if before.version == 0:
            self.deals.prepare(uow)
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
        if decided.deal:
            await self._deal_once_seeded(uow)
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

    async def _deal_once_seeded(self, uow: UnitOfWork) -> None:
        """Deal, unless a committed seed is still owed (docs/fairness.md, "Seeds: commit, then
        reveal"): then close seeds and wait. Asked again once the reveal window is over, the
        seats still owing are recorded withheld and the game is dealt."""
        now = self.ctx.clock()
        for event in decide_close_seeds(uow.table, now):
            uow.table_event(event)
        if reveal_window_over(uow.table, now):
            for event in decide_withhold(uow.table):
                uow.table_event(event)
        if uow.table.ready_to_deal:
            await self.deals.deal(uow)

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
