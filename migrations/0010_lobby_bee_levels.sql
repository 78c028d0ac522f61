-- Each bee seat's level at a table, in seat order (issue 16: the lobby shows how its bees play).
-- Rows written before have none: their tables had no level to show.
alter table lobby add column bee_levels text[] not null default '{}';
