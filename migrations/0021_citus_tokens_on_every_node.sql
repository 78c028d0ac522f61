-- 0021: on Citus, bearer tokens on every node (issue 46; nothing changes on plain PostgreSQL).
-- 0018 sharded `access_tokens` by the token's hash, so a move's token check (and every
-- request's authentication) read one worker, most often not the game's: a person whose token
-- was on a worker that was away could play no game at all, on any worker. As a reference table
-- it is read on the node the query runs on (the coordinator), so while a worker is away the
-- games on the others are played by everyone. What it costs: a sign-up, a login and a logout
-- write every node (two-phase commit), and wait while a worker is away; play does not.
-- Stream tickets stay sharded by the token's hash (their foreign key now points at a
-- reference table), beside the idempotency keys.

do $migration$
begin
    if not exists (select 1 from pg_extension where extname = 'citus') then
        return;
    end if;
    -- A reference table with a foreign key to it: one connection per node throughout.
    set local citus.multi_shard_modify_mode to 'sequential';
    perform undistribute_table('access_tokens', cascade_via_foreign_keys => true);
    perform create_reference_table('access_tokens');
    perform create_distributed_table('stream_tickets', 'token_hash',
                                     colocate_with => 'idempotency_keys');
end;
$migration$;
