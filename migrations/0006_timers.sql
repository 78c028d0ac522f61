-- The turn clock's durable timers: one row per deadline a game has set (a turn's, or a too-low
-- choice's), written in the same transaction as the event that set it. Any instance claims due
-- rows with FOR UPDATE SKIP LOCKED; the row is deleted once its ExpireClock has been applied.
-- A deadline the game already moved past fires as a no-op (the rules check it).
create table timers (
    game_id  text        not null,
    deadline timestamptz not null,
    primary key (game_id, deadline)
);

create index timers_due on timers (deadline);

-- FOR UPDATE (the claim) needs the UPDATE privilege, though no row is ever updated.
grant select, insert, update, delete on timers to swarm_app;
