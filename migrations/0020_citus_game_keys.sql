-- 0020: on Citus, a game's rows are keyed by the game's id (issue 46; nothing changes on plain
-- PostgreSQL). A game's id is now drawn so that it hashes to its table's shard
-- (service/store/citus.py `colocated_id`), so the game's stream, timers and secret are on that
-- shard when keyed by the game id alone, and every read of a game (by its stream, its secret)
-- names its one shard: a game whose worker answers is read and played while another worker is
-- away. 0018 keyed timers and deal secrets by the table's id, which a read by game id does not
-- know: the column is the shard key now, holding the game's id. Every table created after 0018
-- must be distributed (or made a reference table) by a migration of its own, as player_games
-- is here.

do $migration$
begin
    if not exists (select 1 from pg_extension where extname = 'citus') then
        return;
    end if;
    alter table timers rename column table_id to shard_key;
    alter table deal_secrets rename column table_id to shard_key;
    -- Each person's finished games (0019), written with the append that ends the game: on the
    -- game's shard. A person's history reads every shard.
    perform create_distributed_table('player_games', 'game_id', colocate_with => 'events');
end;
$migration$;
