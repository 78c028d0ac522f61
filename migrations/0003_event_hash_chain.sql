-- 0003: a tamper-evident log. Every event carries `hash`, SHA-256 chained to the previous event
-- of its stream (layout: service/chain.py). The application computes it inside the append
-- transaction, under the append lock, so concurrent writers cannot fork a chain.
--
-- Rows written before this migration keep a NULL hash: the immutability triggers forbid UPDATE,
-- so there is no backfill (there were no production games yet). Such streams fail verification
-- with "missing hash". `NOT VALID` skips checking those existing rows but still applies the
-- check to every row inserted from now on. The grants are unchanged: INSERT covers the column.

alter table events add column hash bytea;

alter table events
    add constraint events_hash_present check (hash is not null and length(hash) = 32) not valid;

comment on column events.hash is
    'SHA-256 chained to the previous event of the stream (service/chain.py); NULL only before 0003.';
