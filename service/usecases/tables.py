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
from datetime import datetime

import msgspec

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
    TableMode,
    TableOpened,
    TableState,
    TableStatus,
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
from service.usecases.bee_threads import decide_with_bees
from service.usecases.context import Context, stream
from service.usecases.deals import Deals
from service.usecases.errors import Conflict, Forbidden
from service.usecases.identity import Player
from service.usecases.money import Hold, Money
from service.usecases.repository import Repository
from service.usecases.retry import StreamTurns, until_applied
from service.usecases.unit_of_work import UnitOfWork


class NextGame(msgspec.Struct, frozen=True, kw_only=True):
    """The table's next game, prepared when the last one ended.

    Attributes:
        game_id: The next game's id.
        commitment: SHA-256, hex.
        seeds: How many seeds were contributed.
        committed: How many people committed to a seed they have not revealed yet.
        seeds_closed: The deal waits for those reveals (docs/fairness.md)
    """

    game_id: str
    commitment: str  # SHA-256, hex
    seeds: int  # how many people have contributed a seed so far
    committed: int = 0  # how many people committed to a seed they have not revealed yet
    seeds_closed: bool = False  # the deal waits for those reveals (docs/fairness.md)


class TableView(msgspec.Struct, frozen=True, kw_only=True):
    """A table as the caller sees it, with their view of its current game.

    Attributes:
        table_id: The table's id.
        mode: `solo` or `online`.
        status: Open (waiting for players), playing, between_games, closed.
        host: The host's player id.
        capacity: How many seats the table has, 2 to 8.
        stake: Coins each person puts in; 0 = a free table.
        clock: The turn clock of this table's games (None: untimed)
        seats: Who sits where, seat 1 first.
        you: Your seat, if you sit at the table.
        games: Every game dealt here, oldest first; the last is the current one. A new game (the
            table filled, the host started, or play again) appears here and as `game_opened` on the
            table's event stream.
        game: Your view of the current game, if you were dealt into it.
        next_game: The game that will be dealt next and the server's commitment to its deal,
            published before anyone contributes a seed (docs/fairness.md); null while a game is
            being played.
        your_seed: The seed you contributed to the next game, if any.
    """

    table_id: str
    mode: TableMode
    status: TableStatus  # open (waiting for players), playing, between_games, closed
    host: str  # the host's player id
    capacity: int
    stake: int  # coins each person puts in; 0 = a free table
    clock: ClockSettings | None  # the turn clock of this table's games (None: untimed)
    seats: tuple[SeatInfo, ...]  # in seat order; a game dealt now numbers its seats the same
    you: int | None  # your seat at the table, if you sit at it
    # Every game dealt here, oldest first; the last is the current one. A new game (the table
    # filled, the host started, or play again) appears here and as `game_opened` on the
    # table's event stream.
    games: tuple[str, ...]
    game: GameView | None  # your view of the current game, if you were dealt into it
    # The game that will be dealt next and the server's commitment to its deal, published
    # before anyone contributes a seed (docs/fairness.md); null while a game is being played.
    next_game: NextGame | None = None
    your_seed: str | None = None  # the seed you contributed to the next game, if any


class LobbyEntry(msgspec.Struct, frozen=True, kw_only=True):
    """An open online table, as the lobby lists it.

    Attributes:
        table_id: The table's id.
        host_name: The host's name.
        seats_taken: Seats taken (people and bee players).
        people: People seated.
        capacity: How many seats the table has, 2 to 8.
        stake: Coins each person puts in; 0 for a free table.
        status: `open`, `playing` or `between_games`.
        opened_at: When the table opened (UTC).
        bee_levels: Each bee seat's level, in seat order.
    """

    table_id: str
    host_name: str
    seats_taken: int
    people: int
    capacity: int
    stake: int
    status: TableStatus
    opened_at: datetime
    bee_levels: tuple[BeeLevel, ...] = ()  # each bee seat's level, in seat order


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
    ) -> TableView:
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
    ) -> TableView:
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

    async def join_table(self, player: Player, table_id: str, seed: str | None) -> TableView:
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

    async def start_game(self, player: Player, table_id: str, seed: str | None) -> TableView:
        async def change(table: TableState) -> Decided:
            decide_start(table, player.player_id)
            return Decided(events=_seed(table, player, seed), cause="start", deal=True)

        return await self._change(player, table_id, change)

    async def fill_with_bees(
        self, player: Player, table_id: str, seed: str | None, level: BeeLevel = DEFAULT_LEVEL
    ) -> TableView:
        async def change(table: TableState) -> Decided:
            bees = decide_fill_with_bees(table, player.player_id, BEE_NAMES, level)
            events = bees + _seed(table, player, seed)
            return Decided(events=events, cause="fill_with_bees", deal=True)

        return await self._change(player, table_id, change)

    async def play_again(self, player: Player, table_id: str, seed: str | None) -> TableView:
        async def change(table: TableState) -> Decided:
            decide_play_again(table, player.player_id)
            return Decided(events=_seed(table, player, seed), cause="play_again", deal=True)

        return await self._change(player, table_id, change)

    async def contribute_seed(self, player: Player, table_id: str, seed: str) -> TableView:
        async def change(table: TableState) -> Decided:
            contributed = decide_contribute(table, player.player_id, seed)
            return Decided(events=contributed, cause="contribute_seed")

        return await self._change(player, table_id, change)

    async def commit_seed(self, player: Player, table_id: str, seed_hash: str) -> TableView:
        """Commit to a seed by its hash (`fairness.seed_commitment`), to reveal once seeds
        close: nobody, the server included, learns it before every seat is bound."""

        async def change(table: TableState) -> Decided:
            committed = decide_commit_seed(table, player.player_id, seed_hash)
            return Decided(events=committed, cause="commit_seed")

        return await self._change(player, table_id, change)

    async def reveal_seed(self, player: Player, table_id: str, seed: str) -> TableView:
        """Reveal a committed seed after seeds closed; the last reveal deals the game."""

        async def change(table: TableState) -> Decided:
            revealed = decide_reveal(table, player.player_id, seed)
            return Decided(events=revealed, cause="reveal_seed", deal=True)

        return await self._change(player, table_id, change)

    async def leave_table(self, player: Player, table_id: str) -> TableView:
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

    async def get_table(self, player: Player, table_id: str) -> TableView:
        table = await self.repository.table(table_id)
        if table.mode == "solo":
            require_seated(table, player)
        state = await self.repository.game(table.current_game) if table.current_game else None
        return self._view(table, state, player)

    async def list_tables(
        self, *, stake: str, has_free_seat: bool, limit: int, offset: int
    ) -> list[LobbyEntry]:
        listed = await self.ctx.ports.lobby.page(stake, has_free_seat, limit, offset)
        return [
            LobbyEntry(
                table_id=t.listing.table_id,
                host_name=t.listing.host_name,
                seats_taken=t.listing.seats_taken,
                people=t.listing.people,
                capacity=t.listing.capacity,
                stake=t.listing.stake,
                status=t.listing.status,
                opened_at=t.opened_at,
                bee_levels=t.listing.bee_levels,
            )
            for t in listed
        ]

    # --- how a change is committed ------------------------------------------------------------

    async def _change(self, player: Player, table_id: str, change: Change) -> TableView:
        """Load the table, decide, commit; decided again on the fresh table whenever someone
        else changed it (or its game) first (service.usecases.retry)."""

        async def attempt() -> TableView:
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

    def _view(self, table: TableState, state: GameState | None, player: Player) -> TableView:
        game = None
        if state is not None:
            game_seat = seat_of(state, player.player_id)
            # Only those dealt into the game see it from the table; never another's hand.
            game = game_view(state, game_seat, self.ctx.clock()) if game_seat is not None else None
        return TableView(
            table_id=table.table_id,
            mode=table.mode,
            status=table.status,
            host=table.host,
            capacity=table.capacity,
            stake=table.stake,
            clock=table.clock,
            seats=table.seat_infos(),
            you=table.seat_of(player.player_id),
            games=table.games,
            game=game,
            next_game=(
                NextGame(
                    game_id=table.next_game,
                    commitment=table.next_commitment,
                    seeds=len(table.seeds),
                    committed=len(table.seed_hashes),
                    seeds_closed=table.seeds_closed,
                )
                if table.next_game is not None and table.next_commitment is not None
                else None
            ),
            your_seed=table.seed_of(player.player_id),
        )


def require_seated(table: TableState, player: Player) -> int:
    seat = table.seat_of(player.player_id)
    if seat is None:
        raise Forbidden("You do not sit at this table.")
    return seat


def _seed(table: TableState, player: Player, seed: str | None) -> list[TableEventUnion]:
    return decide_contribute(table, player.player_id, seed) if seed is not None else []
