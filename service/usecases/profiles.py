"""Profiles and the leaderboard: coins, XP, level, badges and games played and won (seed §9).

Read from the `wallets` and `player_stats` projections, which are written in the same
transaction as the wallet and player events they fold, so they are never behind the log."""

from __future__ import annotations

from typing import Literal

import msgspec

from service.domain.ledger import BADGES, PlayerStats
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


class Badge(msgspec.Struct, frozen=True, kw_only=True):
    """A badge earned in online games.

    Attributes:
        name: The badge's name.
        description: What earned it.
    """

    name: str
    description: str


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


def badges(names: list[str] | tuple[str, ...]) -> tuple[Badge, ...]:
    return tuple(Badge(name=n, description=BADGES.get(n, n)) for n in names)


_WALLET = "select balance, held from wallets where player_id = $1"
_STATS = "select games_played, games_won, xp, badges from player_stats where player_id = $1"
_PUBLIC_PLAYER = """
select coalesce(a.name, s.name,
                (select t.name from access_tokens t where t.player_id = p.player_id
                  order by t.created_at limit 1)) as name,
       a.player_id is not null as registered,
       coalesce(s.games_played, 0) as games_played,
       coalesce(s.games_won, 0) as games_won,
       coalesce(s.xp, 0) as xp,
       coalesce(s.badges, '{}') as badges
  from (select $1::text as player_id) p
  left join accounts a on a.player_id = p.player_id
  left join player_stats s on s.player_id = p.player_id
"""
_LEADERBOARD = {
    "wins": """
select player_id, name, games_won, games_played, xp from player_stats
 order by games_won desc, xp desc, player_id
 limit $1 offset $2
""",
    "xp": """
select player_id, name, games_won, games_played, xp from player_stats
 order by xp desc, games_won desc, player_id
 limit $1 offset $2
""",
}


class Profiles:
    def __init__(self, ctx: Context) -> None:
        self.pool = ctx.pool

    async def me(self, player: Player) -> Profile:
        """The caller's own profile: coins, XP, level, badges, games played and won."""
        wallet = await self.pool.fetchrow(_WALLET, player.player_id)
        stats = await self.pool.fetchrow(_STATS, player.player_id)
        return Profile(
            player_id=player.player_id,
            name=player.name,
            registered=player.registered,
            coins=Coins(
                balance=wallet["balance"] if wallet else 0, held=wallet["held"] if wallet else 0
            ),
            xp=stats["xp"] if stats else 0,
            level=level(stats["xp"] if stats else 0),
            games_played=stats["games_played"] if stats else 0,
            games_won=stats["games_won"] if stats else 0,
            badges=badges(stats["badges"] if stats else ()),
        )

    async def player(self, player_id: str) -> PublicProfile:
        """Anyone's public profile (never their coins)."""
        row = await self.pool.fetchrow(_PUBLIC_PLAYER, player_id)
        if row is None or row["name"] is None:
            raise NotFound(f"There is no player {player_id}.")
        return PublicProfile(
            player_id=player_id,
            name=row["name"],
            registered=row["registered"],
            xp=row["xp"],
            level=level(row["xp"]),
            games_played=row["games_played"],
            games_won=row["games_won"],
            badges=badges(row["badges"]),
        )

    async def leaderboard(self, by: LeaderboardOrder, limit: int, offset: int) -> LeaderboardPage:
        """Players by games won (then XP) or by XP (then wins), ties by player id."""
        rows = await self.pool.fetch(_LEADERBOARD[by], limit + 1, offset)
        entries = [
            LeaderboardEntry(
                rank=offset + i + 1,
                player_id=r["player_id"],
                name=r["name"],
                games_won=r["games_won"],
                games_played=r["games_played"],
                xp=r["xp"],
                level=level(r["xp"]),
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
