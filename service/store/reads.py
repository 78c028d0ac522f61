"""What the lobby, listMyGames, profiles and the leaderboard read on PostgreSQL: the `lobby`,
`table_members`, `wallets` and `player_stats` projections (`port.Lobby`,
`port.TableMembership`, `port.Standings`), written with the events they fold
(`service.store.projections`), so never behind the log."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Literal, TypeVar

import msgspec

from service.domain.ratings import Rating
from service.store import citus, citus_reads
from service.store.citus_reads import across
from service.store.pool import Pool
from service.store.rows import (
    ListedTable,
    LobbyListing,
    PlayedGame,
    PublicStanding,
    Reach,
    Standing,
    WalletBalance,
)

R = TypeVar("R")


ASC, DESC = False, True


def _merged(
    answers: Iterable[bytes],
    decoder: msgspec.json.Decoder[list[R]],
    *order: tuple[Callable[[R], Any], bool],
) -> list[R]:
    """Every worker's rows (`citus_reads.across`) in one list, in the order of the statement
    they stand in for: ``order`` is its ORDER BY, each key with `ASC` or `DESC`, the most
    significant first."""
    rows = [row for answer in answers for row in decoder.decode(answer)]
    for key, descending in reversed(order):  # stable sorts, the least significant first
        rows.sort(key=key, reverse=descending)
    return rows


_LOBBY_PAGE = """
select table_id, host_id, host_name, seats_taken, people, capacity, stake, status, bee_levels,
       opened_at
  from lobby
 where status <> 'closed'
   and ($1 = 'any' or ($1 = 'free') = (stake = 0))
   and (not $2 or seats_taken < capacity)
 order by opened_at desc, table_id
 limit $3 offset $4
"""
_HOSTING = "select count(*) from lobby where host_id = $1 and status <> 'closed'"

# The same page on each shard (`citus_reads.across`): the first offset + limit rows of each.
_LOBBY_SHARD = """
select table_id, host_id, host_name, seats_taken, people, capacity, stake, status, bee_levels,
       opened_at
  from %1$s
 where status <> 'closed'
   and (%2$L = 'any' or (%2$L = 'free') = (stake = 0))
   and (not %3$L::boolean or seats_taken < capacity)
 order by opened_at desc, table_id
 limit %4$L::bigint
"""


class _LobbyRow(msgspec.Struct, frozen=True):
    table_id: str
    host_id: str | None
    host_name: str
    seats_taken: int
    people: int
    capacity: int
    stake: int
    status: str
    bee_levels: list[str]
    opened_at: datetime


_LOBBY_ROWS = msgspec.json.Decoder(list[_LobbyRow])


class StoredLobby:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def page(
        self,
        stake: str,
        has_free_seat: bool,
        limit: int,
        offset: int,
        reach: Reach | None = None,
    ) -> list[ListedTable]:
        rows: Sequence[Any] | None = None
        if reach is not None and await citus.detect(self._pool):
            rows = await citus_reads.whole(
                self._pool, _LOBBY_PAGE, stake, has_free_seat, limit, offset
            )
            if rows is None:  # a worker away (or slow): each asked on its own
                answers = await across(
                    self._pool, "lobby", _LOBBY_SHARD, (stake, has_free_seat, offset + limit), reach
                )
                merged = _merged(
                    answers,
                    _LOBBY_ROWS,
                    (lambda r: r.opened_at, DESC),
                    (lambda r: r.table_id, ASC),
                )
                rows = [tuple(msgspec.structs.astuple(r)) for r in merged[offset : offset + limit]]
        if rows is None:
            rows = await self._pool.fetch(_LOBBY_PAGE, stake, has_free_seat, limit, offset)
        return [
            ListedTable(
                listing=LobbyListing(
                    table_id=r[0],
                    host_id=r[1] or "",
                    host_name=r[2],
                    seats_taken=r[3],
                    people=r[4],
                    capacity=r[5],
                    stake=r[6],
                    status=r[7],
                    bee_levels=tuple(r[8]),
                ),
                opened_at=r[9],
            )
            for r in rows
        ]

    async def hosting(self, host_id: str) -> int:
        return int(await self._pool.fetchval(_HOSTING, host_id))


_MY_TABLES = """
select table_id from table_members where player_id = $1 order by joined_at desc, table_id limit $2
"""


_MY_PAST_GAMES = """
select game_id, table_id, mode, rated, ended_at from player_games
 where player_id = $1
   and ($2::boolean is null or rated = $2)
   and (not $3::boolean or mode = 'online')
   and ($4::timestamptz is null or ended_at >= $4)
   and ($5::timestamptz is null or ended_at < $5)
 order by ended_at desc, game_id desc
 limit $6 offset $7
"""


_MY_TABLES_SHARD = """
select table_id, joined_at from %1$s where player_id = %2$L
 order by joined_at desc, table_id limit %3$L::bigint
"""
_MY_PAST_GAMES_SHARD = """
select game_id, table_id, mode, rated, ended_at from %1$s
 where player_id = %2$L
   and (%3$L::boolean is null or rated = %3$L::boolean)
   and (not %4$L::boolean or mode = 'online')
   and (%5$L::timestamptz is null or ended_at >= %5$L::timestamptz)
   and (%6$L::timestamptz is null or ended_at < %6$L::timestamptz)
 order by ended_at desc, game_id desc
 limit %7$L::bigint
"""


class _MemberRow(msgspec.Struct, frozen=True):
    table_id: str
    joined_at: datetime


_MEMBER_ROWS = msgspec.json.Decoder(list[_MemberRow])
_PLAYED_ROWS = msgspec.json.Decoder(list[PlayedGame])


class StoredTableMembership:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def tables_of(self, player_id: str, limit: int, reach: Reach | None = None) -> list[str]:
        if reach is not None and await citus.detect(self._pool):
            rows = await citus_reads.whole(self._pool, _MY_TABLES, player_id, limit)
            if rows is not None:
                return [r[0] for r in rows]
            answers = await across(
                self._pool, "table_members", _MY_TABLES_SHARD, (player_id, limit), reach
            )
            merged = _merged(
                answers, _MEMBER_ROWS, (lambda r: r.joined_at, DESC), (lambda r: r.table_id, ASC)
            )
            return [r.table_id for r in merged[:limit]]
        return [r[0] for r in await self._pool.fetch(_MY_TABLES, player_id, limit)]

    async def games_of(
        self,
        player_id: str,
        *,
        rated: bool | None = None,
        online_only: bool = False,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int,
        offset: int = 0,
        reach: Reach | None = None,
    ) -> list[PlayedGame]:
        args = (player_id, rated, online_only, since, until)
        rows: Sequence[Any] | None = None
        if reach is not None and await citus.detect(self._pool):
            rows = await citus_reads.whole(self._pool, _MY_PAST_GAMES, *args, limit, offset)
            if rows is None:
                answers = await across(
                    self._pool, "player_games", _MY_PAST_GAMES_SHARD, (*args, offset + limit), reach
                )
                merged = _merged(
                    answers,
                    _PLAYED_ROWS,
                    (lambda g: g.ended_at, DESC),
                    (lambda g: g.game_id, DESC),
                )
                return merged[offset : offset + limit]
        if rows is None:
            rows = await self._pool.fetch(_MY_PAST_GAMES, *args, limit, offset)
        return [
            PlayedGame(game_id=r[0], table_id=r[1], mode=r[2], rated=r[3], ended_at=r[4])
            for r in rows
        ]


_WALLET = "select balance, held, granted, version from wallets where player_id = $1"
_STATS = """
select name, games_played, games_won, xp, badges, rating_mu, rating_sigma, rated_games
  from player_stats where player_id = $1
"""
_RATINGS = """
select player_id, rating_mu, rating_sigma, rated_games from player_stats
 where player_id = any($1::text[])
"""
_PUBLIC_PLAYER = """
select coalesce(a.name, s.name,
                (select t.name from access_tokens t where t.player_id = $1
                  order by t.created_at limit 1)) as name,
       a.player_id is not null as registered,
       coalesce(s.games_played, 0) as games_played,
       coalesce(s.games_won, 0) as games_won,
       coalesce(s.xp, 0) as xp,
       coalesce(s.badges, '{}') as badges,
       coalesce(s.rating_mu, 25) as rating_mu,
       coalesce(s.rating_sigma, 8.333333333333334) as rating_sigma,
       coalesce(s.rated_games, 0) as rated_games
  from (select $1::text as player_id) p
  left join accounts a on a.player_id = p.player_id
  left join player_stats s on s.player_id = p.player_id
"""
_LEADERBOARD = {
    "wins": """
select player_id, name, games_played, games_won, xp, badges, rating_mu, rating_sigma,
       rated_games from player_stats
 order by games_won desc, xp desc, player_id
 limit $1 offset $2
""",
    "xp": """
select player_id, name, games_played, games_won, xp, badges, rating_mu, rating_sigma,
       rated_games from player_stats
 order by xp desc, games_won desc, player_id
 limit $1 offset $2
""",
    # People with a rated game: settled ratings first, then provisional ones (migration 0018).
    "rating": """
select player_id, name, games_played, games_won, xp, badges, rating_mu, rating_sigma,
       rated_games from player_stats
 where rated_games > 0
 order by (rating_sigma < 6) desc, rating_mu desc, player_id
 limit $1 offset $2
""",
}


_RATINGS_SHARD = """
select player_id, rating_mu, rating_sigma, rated_games from %1$s
 where player_id = any(%2$L::text[])
"""
_STANDING_COLUMNS = """
select player_id, name, games_played, games_won, xp, badges, rating_mu, rating_sigma,
       rated_games from %1$s"""
_LEADERBOARD_SHARD = {
    "wins": _STANDING_COLUMNS + " order by games_won desc, xp desc, player_id limit %2$L::bigint",
    "xp": _STANDING_COLUMNS + " order by xp desc, games_won desc, player_id limit %2$L::bigint",
    "rating": _STANDING_COLUMNS + " where rated_games > 0"
    " order by (rating_sigma < 6) desc, rating_mu desc, player_id limit %2$L::bigint",
}
_LEADERBOARD_ORDER: dict[str, tuple[tuple[Callable[[Standing], Any], bool], ...]] = {
    "wins": ((lambda r: r.games_won, DESC), (lambda r: r.xp, DESC), (lambda r: r.player_id, ASC)),
    "xp": ((lambda r: r.xp, DESC), (lambda r: r.games_won, DESC), (lambda r: r.player_id, ASC)),
    "rating": (
        (lambda r: r.rating_sigma < 6, DESC),
        (lambda r: r.rating_mu, DESC),
        (lambda r: r.player_id, ASC),
    ),
}


class _RatingRow(msgspec.Struct, frozen=True):
    player_id: str
    rating_mu: float
    rating_sigma: float
    rated_games: int


_RATING_ROWS = msgspec.json.Decoder(list[_RatingRow])
_STANDING_ROWS = msgspec.json.Decoder(list[Standing])


class StoredStandings:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def coins(self, player_id: str) -> WalletBalance | None:
        row = await self._pool.fetchrow(_WALLET, player_id)
        if row is None:
            return None
        return WalletBalance(
            player_id=player_id, balance=row[0], held=row[1], granted=row[2], version=row[3]
        )

    async def standing(self, player_id: str) -> Standing | None:
        row = await self._pool.fetchrow(_STATS, player_id)
        if row is None:
            return None
        return Standing(
            player_id=player_id,
            name=row[0],
            games_played=row[1],
            games_won=row[2],
            xp=row[3],
            badges=tuple(row[4]),
            rating_mu=row[5],
            rating_sigma=row[6],
            rated_games=row[7],
        )

    async def ratings(
        self, player_ids: Sequence[str], reach: Reach | None = None
    ) -> dict[str, Rating]:
        rows: Sequence[Any] | None = None
        if reach is not None and player_ids and await citus.detect(self._pool):
            rows = await citus_reads.whole(self._pool, _RATINGS, list(player_ids))
            if rows is None:  # a worker away (or slow): each asked on its own
                answers = await across(
                    self._pool, "player_stats", _RATINGS_SHARD, (list(player_ids),), reach
                )
                return {
                    r.player_id: Rating(mu=r.rating_mu, sigma=r.rating_sigma, games=r.rated_games)
                    for answer in answers
                    for r in _RATING_ROWS.decode(answer)
                }
        if rows is None:
            rows = await self._pool.fetch(_RATINGS, list(player_ids))
        return {r[0]: Rating(mu=r[1], sigma=r[2], games=r[3]) for r in rows}

    async def public(self, player_id: str) -> PublicStanding | None:
        row = await self._pool.fetchrow(_PUBLIC_PLAYER, player_id)
        if row is None or row["name"] is None:
            return None
        standing = Standing(
            player_id=player_id,
            name=row["name"],
            games_played=row["games_played"],
            games_won=row["games_won"],
            xp=row["xp"],
            badges=tuple(row["badges"]),
            rating_mu=row["rating_mu"],
            rating_sigma=row["rating_sigma"],
            rated_games=row["rated_games"],
        )
        return PublicStanding(standing=standing, registered=row["registered"])

    async def leaderboard(
        self, by: Literal["wins", "xp", "rating"], limit: int, offset: int
    ) -> list[Standing]:
        rows: Sequence[Any] | None = None
        if await citus.detect(self._pool):
            # Whole or not at all (no `Reach`): a rank counts everyone, so a page without a
            # worker's people would rank the others wrongly. A worker away: 503 at once.
            rows = await citus_reads.whole(self._pool, _LEADERBOARD[by], limit, offset)
            if rows is None:
                answers = await across(
                    self._pool, "player_stats", _LEADERBOARD_SHARD[by], (offset + limit,), None
                )
                merged = _merged(answers, _STANDING_ROWS, *_LEADERBOARD_ORDER[by])
                return merged[offset : offset + limit]
        if rows is None:
            rows = await self._pool.fetch(_LEADERBOARD[by], limit, offset)
        return [
            Standing(
                player_id=r[0],
                name=r[1],
                games_played=r[2],
                games_won=r[3],
                xp=r[4],
                badges=tuple(r[5]),
                rating_mu=r[6],
                rating_sigma=r[7],
                rated_games=r[8],
            )
            for r in rows
        ]
