-- Stream tickets: how a browser's EventSource, which cannot send an Authorization header,
-- opens a game or table stream without the long-lived bearer token in the URL (where proxies
-- log it). A ticket is random, stored only as SHA-256, scoped to one stream, short-lived, and
-- tied to the token it was issued for: revoking or expiring that token ends the ticket too.
create table stream_tickets (
    ticket_hash bytea       primary key,
    token_hash  bytea       not null references access_tokens (token_hash),
    stream      text        not null,  -- 'game-<id>' or 'table-<id>'
    expires_at  timestamptz not null,
    created_at  timestamptz not null default now()
);
create index stream_tickets_by_token on stream_tickets (token_hash, expires_at);

-- Who sits at which table now (people only, solo and online): what listMyGames reads, so a
-- reload can resume. A projection of the table streams, rewritten in the same transaction as
-- every table event (never behind them); a closed table has no rows.
create table table_members (
    table_id  text        not null,
    player_id text        not null,
    mode      text        not null,  -- 'solo' or 'online'
    joined_at timestamptz not null default now(),
    primary key (table_id, player_id)
);
create index table_members_by_player on table_members (player_id, joined_at desc);

-- Backfill from the table streams written before this projection: each person's last seat
-- event at each table that is not closed.
insert into table_members (table_id, player_id, mode, joined_at)
select m.table_id, m.player_id, o.mode, m.at
  from (
    select distinct on (e.stream, p.player_id)
           substr(e.stream, 7) as table_id, p.player_id, e.type, e.recorded_at as at
      from events e
      cross join lateral (
        select e.data ->> 'player_id' as player_id where e.type in ('seat_taken', 'seat_freed')
        union all
        select s ->> 'player_id' from jsonb_array_elements(
            case when e.type = 'table_opened' then e.data -> 'seats' else '[]'::jsonb end) s
      ) p
     where e.stream like 'table-%' and p.player_id is not null
       and e.type in ('table_opened', 'seat_taken', 'seat_freed')
     order by e.stream, p.player_id, e.version desc
  ) m
  join lateral (
    select e.data ->> 'mode' as mode from events e
     where e.stream = 'table-' || m.table_id and e.type = 'table_opened' limit 1
  ) o on true
 where m.type <> 'seat_freed'
   and not exists (
    select 1 from events c where c.stream = 'table-' || m.table_id and c.type = 'table_closed');

grant select, insert, delete on stream_tickets to swarm_app;
grant select, insert, delete on table_members to swarm_app;
