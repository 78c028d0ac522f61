-- 0019: each person's finished games (issue 43: My games' history and the NDJSON export of a
-- player's games). One row per person dealt into a game, written with the append that ends it
-- (service/store/rows.py `GamesPlayed`): what the history pages through, newest first, and
-- filters by rated or casual; the game itself is read from its stream.
create table player_games (
    player_id text        not null,
    game_id   text        not null,
    table_id  text        not null,
    mode      text        not null,
    rated     boolean     not null,
    ended_at  timestamptz not null default now(),
    primary key (player_id, game_id)
);
create index player_games_newest on player_games (player_id, ended_at desc, game_id desc);

grant select, insert on player_games to swarm_app;
