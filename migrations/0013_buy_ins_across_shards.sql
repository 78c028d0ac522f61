-- Issue 17: buy-ins that a distributed PostgreSQL (Citus, tables sharded by table id and
-- people by player id) can run: no transaction writes a table's streams and a wallet's.
-- docs/scaling.md, "Buy-ins across shards", and service/domain/transfers.py.

-- The table's outbox: each transfer a table decided (a stake given back or put in the pot, a
-- pot paid, a reward), written in the same transaction as the table event, delivered to the
-- wallet as one append whose command id is `transfer_id` (so at most once), then deleted. A
-- Citus deployment distributes it by table_id, colocated with the table's events.
create table money_outbox (
    table_id    text        not null,
    transfer_id text        not null,
    player_id   text        not null,
    transfer    jsonb       not null,  -- service.domain.transfers.TransferUnion
    created_at  timestamptz not null default now(),
    primary key (table_id, transfer_id)
);
create index money_outbox_oldest on money_outbox (created_at);
grant select, insert, delete on money_outbox to swarm_app;
grant update (created_at) on money_outbox to swarm_app;  -- for the relay's FOR UPDATE claim

-- Stakes a wallet holds, one row per hold, written with the wallet's events (a person's
-- shard): the sweeper (Money.expire_holds) finds the ones whose table never took them, after
-- a sit-down that did not finish. `settled_at`: the table has decided this hold's fate (it
-- took it, or gave it back), so the sweeper need not ask again.
create table stake_holds (
    player_id  text        not null,
    hold_id    text        not null,
    table_id   text        not null,
    amount     integer     not null check (amount > 0),
    held_at    timestamptz not null default now(),
    settled_at timestamptz,
    primary key (player_id, hold_id)
);
create index stake_holds_unsettled on stake_holds (held_at) where settled_at is null;
grant select, insert, delete on stake_holds to swarm_app;
grant update (settled_at) on stake_holds to swarm_app;
