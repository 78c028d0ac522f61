"""The rows an append commits with its events (`service.store.rows`), as PostgreSQL statements:
`statements(row)` gives the `(sql, args)` that `EventStore.append` folds into the append's own
statement (one round trip, one transaction), so a read model is never behind the log. Each is a
plain INSERT, UPDATE or DELETE (no WITH of its own), so it folds, and touches a row at most
once per append."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.domain.transfers import encode_transfer
from service.store.rows import (
    AccessToken,
    Account,
    DealSecret,
    GamesPlayed,
    LobbyListing,
    OwedTransfer,
    Row,
    StakeHold,
    StakeHoldEnded,
    Standing,
    TableMembers,
    Timer,
    TokenGuard,
    WalletBalance,
)

Statement = tuple[str, tuple[Any, ...]]

_SECRET_INSERT = "insert into deal_secrets (game_id, server_seed) values ($1, $2)"
_TIMER_INSERT = "insert into timers (game_id, deadline) values ($1, $2) on conflict do nothing"

_WALLET_UPSERT = """
insert into wallets (player_id, balance, held, granted, version)
values ($1, $2, $3, $4, $5)
on conflict (player_id) do update
   set balance = excluded.balance, held = excluded.held, granted = excluded.granted,
       version = excluded.version, updated_at = now()
"""

_STATS_UPSERT = """
insert into player_stats (player_id, name, games_played, games_won, xp, badges,
                          rating_mu, rating_sigma, rated_games)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
on conflict (player_id) do update
   set name = excluded.name, games_played = excluded.games_played,
       games_won = excluded.games_won, xp = excluded.xp, badges = excluded.badges,
       rating_mu = excluded.rating_mu, rating_sigma = excluded.rating_sigma,
       rated_games = excluded.rated_games, updated_at = now()
"""

_OUTBOX_INSERT = """
insert into money_outbox (table_id, transfer_id, player_id, transfer)
values ($1, $2, $3, $4::jsonb)
"""

_HOLD_INSERT = """
insert into stake_holds (player_id, hold_id, table_id, amount) values ($1, $2, $3, $4)
"""

_HOLD_DELETE = "delete from stake_holds where player_id = $1 and hold_id = $2"

_LOBBY_UPSERT = """
insert into lobby (table_id, host_name, seats_taken, people, capacity, stake, status, bee_levels,
                   host_id)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
on conflict (table_id) do update
   set host_name = excluded.host_name, host_id = excluded.host_id,
       seats_taken = excluded.seats_taken,
       people = excluded.people, status = excluded.status, bee_levels = excluded.bee_levels,
       updated_at = now()
"""

# Who sits at the table now (listMyGames): people who left, or a closed table's, are removed,
# and those seated are added (two statements that touch different rows: each folds).
_MEMBERS_GONE = "delete from table_members where table_id = $1 and player_id <> all($2::text[])"
_MEMBERS_SEATED = """
insert into table_members (table_id, player_id, mode)
select $1, p, $3 from unnest($2::text[]) as p
on conflict do nothing
"""

_PLAYED_INSERT = """
insert into player_games (player_id, game_id, table_id, mode, rated)
select p, $2, $3, $4, $5 from unnest($1::text[]) as p
on conflict do nothing
"""

_ACCOUNT_INSERT = (
    "insert into accounts (player_id, name, password_hash, name_key) values ($1, $2, $3, $4)"
)
_TOKEN_INSERT = (
    "insert into access_tokens (token_hash, player_id, name, expires_at) values ($1, $2, $3, $4)"
)

_REQUIRE_TOKEN = "select require_token($1, $2, $3)"  # migrations/0014_token_guard.sql


def _secret(row: DealSecret) -> Statement:
    return (_SECRET_INSERT, (row.game_id, row.server_seed))


def _timer(row: Timer) -> Statement:
    return (_TIMER_INSERT, (row.game_id, row.deadline))


def _wallet(row: WalletBalance) -> Statement:
    return (_WALLET_UPSERT, (row.player_id, row.balance, row.held, row.granted, row.version))


def _standing(row: Standing) -> Statement:
    return (
        _STATS_UPSERT,
        (
            row.player_id,
            row.name,
            row.games_played,
            row.games_won,
            row.xp,
            list(row.badges),
            row.rating_mu,
            row.rating_sigma,
            row.rated_games,
        ),
    )


def _hold(row: StakeHold) -> Statement:
    return (_HOLD_INSERT, (row.player_id, row.hold_id, row.table_id, row.amount))


def _hold_ended(row: StakeHoldEnded) -> Statement:
    return (_HOLD_DELETE, (row.player_id, row.hold_id))


def _owed(row: OwedTransfer) -> Statement:
    """A transfer in its table's outbox (keyed by the table: the table's shard)."""
    t = row.transfer
    return (_OUTBOX_INSERT, (t.table_id, t.transfer_id, t.player_id, encode_transfer(t).decode()))


def _listing(row: LobbyListing) -> Statement:
    return (
        _LOBBY_UPSERT,
        (
            row.table_id,
            row.host_name,
            row.seats_taken,
            row.people,
            row.capacity,
            row.stake,
            row.status,
            list(row.bee_levels),
            row.host_id,
        ),
    )


def _members(row: TableMembers) -> tuple[Statement, Statement]:
    people = list(row.people)
    return (_MEMBERS_GONE, (row.table_id, people)), (
        _MEMBERS_SEATED,
        (row.table_id, people, row.mode),
    )


def _played(row: GamesPlayed) -> Statement:
    return (_PLAYED_INSERT, (list(row.people), row.game_id, row.table_id, row.mode, row.rated))


def _account(row: Account) -> Statement:
    return (_ACCOUNT_INSERT, (row.player_id, row.name, row.password_hash, row.name_key))


def _token(row: AccessToken) -> Statement:
    return (_TOKEN_INSERT, (row.token_hash, row.player_id, row.name, row.expires_at))


_STATEMENTS: dict[type[Any], Callable[[Any], Statement]] = {
    DealSecret: _secret,
    Timer: _timer,
    WalletBalance: _wallet,
    Standing: _standing,
    StakeHold: _hold,
    StakeHoldEnded: _hold_ended,
    OwedTransfer: _owed,
    LobbyListing: _listing,
    GamesPlayed: _played,
    Account: _account,
    AccessToken: _token,
}


def statements(row: Row) -> tuple[Statement, ...]:
    """The statements that write `row`."""
    if isinstance(row, TableMembers):
        return _members(row)
    return (_STATEMENTS[type(row)](row),)


def statement(row: Row) -> Statement:
    """The one statement that writes `row` (any row but `TableMembers`)."""
    return _STATEMENTS[type(row)](row)


def guard_statement(guard: TokenGuard) -> Statement:
    return (_REQUIRE_TOKEN, (guard.token_hash, guard.player_id, guard.at))
