-- 0015: the hash chain v2, which hides what the rules hide (service/domain/chain.py,
-- docs/fairness.md "The hash chain").
--
-- v1 hashed each event's data as it is, so the hash shown beside a redacted event (another
-- seat's pick as `bee: null`) let anyone try every bee until one matched. Under v2 the
-- application hashes a *body*: the data with every hidden value sealed (HMAC under the game's
-- seal key, secret until the game ends) and the metadata; this migration's trigger chains it:
--
--   hash = SHA-256('swarm/event/v2' || prev_hash || body || int8(recorded_at in microseconds))
--
-- in the inserting statement, with `recorded_at` stamped by the database (never before the
-- previous event's), so v2 covers the time too and the application never chooses it.
--
-- `chain` says which version a row is chained under: 1 for every row before this migration,
-- and for every later row of a stream that began under v1 (its old events stay verifiable and
-- its chain unbroken); 2 for every stream created from now on. A stream never changes version
-- (the trigger refuses it), so nobody can downgrade a v2 stream to v1's open hashing.

alter table events add column chain smallint not null default 1
    constraint events_chain_known check (chain in (1, 2));

comment on column events.chain is
    'The hash chain version of the row (service/domain/chain.py): 1 before 0015 and for the '
    'streams that began then; 2 for every stream begun since. Uniform within a stream.';

grant insert (chain) on events to swarm_app;

create function events_chain_v2() returns trigger
language plpgsql
as $$
declare
    prev_hash  bytea;
    prev_chain smallint;
    prev_at    timestamptz;
begin
    if NEW.version = 1 then
        prev_hash := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
        prev_chain := NEW.chain;
    else
        select e.hash, e.chain, e.recorded_at into prev_hash, prev_chain, prev_at
          from events e
         where e.stream = NEW.stream and e.version = NEW.version - 1;
        if not found then
            raise exception 'version % of % follows no event', NEW.version, NEW.stream
                using errcode = 'SWCON', detail = NEW.stream || E'\t' || '0';
        end if;
    end if;
    if prev_chain <> NEW.chain then
        raise exception 'stream % is chained under v%, not v%', NEW.stream, prev_chain, NEW.chain
            using errcode = 'SWHED', detail = NEW.stream || E'\t' || '' || E'\t' || prev_chain::text;
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
$$;

create trigger events_chain_v2
    before insert on events
    for each row execute function events_chain_v2();

-- The append now says which chain version it hashed each stream under (p_chains).
drop function append_events(
    text[], integer[], bytea[], text[], integer[], text[], text[], bytea[], text, text, text, integer
);

create function append_events(
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
    ), woken as (
        -- Delivered to listeners only on commit (service/store/wakeups.py).
        select count(pg_notify('swarm_events', s.stream)) as n
          from (select distinct inserted.stream from inserted) as s
    )
    select inserted.* from inserted, woken order by inserted.position;
end;
$$;

grant execute on function append_events(
    text[], integer[], bytea[], text[], integer[], text[], text[], bytea[], text, text, text,
    integer, smallint[]
) to swarm_app;
