-- The lobby: one row per online table, written in the same transaction as the table's events
-- (so it is never behind them). A projection: it can be rebuilt from the table streams.
create table lobby (
    table_id    text        primary key,
    host_name   text        not null,
    seats_taken integer     not null,
    people      integer     not null,
    capacity    integer     not null,
    stake       integer     not null,
    status      text        not null,
    opened_at   timestamptz not null default now(),
    updated_at  timestamptz not null default now()
);

create index lobby_listing on lobby (opened_at desc, table_id) where status <> 'closed';

grant select, insert, update on lobby to swarm_app;
