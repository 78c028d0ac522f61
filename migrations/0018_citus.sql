-- 0018: the store on Citus (issue 46, docs/scaling.md "The store on Citus"). Nothing changes on a
-- plain PostgreSQL: everything below runs only when the database has the citus extension (its
-- nodes added before `swarm migrate`), on a database without events yet.
--
-- One colocation group, hashed by one text key: a table's id for the table's streams, its games'
-- streams and every row written with them (processed commands, lobby, members, timers, deal
-- secrets, outbox), a person's id for that person's streams (player-, wallet-) and rows
-- (wallets, stats, holds). So every append is one shard's: `events.shard_key` and
-- `processed_commands.shard_key` carry the key, and `append_to_shard(key, batch)`, distributed
-- by its key argument, runs the whole append (checks, events, command, rows) on the shard's
-- worker in one round trip.
--
-- Bearer tokens and their stream tickets shard by the token's hash; accounts are a reference
-- table (a name is unique across all people: one place to check it); login failures, sign-ups
-- and schema_migrations stay on the coordinator (rate limits, few rows).

do $migration$
declare
    shards integer;
begin
    if not exists (select 1 from pg_extension where extname = 'citus') then
        return;
    end if;
    if exists (select 1 from events) then
        raise exception 'distributing a store that has events is not supported: start from an '
                        'empty database (docs/scaling.md)';
    end if;
    -- Unsafe only for triggers that reach other shards: ours read their own shard (below).
    set local citus.enable_unsafe_triggers = on;
    set local citus.multi_shard_modify_mode = 'sequential';

    -- The shard key, in every key of the distributed tables.
    alter table events add column shard_key text not null;
    alter table events drop constraint events_pkey;
    alter table events add constraint events_pkey primary key (shard_key, position);
    alter table events drop constraint events_stream_version_key;
    alter table events
        add constraint events_stream_version_key unique (shard_key, stream, version);
    -- Citus sends a shard every column of an inserted row, defaults evaluated: swarm_app needs
    -- INSERT on all of them. It still chooses neither `txid` nor `recorded_at` (the chain
    -- trigger below stamps both, whatever the row carried) nor `position` (an identity
    -- generated always).
    grant insert on events to swarm_app;

    alter table processed_commands add column shard_key text not null;
    alter table processed_commands drop constraint processed_commands_pkey;
    alter table processed_commands
        add constraint processed_commands_pkey primary key (shard_key, stream, command_id);

    alter table timers add column table_id text not null;
    alter table timers drop constraint timers_pkey;
    alter table timers add constraint timers_pkey primary key (table_id, game_id, deadline);

    alter table deal_secrets add column table_id text not null;
    alter table deal_secrets drop constraint deal_secrets_pkey;
    alter table deal_secrets add constraint deal_secrets_pkey primary key (table_id, game_id);
    create index deal_secrets_by_game on deal_secrets (game_id);

    alter table stream_tickets drop constraint stream_tickets_pkey;
    alter table stream_tickets
        add constraint stream_tickets_pkey primary key (token_hash, ticket_hash);

    -- The chain trigger (0015) reads the previous event from the shard it inserts into (its
    -- own table: the shard, on a worker), never through the distributed table.
    create or replace function events_chain_v2() returns trigger
    language plpgsql
    as $fn$
    declare
        prev_hash  bytea;
        prev_chain smallint;
        prev_at    timestamptz;
    begin
        NEW.txid := pg_current_xact_id();
        NEW.recorded_at := clock_timestamp();
        if NEW.version = 1 then
            prev_hash := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
            prev_chain := NEW.chain;
        else
            execute format(
                'select e.hash, e.chain, e.recorded_at from %I.%I e '
                'where e.shard_key = $1 and e.stream = $2 and e.version = $3',
                TG_TABLE_SCHEMA, TG_TABLE_NAME)
               into prev_hash, prev_chain, prev_at
              using NEW.shard_key, NEW.stream, NEW.version - 1;
            if prev_chain is null then
                raise exception 'version % of % follows no event', NEW.version, NEW.stream
                    using errcode = 'SWCON', detail = NEW.stream || E'\t' || '0';
            end if;
        end if;
        if prev_chain <> NEW.chain then
            raise exception 'stream % is chained under v%, not v%', NEW.stream, prev_chain,
                            NEW.chain
                using errcode = 'SWHED',
                      detail = NEW.stream || E'\t' || '' || E'\t' || prev_chain::text;
        end if;
        if NEW.chain = 1 then
            return NEW;
        end if;
        if length(NEW.hash) <> 32 then
            raise exception 'a v2 event carries its 32-byte body digest in hash';
        end if;
        NEW.recorded_at := greatest(NEW.recorded_at, prev_at);
        NEW.hash := sha256(
            'swarm/event/v2'::bytea || prev_hash || NEW.hash
            || int8send((extract(epoch from NEW.recorded_at) * 1000000)::bigint)
        );
        return NEW;
    end;
    $fn$;

    -- Citus runs row triggers on each shard; a statement-level TRUNCATE trigger it refuses.
    -- TRUNCATE stays refused to swarm_app by privilege (it has SELECT and INSERT only).
    drop trigger events_no_truncate on events;

    -- The coordinator reaches the workers as the session's role, which is swarm_app's for the
    -- service (service/store/pool.py): it must be allowed to log in there (authenticated as
    -- the cluster's nodes authenticate each other: pg_dist_authinfo, certificates, pg_hba).
    alter role swarm_app login;

    shards := current_setting('citus.shard_count')::integer;
    perform create_distributed_table('events', 'shard_key', shard_count => shards);
    perform create_distributed_table('processed_commands', 'shard_key', colocate_with => 'events');
    perform create_distributed_table('lobby', 'table_id', colocate_with => 'events');
    perform create_distributed_table('table_members', 'table_id', colocate_with => 'events');
    perform create_distributed_table('timers', 'table_id', colocate_with => 'events');
    perform create_distributed_table('deal_secrets', 'table_id', colocate_with => 'events');
    perform create_distributed_table('money_outbox', 'table_id', colocate_with => 'events');
    perform create_distributed_table('wallets', 'player_id', colocate_with => 'events');
    perform create_distributed_table('player_stats', 'player_id', colocate_with => 'events');
    perform create_distributed_table('stake_holds', 'player_id', colocate_with => 'events');
    perform create_distributed_table('access_tokens', 'token_hash', shard_count => shards);
    perform create_distributed_table('stream_tickets', 'token_hash',
                                     colocate_with => 'access_tokens');
    perform create_distributed_table('idempotency_keys', 'lookup',
                                     colocate_with => 'access_tokens');
    perform create_reference_table('accounts');

    -- The append, whole, on the shard's worker. `p_batch`:
    --   {"streams": [{"stream", "expected", "head" (hex or null), "chain", "shard"}],
    --    "events": [{"stream", "version", "type", "data" (the event), "hash" (hex)}],
    --    "metadata": {...}, "command": {"stream", "id", "version", "shard"} or null,
    --    "rows": [{"sql": an INSERT/UPDATE/DELETE with $n, "args": [text or null]}]}
    -- Each row statement's $n are bound as quoted literals (quote_nullable) in one pass.
    -- Delegated to the worker of `p_shard` (one round trip), every stream, command and row of
    -- the batch must be on that shard (service/store/citus.py sees to it); called inside a
    -- transaction block, it runs on the coordinator and routes each statement to its shard.
    -- Refusals raise what append_events_quiet raises (SWDUP, SWCON, SWHED).
    create function append_to_shard(p_shard text, p_batch jsonb) returns jsonb
    language plpgsql
    set standard_conforming_strings = on
    as $fn$
    declare
        cmd     jsonb := p_batch -> 'command';
        s       jsonb;
        r       jsonb;
        done    integer;
        actual  integer;
        head    bytea;
        scheme  smallint;
        parts   text[];
        nums    integer[];
        stmt    text;
        j       integer;
        result  jsonb;
    begin
        if jsonb_typeof(cmd) = 'object' then
            select c.version into done
              from processed_commands c
             where c.shard_key = cmd ->> 'shard' and c.stream = cmd ->> 'stream'
               and c.command_id = cmd ->> 'id';
            if found then
                raise exception 'command already processed'
                    using errcode = 'SWDUP', detail = done::text;
            end if;
        else
            cmd := null;
        end if;

        for s in select * from jsonb_array_elements(p_batch -> 'streams') loop
            select e.version, e.hash, e.chain into actual, head, scheme
              from events e
             where e.shard_key = s ->> 'shard' and e.stream = s ->> 'stream'
             order by e.version desc
             limit 1;
            if not found then
                actual := 0;
                head := null;
                scheme := 2;
            end if;
            if actual <> (s ->> 'expected')::integer then
                if cmd is not null then
                    select c.version into done
                      from processed_commands c
                     where c.shard_key = cmd ->> 'shard' and c.stream = cmd ->> 'stream'
                       and c.command_id = cmd ->> 'id';
                    if found then
                        raise exception 'command already processed'
                            using errcode = 'SWDUP', detail = done::text;
                    end if;
                end if;
                raise exception 'stream is not at the expected version'
                    using errcode = 'SWCON', detail = (s ->> 'stream') || E'\t' || actual::text;
            end if;
            if scheme is distinct from (s ->> 'chain')::smallint then
                raise exception 'stream is chained under another version'
                    using errcode = 'SWHED',
                          detail = (s ->> 'stream') || E'\t' || coalesce(encode(head, 'hex'), '')
                                   || E'\t' || scheme::text;
            end if;
            if actual > 0 and head is distinct from decode(s ->> 'head', 'hex') then
                raise exception 'stream head is not the one decided on'
                    using errcode = 'SWHED',
                          detail = (s ->> 'stream') || E'\t' || coalesce(encode(head, 'hex'), '')
                                   || E'\t' || scheme::text;
            end if;
        end loop;

        with inserted as (
            insert into events (shard_key, stream, version, type, data, hash, metadata, chain)
            select x ->> 'shard', e ->> 'stream', (e ->> 'version')::integer, e ->> 'type',
                   e -> 'data', decode(e ->> 'hash', 'hex'), p_batch -> 'metadata',
                   (x ->> 'chain')::smallint
              from jsonb_array_elements(p_batch -> 'events') with ordinality as a(e, n)
              join jsonb_array_elements(p_batch -> 'streams') as x on x ->> 'stream' = e ->> 'stream'
             order by a.n
            returning events.position, events.stream, events.version, events.type,
                      events.data::text, events.metadata::text, events.recorded_at,
                      events.hash, events.chain
        )
        select coalesce(jsonb_agg(jsonb_build_array(
                   i.position, i.stream, i.version, i.type, i.data, i.metadata, i.recorded_at,
                   encode(i.hash, 'hex'), i.chain) order by i.position), '[]'::jsonb)
          into result
          from inserted i;

        if cmd is not null then
            insert into processed_commands (shard_key, stream, command_id, version)
            values (cmd ->> 'shard', cmd ->> 'stream', cmd ->> 'id', (cmd ->> 'version')::integer);
        end if;

        for r in select * from jsonb_array_elements(coalesce(p_batch -> 'rows', '[]')) loop
            parts := regexp_split_to_array(r ->> 'sql', '\$[0-9]+');
            nums := array(select m[1]::integer
                            from regexp_matches(r ->> 'sql', '\$([0-9]+)', 'g') as m);
            stmt := parts[1];
            for j in 1 .. coalesce(array_length(nums, 1), 0) loop
                stmt := stmt || quote_nullable(r -> 'args' ->> (nums[j] - 1)) || parts[j + 1];
            end loop;
            execute stmt;
        end loop;
        return result;
    end;
    $fn$;

    perform create_distributed_function(
        'append_to_shard(text, jsonb)', distribution_arg_name => 'p_shard',
        colocate_with => 'events');
    grant execute on function append_to_shard(text, jsonb) to swarm_app;
end;
$migration$;
