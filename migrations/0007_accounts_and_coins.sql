-- Accounts, expiring and revocable tokens, slowed-down logins, and the coin and stats
-- projections. The facts themselves are events (player-<id>, wallet-<id>, table-<id>); these
-- tables are indexes and projections written in the same transaction as those events.

create table accounts (
    player_id     text        primary key,
    name          text        not null,
    password_hash text        not null,  -- argon2id, via argon2-cffi
    created_at    timestamptz not null default now()
);
create unique index accounts_name on accounts (lower(name));

alter table access_tokens
    add column expires_at timestamptz,  -- null: rows from before expiry existed
    add column revoked_at timestamptz;

-- Failed logins, by account name and by client address, for the login rate limit.
create table login_failures (
    key       text        not null,  -- 'name:<lower name>' or 'addr:<ip>'
    failed_at timestamptz not null default now()
);
create index login_failures_recent on login_failures (key, failed_at);

-- Projection of wallet-<id>: never negative, by constraint as well as by the rules.
create table wallets (
    player_id text        primary key,
    balance   bigint      not null check (balance >= 0),
    held      bigint      not null check (held >= 0),
    granted   bigint      not null check (granted >= 0),
    version   integer     not null,
    updated_at timestamptz not null default now()
);

-- Projection of each person's recorded online games: stats, XP and badges.
create table player_stats (
    player_id    text        primary key,
    name         text        not null,
    games_played integer     not null default 0,
    games_won    integer     not null default 0,
    xp           bigint      not null default 0,
    badges       text[]      not null default '{}',
    updated_at   timestamptz not null default now()
);
create index player_stats_by_wins on player_stats (games_won desc, xp desc, player_id);
create index player_stats_by_xp on player_stats (xp desc, games_won desc, player_id);

grant select, insert on accounts to swarm_app;
grant update on access_tokens to swarm_app;
grant select, insert, delete on login_failures to swarm_app;
grant select, insert, update on wallets, player_stats to swarm_app;
