-- Bearer tokens of guests. Only a SHA-256 of each token is kept: a leaked table gives no one a
-- usable token. The player's own facts (their name) are events in `player-<id>`; this table is
-- the lookup index that authentication needs on every request.
create table access_tokens (
    token_hash bytea       primary key,
    player_id  text        not null,
    name       text        not null,
    created_at timestamptz not null default now()
);

create index access_tokens_player on access_tokens (player_id);

grant select, insert on access_tokens to swarm_app;
