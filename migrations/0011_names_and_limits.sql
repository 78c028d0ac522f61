-- Issue 13: account names compared by one key computed in the app (service/domain/names.py:
-- the TS #39 skeleton of the case-folded name), never by lower() in SQL, which disagreed with
-- Python on names like 'İLKER7'; sign-ups counted per client address; each online table's host
-- in the lobby, for the cap on open tables per player.

-- Rows from before this migration have no key yet: the app sets it at the account's next login.
alter table accounts add column name_key text;
create unique index accounts_name_key on accounts (name_key);
drop index accounts_name;
grant update (name_key) on accounts to swarm_app;

-- Guests created and accounts registered, by client address, for their per-address limits.
create table sign_ups (
    key       text        not null,  -- 'guest:<address>' or 'account:<address>'
    signed_at timestamptz not null default now()
);
create index sign_ups_recent on sign_ups (key, signed_at);
grant select, insert, delete on sign_ups to swarm_app;

-- The host of each online table (rows from before this have none, and count for nobody).
alter table lobby add column host_id text;
create index lobby_open_by_host on lobby (host_id) where status <> 'closed';
