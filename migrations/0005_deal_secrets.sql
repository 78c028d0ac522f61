-- The server seed of each prepared game, kept out of the event log until the game ends (then
-- it is published in the game's `deal_revealed` event). Only its commitment is public before.
create table deal_secrets (
    game_id     text        primary key,
    server_seed bytea       not null check (length(server_seed) = 32),
    created_at  timestamptz not null default now()
);

grant select, insert on deal_secrets to swarm_app;
