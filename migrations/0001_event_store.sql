-- 0001: the event store.
--
-- One append-only table. (stream, version) is unique and doubles as the optimistic-concurrency
-- backstop; `position` is the global order that readers of the whole log follow. Writers are
-- serialised by a transaction-level advisory lock in the application (service/store/events.py),
-- so positions become visible in order and a tailing reader never skips a late commit.

create table events (
    position    bigint generated always as identity primary key,
    stream      text        not null,
    version     integer     not null check (version > 0),
    type        text        not null,
    data        jsonb       not null,
    metadata    jsonb       not null default '{}',
    recorded_at timestamptz not null default clock_timestamp(),
    constraint events_stream_version_key unique (stream, version)
);

comment on table events is 'Append-only event log. Rows are never updated or deleted.';

-- Immutability by trigger: holds even for the table owner and superusers.
create function events_are_immutable() returns trigger
language plpgsql as $$
begin
    raise exception 'events are immutable: % on table events is not allowed', tg_op
        using errcode = 'restrict_violation',
              hint = 'The event log is append-only; record a compensating event instead.';
end;
$$;

create trigger events_no_update_or_delete
    before update or delete on events
    for each row execute function events_are_immutable();

create trigger events_no_truncate
    before truncate on events
    for each statement execute function events_are_immutable();

-- Idempotency index: which stream version a client command id produced.
create table processed_commands (
    stream     text    not null,
    command_id text    not null,
    version    integer not null,
    constraint processed_commands_pkey primary key (stream, command_id)
);

-- The application role: SELECT and INSERT only, so immutability also holds by privilege
-- (as message-db does in database/privileges/table.sql). Roles are cluster-wide, so creation
-- must tolerate another database or process having created it first.
do $$
begin
    if not exists (select 1 from pg_roles where rolname = 'swarm_app') then
        create role swarm_app nologin;
    end if;
exception
    when duplicate_object or unique_violation then
        null;  -- created concurrently by someone else: fine
end;
$$;

grant usage on schema public to swarm_app;
grant select, insert on events to swarm_app;
grant usage on sequence events_position_seq to swarm_app;
grant select, insert on processed_commands to swarm_app;
