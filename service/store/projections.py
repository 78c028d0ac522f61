"""Projection rows written in the same transaction as the events they follow, so a read model
is never behind the log. Each builder returns `(sql, args)` pairs for `EventStore.append(also=)`.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from service.domain.ledger import (
    PlayerStats,
    StakeCommitted,
    StakeHeld,
    StakeReleased,
    WalletState,
)
from service.domain.rules.bees import DEFAULT_LEVEL
from service.domain.tables import TableState
from service.domain.transfers import TransferUnion, encode_transfer
from service.store.pool import Pool

Statement = tuple[str, tuple[Any, ...]]

_WALLET_UPSERT = """
insert into wallets (player_id, balance, held, granted, version)
values ($1, $2, $3, $4, $5)
on conflict (player_id) do update
   set balance = excluded.balance, held = excluded.held, granted = excluded.granted,
       version = excluded.version, updated_at = now()
"""

_STATS_UPSERT = """
insert into player_stats (player_id, name, games_played, games_won, xp, badges)
values ($1, $2, $3, $4, $5, $6)
on conflict (player_id) do update
   set name = excluded.name, games_played = excluded.games_played,
       games_won = excluded.games_won, xp = excluded.xp, badges = excluded.badges,
       updated_at = now()
"""


_OUTBOX_INSERT = """
insert into money_outbox (table_id, transfer_id, player_id, transfer)
values ($1, $2, $3, $4::jsonb)
"""

_HOLD_INSERT = """
insert into stake_holds (player_id, hold_id, table_id, amount) values ($1, $2, $3, $4)
"""

_HOLD_DELETE = "delete from stake_holds where player_id = $1 and hold_id = $2"


def outbox_row(transfer: TransferUnion) -> Statement:
    """A transfer in its table's outbox (keyed by the table: the table's shard)."""
    return (
        _OUTBOX_INSERT,
        (
            transfer.table_id,
            transfer.transfer_id,
            transfer.player_id,
            encode_transfer(transfer).decode(),
        ),
    )


def hold_row(player_id: str, held: StakeHeld) -> Statement:
    return (_HOLD_INSERT, (player_id, held.hold_id, held.table_id, held.amount))


def hold_settled_row(player_id: str, moved: StakeReleased | StakeCommitted) -> Statement:
    return (_HOLD_DELETE, (player_id, moved.hold_id))


def wallet_row(player_id: str, wallet: WalletState) -> Statement:
    return (
        _WALLET_UPSERT,
        (player_id, wallet.balance, wallet.held, wallet.granted, wallet.version),
    )


def stats_row(player_id: str, name: str, stats: PlayerStats) -> Statement:
    return (
        _STATS_UPSERT,
        (
            player_id,
            name,
            stats.games_played,
            stats.games_won,
            stats.xp,
            list(stats.badges),
        ),
    )


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


# Who sits at the table now (listMyGames): people who left, or a closed table's, are removed.
_MEMBERS = """
with gone as (
    delete from table_members where table_id = $1 and player_id <> all($2::text[])
)
insert into table_members (table_id, player_id, mode)
select $1, p, $3 from unnest($2::text[]) as p
on conflict do nothing
"""


def members_row(table: TableState) -> Statement:
    """The people seated at `table` now, solo or online (`table_members`)."""
    people = [] if table.closed else [s.player_id for s in table.people if s.player_id]
    return (_MEMBERS, (table.table_id, people, table.mode))


def lobby_row(table: TableState) -> Statement:
    """The lobby row of an online table (what `listTables` pages through)."""
    host = next((s.name for s in table.seats if s.player_id == table.host), "")
    return (
        _LOBBY_UPSERT,
        (
            table.table_id,
            host,
            len(table.seats),
            len(table.people),
            table.capacity,
            table.stake,
            table.status,
            [s.level or DEFAULT_LEVEL for s in table.seats if s.kind == "bee"],
            table.host,
        ),
    )


async def set_if_unique(pool: Pool, sql: str, *args: Any) -> bool:
    """Run one write on its own; False, with nothing written, when it would break a unique
    constraint (another row has the value first), so callers need no database driver."""
    try:
        await pool.execute(sql, *args)
    except asyncpg.UniqueViolationError:
        return False
    return True
