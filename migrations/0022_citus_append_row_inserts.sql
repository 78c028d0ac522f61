-- 0022: on Citus, the append inserts its events one row at a time (issue 46, `make bench-citus`;
-- nothing changes on plain PostgreSQL). 0018's `append_to_shard` inserted the batch's events
-- with one INSERT ... SELECT from the batch's jsonb; Citus plans that, on the worker the call is
-- delegated to, as "pull to coordinator": the selected rows written to an intermediate result
-- (a file in a directory made and removed for the transaction), then copied into the shard, and
-- the RETURNING rows read back from another. One single-row INSERT an event is a router query
-- on the shard, run locally: the worker's CPU per append about halves (docs/benchmarks.md).
-- The answer is the same: each event's position, stream, version, type, data, metadata,
-- recorded_at, hash and chain, in the order inserted (positions ascending).

do $migration$
begin
    if not exists (select 1 from pg_extension where extname = 'citus') then
        return;
    end if;
    create or replace function append_to_shard(p_shard text, p_batch jsonb) returns jsonb
    language plpgsql
    set standard_conforming_strings = on
    as $fn$
    declare
        cmd     jsonb := p_batch -> 'command';
        s       jsonb;
        r       jsonb;
        e       jsonb;
        key     text;
        o_position bigint;
        o_at    timestamptz;
        o_hash  bytea;
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

        -- One single-row INSERT an event: Citus plans each as a router query on the shard
        -- (local execution on the worker). An INSERT ... SELECT from the batch would be planned
        -- as "pull to coordinator": the rows written to an intermediate result file, then
        -- copied into the shard (0018 did that: most of an append's cost on the worker).
        result := '[]'::jsonb;
        for e in select * from jsonb_array_elements(p_batch -> 'events') loop
            select x into s from jsonb_array_elements(p_batch -> 'streams') as x
             where x ->> 'stream' = e ->> 'stream';
            key := s ->> 'shard';
            insert into events (shard_key, stream, version, type, data, hash, metadata, chain)
            values (key, e ->> 'stream', (e ->> 'version')::integer, e ->> 'type', e -> 'data',
                    decode(e ->> 'hash', 'hex'), p_batch -> 'metadata', (s ->> 'chain')::smallint)
            returning events.position, events.recorded_at, events.hash
                 into o_position, o_at, o_hash;
            result := result || jsonb_build_array(jsonb_build_array(
                o_position, e ->> 'stream', (e ->> 'version')::integer, e ->> 'type',
                (e -> 'data')::text, (p_batch -> 'metadata')::text, o_at,
                encode(o_hash, 'hex'), (s ->> 'chain')::smallint));
        end loop;

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

end;
$migration$;
