"""Coins at the table (seed §9 "Buy-in", "Coins, XP and badges"): a buy-in is held when a person
sits down before the table's first game, goes into the pot at that game's deal, and the pot is
paid to the fewest stings (or back to every payer when the game is abandoned). Play again has
no buy-in, so sitting down between games holds nothing; every hold ends in the pot or back in
the wallet. Finishing an online game earns coins and XP for account holders, the coins up to
a daily cap per account (`DAILY_REWARD_COINS`).

No transaction writes both a table's streams and a wallet's (docs/scaling.md, "Buy-ins across
shards"): under Citus they live on different shards.

* **Sitting down** is two steps. The wallet holds the stake first (`hold`, refused there when
  the balance is short), then the table takes it (`take_buy_in`, in the table's own append,
  whose command id is `buy-in:<hold id>`). A hold the table did not take (the seat was refused
  meanwhile, or the sit-down never finished) is given back by `give_back`, which appends the
  table's `buy_in_returned` under the *same* command id: of a late sit-down and the give-back,
  exactly one is ever appended, so a hold is never both seated and released.
* **Everything else the table decides** about coins (a stake back as its person leaves, the
  stakes into the pot, the pot paid, a reward) is a transfer (`service.domain.transfers`) in
  the table's outbox, written with the table event and delivered to the wallet by `deliver`
  right after the commit, with the transfer id as the wallet append's command id. A delivery
  cut short (a crash, the database away) is finished by `relay_due`, which every instance runs
  (`run`), as is a sit-down cut short between its two steps (`expire_holds`).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Sequence
from datetime import UTC, timedelta
from functools import partial
from typing import Literal

import structlog

from service.domain.ledger import StakeReleased, decide_hold, decode_wallet_event, split_pot
from service.domain.players import GameRecorded, game_records
from service.domain.rules.engine import GameState
from service.domain.table_events import (
    BuyInHeld,
    BuyInReturned,
    PotFormed,
    PotSettled,
    Stake,
    decode_table_event,
)
from service.domain.tables import decide_buy_in, decide_return_buy_in
from service.domain.transfers import (
    CommitStake,
    GrantReward,
    PayPot,
    RateGame,
    ReleaseStake,
    TransferUnion,
    decide_delivery,
    reward_transfer_id,
)
from service.domain.views import PotView, RewardView, pot_view, reward_view
from service.store.log import DuplicateCommand
from service.usecases.context import Context, stream
from service.usecases.identity import Player
from service.usecases.ratings import field_of, rate, rating_transfers
from service.usecases.repository import Repository
from service.usecases.retry import StreamTurns, until_applied
from service.usecases.unit_of_work import UnitOfWork

log = structlog.get_logger(__name__)

# The relay: transfers not delivered `RELAY_AFTER` after they were written (the request that
# wrote them delivers them itself, so these are the ones a crash or an outage cut short),
# claimed so that each goes to one instance at a time.
RELAY_AFTER = timedelta(seconds=2)
# How often each instance looks: for transfers to relay, holds to expire, legacy holds.
RELAY_EVERY, EXPIRE_EVERY, LEGACY_SWEEP_EVERY = 2.0, 10.0, 300.0  # seconds


def hold_command(table_id: str, hold_id: str) -> tuple[str, str]:
    """The command id under which a table decides a hold's fate: taken or given back, once."""
    return stream("table", table_id), f"buy-in:{hold_id}"


class Hold:
    """A stake a wallet holds for a table, as a sit-down's first step."""

    def __init__(self, player_id: str, table_id: str, hold_id: str, amount: int) -> None:
        self.player_id = player_id
        self.table_id = table_id
        self.hold_id = hold_id
        self.amount = amount

    @property
    def command(self) -> tuple[str, str]:
        return hold_command(self.table_id, self.hold_id)


class Money:
    def __init__(self, ctx: Context, repository: Repository, turns: StreamTurns) -> None:
        self.ctx = ctx
        self.repository = repository
        self.turns = turns
        self.outbox = ctx.ports.outbox
        self.holds = ctx.ports.holds
        self.accounts = ctx.ports.accounts

    # --- sitting down: the wallet holds, the table takes ---------------------------------------

    async def hold(self, player: Player, table_id: str, stake: int) -> Hold:
        """Hold `stake` in the caller's wallet for `table_id` (raises `InsufficientCoins`)."""
        hold = Hold(player.player_id, table_id, str(uuid.uuid4()), stake)
        async with self.turns.turn(stream("wallet", player.player_id)):
            await until_applied(partial(self._hold_once, hold), what="wallet")
        return hold

    async def check_hold(self, player: Player, stake: int) -> None:
        """Raise `InsufficientCoins` if the caller's wallet could not hold `stake` now."""
        wallet = await UnitOfWork(self.repository).wallet(player.player_id)
        decide_hold(wallet, "", stake, "")

    async def _hold_once(self, hold: Hold) -> None:
        """Load the wallet, decide the hold, append."""
        uow = UnitOfWork(self.repository)
        wallet = await uow.wallet(hold.player_id)
        events = decide_hold(wallet, hold.table_id, hold.amount, hold.hold_id)
        await uow.wallet_events(hold.player_id, events)
        await uow.commit({"actor": hold.player_id, "causation": "hold_stake"})

    def take_buy_in(self, uow: UnitOfWork, hold: Hold) -> None:
        """The table's side of a sit-down: count the held stake towards the pot, or (the table
        no longer takes buy-ins, or not from this person) give it back."""
        for event in decide_buy_in(uow.table, hold.player_id, hold.hold_id, hold.amount):
            self._table_money(uow, event)

    async def give_back(self, hold: Hold, *, actor: str) -> bool:
        """A hold its table never took: record it given back under the hold's command id, so a
        sit-down still on its way can no longer take it, and release it. False when the table
        had decided it already (taken it, or given it back before)."""
        async with self.turns.turn(stream("table", hold.table_id)):
            try:
                attempt = partial(self._give_back_once, hold, actor)
                transfers = await until_applied(attempt, what="table")
            except DuplicateCommand:
                return False
        await self.deliver(transfers)
        return True

    async def _give_back_once(self, hold: Hold, actor: str) -> list[TransferUnion]:
        """Load the table, give the hold back on it, append under the hold's command id
        (`DuplicateCommand` if the table decided it before); what the wallet is owed."""
        # Also a table whose opening was cut short after the hold: its stream then holds this
        # give-back only, which is no table (Repository.table).
        table = await self.repository.table(hold.table_id, unopened=True)
        uow = UnitOfWork(self.repository, table)
        returned = BuyInReturned(
            player_id=hold.player_id, hold_id=hold.hold_id, amount=hold.amount, reason="not_taken"
        )
        self._table_money(uow, returned)
        await uow.commit({"actor": actor, "causation": "give_back_hold"}, command=hold.command)
        return uow.transfers

    def return_stake(self, uow: UnitOfWork, player_id: str) -> None:
        """As `player_id` leaves `uow.table` before its first deal, their stake goes back."""
        for event in decide_return_buy_in(uow.table, player_id):
            self._table_money(uow, event)

    def _table_money(self, uow: UnitOfWork, event: BuyInHeld | BuyInReturned) -> None:
        uow.table_event(event)
        if isinstance(event, BuyInReturned):
            uow.transfer(
                ReleaseStake(
                    player_id=event.player_id,
                    table_id=uow.table.table_id,
                    hold_id=event.hold_id,
                    amount=event.amount,
                )
            )

    # --- the pot ------------------------------------------------------------------------------

    def form_pot(self, uow: UnitOfWork, game_id: str) -> None:
        """At a buy-in table's first deal, every stake the table took goes into the pot."""
        table = uow.table
        if not table.holds_stakes:
            return
        for buy_in in table.buy_ins:
            uow.transfer(
                CommitStake(
                    player_id=buy_in.player_id,
                    table_id=table.table_id,
                    hold_id=buy_in.hold_id,
                    game_id=game_id,
                    amount=buy_in.amount,
                )
            )
        stakes = tuple(Stake(player_id=b.player_id, amount=b.amount) for b in table.buy_ins)
        uow.table_event(PotFormed(game_id=game_id, stakes=stakes))

    def settle_pot(self, uow: UnitOfWork, game: GameState) -> None:
        """Pay the pot: to the winners (ties split it, remainders to the first in seat order),
        or back to every payer, leavers included, when the game was abandoned."""
        stakes = uow.table.pot
        if not stakes:
            return
        if game.end_reason == "abandoned":
            payouts = [(s.player_id, s.amount) for s in stakes]
            reason: Literal["won", "refund"] = "refund"
        else:
            winners = [
                pid for n in game.winners if (pid := game.seat(n).info.player_id) is not None
            ]
            payouts = split_pot(sum(s.amount for s in stakes), winners)
            reason = "won"
        for player_id, amount in payouts:
            uow.transfer(
                PayPot(
                    player_id=player_id,
                    table_id=uow.table.table_id,
                    game_id=game.game_id,
                    amount=amount,
                    reason=reason,
                )
            )
        uow.table_event(
            PotSettled(
                game_id=game.game_id,
                payouts=tuple(Stake(player_id=p, amount=a) for p, a in payouts),
                reason=reason,
            )
        )

    async def reward(self, uow: UnitOfWork, game: GameState) -> None:
        """Coins and XP for every person with an account who finished an online game (more
        for the winners; the coins up to the daily cap, counted on the day the game ended), and
        the game on their record; leavers and solo games earn nothing. At a rated table, every
        person with an account who played it, leavers too, is owed a rating change
        (`usecases.ratings`)."""
        if uow.table.mode != "online" or game.end_reason not in (
            "finished",
            "last_person_standing",
        ):
            return
        people = [s.info.player_id for s in game.seats if not s.is_bee and s.info.player_id]
        holders = await self.accounts.holders([p for p in people if p is not None])
        if uow.table.rated:
            field = await field_of(self.repository, game, holders)
            for transfer in rating_transfers(game, uow.table.table_id, field):
                uow.transfer(transfer)
        finishers = {s.info.player_id: s for s in game.seats if not s.is_bee and s.playing}
        holders = [pid for pid in holders if pid in finishers]
        day = self.ctx.clock().astimezone(UTC).date().isoformat()
        for player_id in holders:
            seat = finishers[player_id]
            uow.transfer(
                GrantReward(
                    player_id=player_id,
                    table_id=uow.table.table_id,
                    game_id=game.game_id,
                    won=seat.number in game.winners,
                    stings=seat.stings,
                    biggest_take=seat.biggest_take,
                    day=day,
                )
            )

    # --- what a game paid ----------------------------------------------------------------------

    async def paid(
        self, game: GameState, seat: int | None
    ) -> tuple[PotView | None, RewardView | None]:
        """What an ended online game paid: its pot seat by seat (public), and the reward of
        the person in `seat` (the caller's own seat: None for a spectator), each read from
        where it is decided. The pot is the table's (`pot_formed`, `pot_settled`). A reward is
        looked for in the outbox first, then on the record and in the wallet, so that one
        delivered between the two reads is found in the second and one on its way is
        `pending`, never missing."""
        if game.phase != "ended":
            return None, None
        table = await self.repository.table(game.table_id)
        if table.mode != "online":
            return None, None
        pot = await self._pot(game) if table.stake else None
        person = game.seat(seat).info.player_id if seat is not None else None
        if person is None:
            return pot, None
        owed = await self.outbox.owed(game.table_id, reward_transfer_id(game.game_id, person))
        records = game_records(
            (r.type, r.data) for r in await self.ctx.store.read_stream(stream("player", person))
        )
        wallet = [
            decode_wallet_event(r.data)
            for r in await self.ctx.store.read_stream(stream("wallet", person))
        ]
        return pot, reward_view(
            game.game_id, owed if isinstance(owed, GrantReward) else None, records, wallet
        )

    async def _pot(self, game: GameState) -> PotView | None:
        formed = settled = None
        for r in await self.ctx.store.read_stream(stream("table", game.table_id)):
            if r.type not in ("pot_formed", "pot_settled"):
                continue
            event = decode_table_event(r.data)
            if isinstance(event, PotFormed) and event.game_id == game.game_id:
                formed = event
            elif isinstance(event, PotSettled) and event.game_id == game.game_id:
                settled = event
        if formed is None or settled is None:
            return None  # a game without a buy-in (Play again), or one dealt before pots
        return pot_view(game, formed, settled)

    # --- delivery -----------------------------------------------------------------------------

    async def deliver(self, transfers: Sequence[TransferUnion]) -> None:
        """Deliver transfers a table just committed. One that fails stays in the outbox, for
        `relay_due`: the table's change is made, and the caller is not told otherwise."""
        for transfer in transfers:
            try:
                await self._deliver(transfer)
                await self.outbox.delivered(transfer)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning(
                    "transfer left for the relay",
                    transfer_id=transfer.transfer_id,
                    table_id=transfer.table_id,
                    exc_info=True,
                )

    async def _deliver(self, transfer: TransferUnion) -> None:
        """One transfer into its wallet (and a reward onto the record), once: the append's
        command id is the transfer's, so a second delivery is a duplicate that changes
        nothing. A wallet event and a record of one person are one shard: one append."""
        async with self.turns.turn(stream("wallet", transfer.player_id)):
            await until_applied(partial(self._deliver_once, transfer), what="wallet")

    async def _deliver_once(self, transfer: TransferUnion) -> None:
        """Load the wallet (or, for a rating, the record), decide the delivery, append (a
        duplicate: delivered before)."""
        player_id = transfer.player_id
        uow = UnitOfWork(self.repository)
        if isinstance(transfer, RateGame):
            await rate(uow, transfer)
        else:
            events = decide_delivery(await uow.wallet(player_id), transfer)
            if isinstance(transfer, GrantReward):
                await uow.record(player_id, GameRecorded(record=transfer.record))
            elif not events:
                # A stake the wallet does not hold: a bug if it ever happens; nothing to do.
                log.error("transfer finds no stake to move", transfer_id=transfer.transfer_id)
                return
            await uow.wallet_events(player_id, events)
        # The command goes on a stream this delivery appends to: a reward always records the
        # game on the player's record, whatever the daily cap leaves of its coins; a rating
        # change is on the record alone.
        kind = "player" if isinstance(transfer, GrantReward | RateGame) else "wallet"
        metadata = {"causation": transfer.transfer_id, "actor": f"table:{transfer.table_id}"}
        with contextlib.suppress(DuplicateCommand):  # delivered before: it is in the wallet
            await uow.commit(metadata, command=(stream(kind, player_id), transfer.transfer_id))

    async def relay_due(self, *, after: timedelta = RELAY_AFTER, limit: int = 50) -> int:
        """Deliver transfers left in the outbox (for longer than `after`). Several instances
        may call this at once: SKIP LOCKED gives each row to one of them, and a row delivered
        but not deleted (a crash between the two) is delivered again as a duplicate."""
        delivered = 0
        if not await self.outbox.any_due(after):
            return 0
        async with self.outbox.claim_due(after, limit) as claim:
            for transfer in claim.transfers:
                await self._deliver(transfer)
                await claim.delivered(transfer)
                delivered += 1
        return delivered

    async def expire_holds(self, *, after: timedelta, limit: int = 50) -> int:
        """Give back holds older than `after` that their table never took (a sit-down cut short
        between its two steps). Returns how many were given back."""
        given_back = 0
        for row in await self.holds.unsettled(after, limit):
            hold = Hold(row.player_id, row.table_id, row.hold_id, row.amount)
            if await self.give_back(hold, actor="hold_expiry"):
                given_back += 1
            else:  # the table decided it: taken (then it leaves with the pot or the person)
                await self.holds.settle(hold.player_id, hold.hold_id)
        return given_back

    async def release_legacy_holds(self, limit: int = 50) -> int:
        """Release holds made before holds had ids (an older version's, or one still running
        in a rolling deploy): the table's side no longer takes a hold without an id, so its
        wallet gives it back on its own. Their people stay seated and play that first game
        without a stake in its pot. Returns how many wallets were released (a wallet whose
        projected holds its own log does not hold is found again, and releases nothing)."""
        released = 0
        for player_id in await self.holds.legacy_holders(limit):
            released += await self._release_legacy(player_id)
        return released

    async def _release_legacy(self, player_id: str) -> bool:
        async with self.turns.turn(stream("wallet", player_id)):
            return await until_applied(partial(self._release_legacy_once, player_id), what="wallet")

    async def _release_legacy_once(self, player_id: str) -> bool:
        """Load the wallet and its holds with ids, release what they do not account for,
        append; whether there was any."""
        uow = UnitOfWork(self.repository)
        wallet = await uow.wallet(player_id)
        # Read after the wallet: a hold appended in between makes the append below conflict
        # (and this decide again), so no hold with an id is taken for a legacy one.
        with_ids = await self.holds.held_by_table(player_id)
        events = [
            StakeReleased(table_id=table_id, amount=amount - with_ids.get(table_id, 0))
            for table_id, amount in wallet.holds
            if amount > with_ids.get(table_id, 0)
        ]
        if events:
            await uow.wallet_events(player_id, events)
            await uow.commit({"actor": "legacy_holds", "causation": "release_legacy"})
        return bool(events)

    async def report_unknown(self, after: timedelta = RELAY_AFTER) -> dict[str, int]:
        """Log the transfers waiting for a newer instance (a kind this version cannot deliver,
        in a rolling deploy): they are left for it, not a fault here. Returns them by kind."""
        unknown = await self.outbox.unknown_due(after)
        if unknown:
            log.warning("transfers left for a newer instance", kinds=unknown)
        return unknown

    async def run(self) -> None:
        """Relay left-over transfers, expire unfinished sit-downs and release legacy holds,
        each at its own pace, until cancelled."""
        after = timedelta(seconds=self.ctx.hold_expiry)
        loop = asyncio.get_running_loop()
        expire_due = legacy_due = 0.0
        while True:
            try:
                while await self.relay_due():
                    pass
                if loop.time() >= expire_due:
                    await self.expire_holds(after=after)
                    expire_due = loop.time() + min(EXPIRE_EVERY, self.ctx.hold_expiry)
                if loop.time() >= legacy_due:
                    await self.release_legacy_holds()
                    await self.report_unknown()
                    legacy_due = loop.time() + LEGACY_SWEEP_EVERY
                await asyncio.sleep(RELAY_EVERY)
            except asyncio.CancelledError:
                raise
            except Exception:  # the database is down or restarting: keep trying, gently
                log.exception("money relay failed; retrying in 1 s")
                await asyncio.sleep(1.0)
