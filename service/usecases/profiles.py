"""Profiles and the leaderboard: coins, XP, level, badges and games played and won (seed §9).

Read from the standings (`port.Standings`: each wallet's balance and each person's record,
written in the same step as the wallet and player events they fold, so never behind the
log)."""

from __future__ import annotations

from typing import Literal

import msgspec

from service.domain.ledger import Badge, PlayerStats, badges
from service.usecases.context import Context
from service.usecases.errors import NotFound
from service.usecases.identity import Player

LeaderboardOrder = Literal["wins", "xp"]


class Coins(msgspec.Struct, frozen=True, kw_only=True):
    """A player's coins.

    Attributes:
        balance: Spendable coins.
        held: Coins held for buy-in tables whose game has not started yet.
    """

    balance: int  # spendable
    held: int  # reserved for buy-in tables that have not started yet


class PublicProfile(msgspec.Struct, frozen=True, kw_only=True):
    """Anyone's public profile (never their coins).

    Attributes:
        registered: An account, not only a guest.
        level: 1 + xp // 500.
        games_played: Finished online games.
        badges: In the order they were earned.
        player_id: The player's id.
        name: The name shown to others.
        xp: Experience points from online games.
        games_won: Online games won (a shared win counts).
    """

    player_id: str
    name: str
    registered: bool  # an account, not only a guest
    xp: int
    level: int  # 1 + xp // 500
    games_played: int  # finished online games
    games_won: int
    badges: tuple[Badge, ...]  # in the order they were earned


class Profile(PublicProfile, frozen=True, kw_only=True):
    """The caller's own profile: the public one plus their coins.

    Attributes:
        player_id: Your player id.
        name: The name shown to others.
        xp: Experience points from online games.
        games_won: Online games won (a shared win counts).
        coins: Your coins: spendable and held.
    """

    coins: Coins


class LeaderboardEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One ranked player.

    Attributes:
        rank: 1 is first.
        player_id: The player's id.
        name: The name shown to others.
        games_won: Online games won (a shared win counts).
        games_played: Online games finished.
        xp: Experience points from online games.
        level: 1 + XP ÷ 500, rounded down.
    """

    rank: int  # 1 = first
    player_id: str
    name: str
    games_won: int
    games_played: int
    xp: int
    level: int  # 1 + XP ÷ 500, rounded down


class LeaderboardPage(msgspec.Struct, frozen=True, kw_only=True):
    """A page of the leaderboard.

    Attributes:
        by: `wins` or `xp`: what the ranking is by.
        entries: The ranked players of this page.
        limit: The page size asked for.
        offset: How many entries come before this page.
        next_offset: The offset of the next page; null on the last page.
    """

    by: LeaderboardOrder
    entries: list[LeaderboardEntry]
    limit: int
    offset: int
    next_offset: int | None  # None on the last page


def level(xp: int) -> int:
    return PlayerStats(xp=xp).level


class Profiles:
    def __init__(self, ctx: Context) -> None:
        self.standings = ctx.ports.standings

    async def me(self, player: Player) -> Profile:
        """The caller's own profile: coins, XP, level, badges, games played and won."""
        wallet = await self.standings.coins(player.player_id)
        stats = await self.standings.standing(player.player_id)
        return Profile(
            player_id=player.player_id,
            name=player.name,
            registered=player.registered,
            coins=Coins(balance=wallet.balance if wallet else 0, held=wallet.held if wallet else 0),
            xp=stats.xp if stats else 0,
            level=level(stats.xp if stats else 0),
            games_played=stats.games_played if stats else 0,
            games_won=stats.games_won if stats else 0,
            badges=badges(stats.badges if stats else ()),
        )

    async def player(self, player_id: str) -> PublicProfile:
        """Anyone's public profile (never their coins)."""
        public = await self.standings.public(player_id)
        if public is None:
            raise NotFound(f"There is no player {player_id}.")
        stats = public.standing
        return PublicProfile(
            player_id=player_id,
            name=stats.name,
            registered=public.registered,
            xp=stats.xp,
            level=level(stats.xp),
            games_played=stats.games_played,
            games_won=stats.games_won,
            badges=badges(stats.badges),
        )

    async def leaderboard(self, by: LeaderboardOrder, limit: int, offset: int) -> LeaderboardPage:
        """Players by games won (then XP) or by XP (then wins), ties by player id."""
        rows = await self.standings.leaderboard(by, limit + 1, offset)
        entries = [
            LeaderboardEntry(
                rank=offset + i + 1,
                player_id=r.player_id,
                name=r.name,
                games_won=r.games_won,
                games_played=r.games_played,
                xp=r.xp,
                level=level(r.xp),
            )
            for i, r in enumerate(rows[:limit])
        ]
        more = len(rows) > limit
        return LeaderboardPage(
            by=by,
            entries=entries,
            limit=limit,
            offset=offset,
            next_offset=offset + limit if more else None,
        )
