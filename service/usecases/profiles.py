"""Profiles and the leaderboard: coins, XP, level, badges and games played and won (seed §9).

Read from the standings (`port.Standings`: each wallet's balance and each person's record,
written in the same step as the wallet and player events they fold, so never behind the
log)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from service.domain.ledger import PlayerStats
from service.domain.ratings import NEW, Rating
from service.usecases.context import Context
from service.usecases.errors import NotFound
from service.usecases.identity import Player

LeaderboardOrder = Literal["wins", "xp", "rating"]


@dataclass(frozen=True, kw_only=True)
class Record:
    """A person's record: the name others see, their online games, XP and badges, and their
    rating (`service.domain.ratings`)."""

    player_id: str
    name: str
    stats: PlayerStats
    rating: Rating = NEW


@dataclass(frozen=True, kw_only=True)
class PlayerRecord(Record):
    """Anyone's record as their profile shows it, and whether they have an account."""

    registered: bool


@dataclass(frozen=True, kw_only=True)
class OwnRecord(PlayerRecord):
    """The caller's own record, with their coins: spendable, and held for buy-in tables whose
    game has not started yet."""

    balance: int
    held: int


class Profiles:
    def __init__(self, ctx: Context) -> None:
        self.standings = ctx.ports.standings

    async def me(self, player: Player) -> OwnRecord:
        """The caller's own record (their name as their token knows it) and coins."""
        wallet = await self.standings.coins(player.player_id)
        standing = await self.standings.standing(player.player_id)
        return OwnRecord(
            player_id=player.player_id,
            name=player.name,
            stats=standing.stats if standing is not None else PlayerStats(),
            rating=standing.rating if standing is not None else NEW,
            registered=player.registered,
            balance=wallet.balance if wallet else 0,
            held=wallet.held if wallet else 0,
        )

    async def player(self, player_id: str) -> PlayerRecord:
        """Anyone's record (never their coins)."""
        public = await self.standings.public(player_id)
        if public is None:
            raise NotFound(f"There is no player {player_id}.")
        return PlayerRecord(
            player_id=player_id,
            name=public.standing.name,
            stats=public.standing.stats,
            rating=public.standing.rating,
            registered=public.registered,
        )

    async def leaderboard(self, by: LeaderboardOrder, limit: int, offset: int) -> list[Record]:
        """Up to `limit` records from `offset` on, by games won (then XP), by XP (then wins), or
        by rating (people with a rated game: settled ratings, then provisional ones, each by
        mu), ties by player id."""
        rows = await self.standings.leaderboard(by, limit, offset)
        return [
            Record(player_id=r.player_id, name=r.name, stats=r.stats, rating=r.rating) for r in rows
        ]
