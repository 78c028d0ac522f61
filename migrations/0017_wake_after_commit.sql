-- 0017: an append that does not notify (issue 28). `append_events` (0015) runs `pg_notify` inside
-- the appending transaction, so every append's commit took PostgreSQL's one server-wide lock
-- for notifying transactions, from its pre-commit until its commit record was flushed: commits
-- of appends to different games queued behind each other (pgbench on this server, 16 clients:
-- 12,734 inserting transactions a second, 1,134 with a pg_notify in each). The service now
-- appends with `append_events_quiet` and sends the wake-up after the commit, one NOTIFY
-- statement for every stream its process wrote since the last (service/store/events.py
-- `_Wakener`); a wake-up lost to a crash between the commit and it only delays followers until
-- their next heartbeat re-read.
--
-- The same function as 0015's `append_events`, without its `woken` step. `append_events` stays
-- for instances of an older release during a rolling deploy (they keep notifying in their
-- appends, which wakes everyone as before); a later migration may drop it.

create function append_events_quiet(
    p_streams    text[],     -- each stream appended to, once
    p_expected   integer[],  -- its version as decided on (0: it must not exist yet)
    p_heads      bytea[],    -- its head hash as decided on (null when p_expected is 0)
    e_streams    text[],     -- each event: stream, version, type, data, chain hash
    e_versions   integer[],
    e_types      text[],
    e_data       text[],
    e_hashes     bytea[],    -- v1: the chain hash; v2: the body digest (the trigger chains it)
    p_metadata   text,
    p_cmd_stream text,       -- the command's stream and id (null: not idempotent)
    p_cmd_id     text,
    p_cmd_version integer,   -- the version the command leaves its stream at
    p_chains     smallint[]  -- each stream's chain version (1 or 2), as the caller hashed it
) returns table (
    r_position bigint, r_stream text, r_version integer, r_type text, r_data text,
    r_metadata text, r_recorded_at timestamptz, r_hash bytea, r_chain smallint
)
language plpgsql
as $$
declare
    done    integer;
    actual  integer;
    head    bytea;
    scheme  smallint;
    i       integer;
begin
    if p_cmd_id is not null then
        select c.version into done
          from processed_commands c
         where c.stream = p_cmd_stream and c.command_id = p_cmd_id;
        if found then
            raise exception 'command already processed'
                using errcode = 'SWDUP', detail = done::text;
        end if;
    end if;

    for i in 1 .. coalesce(array_length(p_streams, 1), 0) loop
        select e.version, e.hash, e.chain into actual, head, scheme
          from events e
         where e.stream = p_streams[i]
         order by e.version desc
         limit 1;
        if not found then
            actual := 0;
            head := null;
            scheme := 2;  -- every new stream is chained under v2
        end if;
        if actual <> p_expected[i] then
            if p_cmd_id is not null then
                -- Only on this slow path: a copy of this command that committed since the check
                -- above may be what moved the stream on (each statement here sees the latest
                -- commits).
                select c.version into done
                  from processed_commands c
                 where c.stream = p_cmd_stream and c.command_id = p_cmd_id;
                if found then
                    raise exception 'command already processed'
                        using errcode = 'SWDUP', detail = done::text;
                end if;
            end if;
            raise exception 'stream is not at the expected version'
                using errcode = 'SWCON', detail = p_streams[i] || E'\t' || actual::text;
        end if;
        if scheme is distinct from p_chains[i] then
            raise exception 'stream is chained under another version'
                using errcode = 'SWHED',
                      detail = p_streams[i] || E'\t' || coalesce(encode(head, 'hex'), '')
                               || E'\t' || scheme::text;
        end if;
        if actual > 0 and head is distinct from p_heads[i] then
            raise exception 'stream head is not the one decided on'
                using errcode = 'SWHED',
                      detail = p_streams[i] || E'\t' || coalesce(encode(head, 'hex'), '')
                               || E'\t' || scheme::text;
        end if;
    end loop;

    return query
    with inserted as (
        insert into events (stream, version, type, data, hash, metadata, chain)
        select e.stream, e.version, e.type, e.data::jsonb, e.hash, p_metadata::jsonb,
               p_chains[array_position(p_streams, e.stream)]
          from unnest(e_streams, e_versions, e_types, e_data, e_hashes)
               with ordinality as e(stream, version, type, data, hash, n)
         order by e.n
        returning events.position, events.stream, events.version, events.type,
                  events.data::text, events.metadata::text, events.recorded_at, events.hash,
                  events.chain
    ), recorded as (
        insert into processed_commands (stream, command_id, version)
        select p_cmd_stream, p_cmd_id, p_cmd_version where p_cmd_id is not null
    )
    select inserted.* from inserted order by inserted.position;
end;
$$;

grant execute on function append_events_quiet(
    text[], integer[], bytea[], text[], integer[], text[], text[], bytea[], text, text, text,
    integer, smallint[]
) to swarm_app;
