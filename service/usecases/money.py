"""Coins at the table (seed §9 "Buy-in", "Coins, XP and badges"): a buy-in is held when a person
sits down before the table's first game, goes into the pot at that game's deal, and the pot is
paid to the fewest stings (or back to every payer when the game is abandoned). Play again has
no buy-in, so sitting down between games holds nothing; every hold ends in the pot or back in
the wallet. Finishing an online game earns coins and XP for account holders, the coins up to
a daily cap per account (`DAILY_REWARD_COINS`). Every movement is a wallet event appended in
the same unit of work as the table or game event that causes it (`service.domain.ledger`
holds the rules)."""

from __future__ import annotations

from datetime import UTC
from typing import Literal

from service.domain.ledger import (
    CoinsGranted,
    GameRecord,
    PotPaid,
    StakeCommitted,
    StakeReleased,
    capped_reward,
    decide_hold,
    reward,
    split_pot,
)
from service.domain.players import GameRecorded
from service.domain.rules.engine import GameState
from service.domain.tables import PotFormed, PotSettled, Stake
from service.usecases.context import Context
from service.usecases.identity import Player
from service.usecases.unit_of_work import UnitOfWork

_ACCOUNT_HOLDERS = "select player_id from accounts where player_id = any($1::text[])"


class Money:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def hold_stake(self, uow: UnitOfWork, player: Player) -> None:
        """Hold the buy-in as `player` sits down at (or opens) `uow.table`, if its first game
        is still to come (refused if their balance is short)."""
        table = uow.table
        if table.holds_stakes:
            wallet = await uow.wallet(player.player_id)
            held = decide_hold(wallet, table.table_id, table.stake)
            await uow.wallet_events(player.player_id, held)

    async def release_stake(self, uow: UnitOfWork, player_id: str) -> None:
        """Give back whatever `player_id` holds for `uow.table` as they leave it."""
        await self._release(uow, player_id)

    async def _release(self, uow: UnitOfWork, player_id: str) -> None:
        table_id = uow.table.table_id
        held = (await uow.wallet(player_id)).held_for(table_id)
        if held > 0:
            await uow.wallet_events(player_id, [StakeReleased(table_id=table_id, amount=held)])

    async def form_pot(self, uow: UnitOfWork, game_id: str) -> None:
        """At a buy-in table's first deal, every seated person's held stake goes into the pot.
        At a later deal nobody should hold anything for the table; a hold an older version
        left behind (someone who sat down between games) goes back to its wallet."""
        table = uow.table
        people = [s.player_id for s in table.seat_infos() if s.kind == "person" and s.player_id]
        if not table.holds_stakes:
            for player_id in people:
                await self._release(uow, player_id)
            return
        stakes = []
        for player_id in people:
            held = (await uow.wallet(player_id)).held_for(table.table_id)
            if held > 0:
                committed = StakeCommitted(table_id=table.table_id, game_id=game_id, amount=held)
                await uow.wallet_events(player_id, [committed])
                stakes.append(Stake(player_id=player_id, amount=held))
        uow.table_event(PotFormed(game_id=game_id, stakes=tuple(stakes)))

    async def settle_pot(self, uow: UnitOfWork, game: GameState) -> None:
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
            paid = PotPaid(game_id=game.game_id, amount=amount, reason=reason)
            await uow.wallet_events(player_id, [paid])
        uow.table_event(
            PotSettled(
                game_id=game.game_id,
                payouts=tuple(Stake(player_id=p, amount=a) for p, a in payouts),
                reason=reason,
            )
        )

    async def reward(self, uow: UnitOfWork, game: GameState) -> None:
        """Coins and XP for every person with an account who finished an online game (more
        for the winners; the coins up to the daily cap), and the game on their record; leavers
        and solo games earn nothing."""
        if uow.table.mode != "online" or game.end_reason not in (
            "finished",
            "last_person_standing",
        ):
            return
        finishers = {s.info.player_id: s for s in game.seats if not s.is_bee and s.playing}
        rows = await self.ctx.pool.fetch(
            _ACCOUNT_HOLDERS, [pid for pid in finishers if pid is not None]
        )
        day = self.ctx.clock().astimezone(UTC).date().isoformat()
        for row in rows:
            player_id = row["player_id"]
            seat = finishers[player_id]
            won = seat.number in game.winners
            coins, xp = reward(won)
            coins = capped_reward(await uow.wallet(player_id), coins, day)
            if coins > 0:
                grant = CoinsGranted(
                    amount=coins, reason="game_reward", game_id=game.game_id, day=day
                )
                await uow.wallet_events(player_id, [grant])
            record = GameRecord(
                game_id=game.game_id,
                stings=seat.stings,
                won=won,
                biggest_take=seat.biggest_take,
                xp=xp,
            )
            await uow.record(player_id, GameRecorded(record=record))
