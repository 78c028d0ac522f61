-- 0009: appends without a global lock, in one round trip (service/store/events.py).
--
-- Until now every append took one advisory lock for the whole log so that `position` committed
-- in order for a reader of the whole log. Appends now run side by side; a reader of the whole
-- log in order reads behind a transaction-id horizon instead:
--
-- * `txid` is the id of the transaction that wrote the row (`pg_current_xact_id()`, an xid8,
--   which never wraps around). Rows written before this migration read as 0.
-- * `EventStore.read_all` orders by (txid, position) and returns only rows whose txid is below
--   `pg_snapshot_xmin(pg_current_snapshot())`: every transaction below that horizon has
--   committed or aborted, so no row can appear there later. A transaction that commits late has
--   a txid at or above the horizon, so it is read after, never skipped.
--
-- `append_events` is the whole append in one statement: the idempotency check, each stream's
-- version and chain head checked against what the caller decided on, the inserts, the
-- processed command and the wake-ups. SECURITY INVOKER (the default): it runs with the
-- caller's privileges, and swarm_app may only SELECT and INSERT, which is all it does. Failures
-- are raised, so a caller's statement that also writes projection rows is undone with it:
--   SWDUP  the command was processed before (detail: the version it produced)
--   SWCON  a stream is not at the expected version (detail: stream, tab, actual version)
--   SWHED  the caller's head hash is not the stored one (detail: stream, tab, hex of the hash)
-- A writer racing us past these checks meets the unique indexes (events_stream_version_key,
-- processed_commands_pkey) instead, which the caller maps the same way.

alter table events add column txid xid8 not null default '0';
alter table events alter column txid set default pg_current_xact_id();

comment on column events.txid is
    'The writing transaction (pg_current_xact_id()); 0 before 0009. read_all reads behind the '
    'horizon pg_snapshot_xmin(pg_current_snapshot()) in (txid, position) order.';

create index events_txid_position on events (txid, position);

-- The application may not choose `position`, `recorded_at` or `txid` itself: the horizon is only
-- as good as the txid, so it always comes from the default.
revoke insert on events from swarm_app;
grant insert (stream, version, type, data, metadata, hash) on events to swarm_app;

create function append_events(
    p_streams    text[],     -- each stream appended to, once
    p_expected   integer[],  -- its version as decided on (0: it must not exist yet)
    p_heads      bytea[],    -- its head hash as decided on (null when p_expected is 0)
    e_streams    text[],     -- each event: stream, version, type, data, chain hash
    e_versions   integer[],
    e_types      text[],
    e_data       text[],
    e_hashes     bytea[],
    p_metadata   text,
    p_cmd_stream text,       -- the command's stream and id (null: not idempotent)
    p_cmd_id     text,
    p_cmd_version integer    -- the version the command leaves its stream at
) returns table (
    r_position bigint, r_stream text, r_version integer, r_type text, r_data text,
    r_metadata text, r_recorded_at timestamptz, r_hash bytea
)
language plpgsql
as $$
declare
    done    integer;
    actual  integer;
    head    bytea;
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
        select e.version, e.hash into actual, head
          from events e
         where e.stream = p_streams[i]
         order by e.version desc
         limit 1;
        if not found then
            actual := 0;
            head := null;
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
        if actual > 0 and head is distinct from p_heads[i] then
            raise exception 'stream head is not the one decided on'
                using errcode = 'SWHED',
                      detail = p_streams[i] || E'\t' || coalesce(encode(head, 'hex'), '');
        end if;
    end loop;

    return query
    with inserted as (
        insert into events (stream, version, type, data, hash, metadata)
        select e.stream, e.version, e.type, e.data::jsonb, e.hash, p_metadata::jsonb
          from unnest(e_streams, e_versions, e_types, e_data, e_hashes)
               with ordinality as e(stream, version, type, data, hash, n)
         order by e.n
        returning events.position, events.stream, events.version, events.type,
                  events.data::text, events.metadata::text, events.recorded_at, events.hash
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
    text[], integer[], bytea[], text[], integer[], text[], text[], bytea[], text, text, text, integer
) to swarm_app;
