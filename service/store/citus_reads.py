"""Reads of every shard that do not wait for a worker that is away (docs/scaling.md, "Reads
across shards while a worker is away").

Citus has no way to answer a query from some of its shards: a statement over every shard of
the lobby, the members, the games played or the records fails when one worker is away, and
only after Citus' own connection timeouts when its link is cut (3 s to connect, 3 s on a
connection already open). So the lobby, My games, the history and the leaderboard run Citus'
own statement while every worker answers (`whole`, bounded by `WHOLE_DEADLINE`), and when it
fails or a worker is known to be away, read each worker themselves, through the coordinator
(`across`): one statement asks every worker that is not known to be away for its shards' rows
(`master_run_on_worker`, a fresh connection to each worker, in parallel, the shard tables
named from `pg_dist_placement`), with a short connection timeout (`CONNECT_TIMEOUT_MS`); each
worker answers its rows as one JSON array, and the rows of all of them are merged and ordered
here as the plain statement orders them.

A worker that does not answer is left out (`Reach.missing`) and, for `AWAY_FOR` seconds, not
asked again: the reads in between answer at once without it. A read that may not answer
without it (no `Reach`: the leaderboard, whose ranks count everyone) raises `ShardsAway`, a
503 `database-unavailable`, at once. A stream read whose shard is on a worker known to be away
(`ensure_reachable`) raises it too, instead of waiting for Citus' timeouts.

Nothing here runs on plain PostgreSQL, where every read is whole or fails as a whole.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec

from service.store import citus
from service.store.log import LogCursor, RecordedEvent
from service.store.pool import UNAVAILABLE, Pool
from service.store.port import PoolExhausted
from service.store.rows import Reach, ShardsAway

log = logging.getLogger(__name__)

# How long a worker may take to accept a read's connection (`citus.node_connection_timeout`
# for that statement only): a worker on the same network accepts in milliseconds; one that does
# not within this is left out of the answer.
CONNECT_TIMEOUT_MS = 1000
# Seconds Citus' own statement over every shard may take before the read asks each worker on
# its own instead (`whole`): it answers in milliseconds while every worker does, and waits
# Citus' connection timeouts (3 s and more) for one whose link is cut.
WHOLE_DEADLINE = 1.0
# Seconds a worker that did not answer is left out before a read asks it again: at most one
# read in this time waits `CONNECT_TIMEOUT_MS` for a worker that is still away.
AWAY_FOR = 5.0

# Every worker's shards of a table (all of them but those of the nodes in $4) asked in one
# statement: each worker runs the per-shard query $2 (a `format` string: %1$s the shard's
# name, %2$L... the arguments $3) on each of its shards, and answers the rows as one JSON
# array. master_run_on_worker reports per worker whether it answered (a worker it could not
# connect to is a row with `success` false), instead of failing the statement.
_ACROSS = """
with workers as (
  select n.nodeid, n.nodename, n.nodeport,
         format('select coalesce(json_agg(t), ''[]'')::text from (%s) as t',
                string_agg('(' || format($2, variadic array_prepend(
                                   shard_name(s.logicalrelid, s.shardid)::text, $3::text[]))
                           || ')', ' union all ' order by s.shardid)) as command
    from pg_dist_shard as s
    join pg_dist_placement as p using (shardid)
    join pg_dist_node as n using (groupid)
   where s.logicalrelid = $1::regclass and p.shardstate = 1
     and n.isactive and n.noderole = 'primary' and not n.nodeid = any($4::integer[])
   group by n.nodeid, n.nodename, n.nodeport
), asked as (
  select array_agg(nodeid order by nodeid) as ids,
         array_agg(nodename || ':' || nodeport order by nodeid) as names,
         array_agg(nodename order by nodeid) as hosts,
         array_agg(nodeport order by nodeid) as ports,
         array_agg(command order by nodeid) as commands
    from workers
)
select a.ids[r.i], a.names[r.i], r.success, r.result
  from asked as a,
       master_run_on_worker(a.hosts, a.ports, a.commands, true)
         with ordinality as r(host, port, success, result, i)
"""
_SET_TIMEOUT = f"set local citus.node_connection_timeout = {CONNECT_TIMEOUT_MS}"

# The worker that holds a key's shard.
_WORKER_OF = """
select n.nodeid from pg_dist_placement as p join pg_dist_node as n using (groupid)
 where p.shardid = get_shard_id_for_distribution_column('events', $1::text)
"""


class _Workers:
    """The workers of one database that did not answer lately: node id -> (until when they are
    left out, their address)."""

    def __init__(self) -> None:
        self.away: dict[int, tuple[float, str]] = {}

    def current(self) -> dict[int, str]:
        now = time.monotonic()
        for node, (until, _) in list(self.away.items()):
            if until <= now:
                del self.away[node]
        return {node: name for node, (_, name) in self.away.items()}


_WORKERS: weakref.WeakKeyDictionary[Pool, _Workers] = weakref.WeakKeyDictionary()


def _workers(pool: Pool) -> _Workers:
    known = _WORKERS.get(pool)
    if known is None:
        known = _WORKERS[pool] = _Workers()
    return known


def _unreachable(message: str) -> bool:
    """Whether a worker's failure is its absence (no connection, a connection lost, a server
    shutting down), not an error of the query, which is a bug to raise."""
    return not message.lstrip().startswith("ERROR:")


async def across(
    pool: Pool, table: str, shard_sql: str, args: Sequence[Any], reach: Reach | None
) -> list[bytes]:
    """Each answering worker's rows of ``table``'s shards by ``shard_sql`` (%1$s: the shard,
    %2$L...: ``args`` as literals), one JSON array per worker. The workers that did not answer
    are added to ``reach``; without one (a read that must be whole) any raises `ShardsAway`."""
    workers = _workers(pool)
    away = workers.current()
    if away and reach is None:
        raise ShardsAway(sorted(away.values()))
    async with pool.acquire() as conn, conn.transaction(readonly=True):
        await conn.execute(_SET_TIMEOUT)
        rows = await conn.fetch(
            _ACROSS, table, shard_sql, [citus.literal(a) for a in args], sorted(away)
        )
    answers: list[bytes] = []
    missing = set(away.values())
    for node, name, success, result in rows:
        if success:
            answers.append(result.encode("utf-8"))
            continue
        if not _unreachable(result or ""):
            raise RuntimeError(f"a read of {table} failed on {name}: {result}")
        log.warning("worker %s did not answer a read of %s: %s", name, table, result)
        workers.away[node] = (time.monotonic() + AWAY_FOR, name)
        missing.add(name)
    if missing:
        if reach is None:
            raise ShardsAway(sorted(missing))
        reach.missing.update(missing)
    return answers


async def ensure_reachable(pool: Pool, key: str) -> None:
    """Raise `ShardsAway` at once if ``key``'s shard is on a worker known to be away (nothing
    to ask while none is)."""
    away = _workers(pool).current()
    if not away:
        return
    node = await pool.fetchval(_WORKER_OF, key)
    if node in away:
        raise ShardsAway([away[node]])


def _ended(statement: asyncio.Future[Any]) -> None:
    """A statement left to end by itself: its failure is expected, and already answered for."""
    if not statement.cancelled():
        statement.exception()


async def whole(pool: Pool, sql: str, *args: Any) -> list[Any] | None:
    """The rows of ``sql``, Citus' own statement over every shard, when no worker is known to
    be away and it answers within `WHOLE_DEADLINE`; None when a worker is away or it did not
    (the caller then asks each worker on its own, `across`, which finds out which). The
    statement is the cheap way while every worker answers: `across` opens a connection to
    each worker for every read."""
    if _workers(pool).current():
        return None
    # Not cancelled at the deadline but left to end by itself (Citus' timeouts, the statement
    # timeout): cancelling it waits for the coordinator to cancel its statement on the worker
    # that is away, seconds more (6 s in all, measured, where this answers in 2).
    statement = asyncio.ensure_future(pool.fetch(sql, *args))
    done, _ = await asyncio.wait({statement}, timeout=WHOLE_DEADLINE)
    if not done:
        statement.add_done_callback(_ended)
        log.warning("a read across shards took over %s s: asking each worker", WHOLE_DEADLINE)
        return None
    try:
        rows: list[Any] = statement.result()
    except PoolExhausted:
        raise  # this instance is overloaded, not the cluster partial: 503 `overloaded`
    except UNAVAILABLE as exc:
        log.warning("a read across shards did not answer whole (%r): asking each worker", exc)
        return None
    return rows


# --- the whole log, shard by shard ---------------------------------------------------------

# The shards of `events` in the order of their hash ranges (a shard's index in `Layout`), each
# with its table's name and the worker holding it.
_EVENT_SHARDS = """
select shard_name(s.logicalrelid, s.shardid), n.nodename, n.nodeport
  from pg_dist_shard as s
  join pg_dist_placement as p using (shardid)
  join pg_dist_node as n using (groupid)
 where s.logicalrelid = 'events'::regclass and p.shardstate = 1 and n.noderole = 'primary'
 order by s.shardminvalue::integer
"""
# One shard's page, run on its worker. A shard holds the rows of every worker that wrote them
# (moving a shard keeps each row's transaction id and position): the writer is the position's
# top bits (each node draws from its group id << 48). Each writer's rows are in its own
# (txid, position) order, after the cursor's place for that writer (%2$L: [[writer, txid,
# position], ...]); only the rows this worker wrote can still be in a transaction it is
# running, so its own horizon holds back only those (when %4$L).
_SHARD_PAGE = """
select coalesce(json_agg(t order by t.writer, t.txid, t.position), '[]')::text from (
  select e.position >> 48 as writer, e.position, e.stream, e.version, e.type,
         e.data::text as data, e.metadata::text as metadata, e.recorded_at,
         encode(e.hash, 'hex') as hash, e.chain, e.txid
    from %1$s as e
   where not exists (select 1 from jsonb_array_elements(%2$L::jsonb) as c
                      where (c->>0)::bigint = e.position >> 48
                        and (e.txid, e.position) <= ((c->>1)::xid8, (c->>2)::bigint))
     and (%3$L::text is null or starts_with(e.stream, %3$L::text))
     and (not %4$L::boolean
          or e.position >> 48 <> (select groupid from pg_dist_local_group)
          or e.txid < pg_snapshot_xmin(pg_current_snapshot()))
   order by e.position >> 48, e.txid, e.position
   limit %5$L::bigint) as t
"""
_ON_ONE_WORKER = """
select r.success, r.result
  from master_run_on_worker(array[$1::text], array[$2::integer],
                            array[format($3, variadic $4::text[])], false) as r
"""


class _LogRow(msgspec.Struct, frozen=True):
    writer: int
    position: int
    stream: str
    version: int
    type: str
    data: str
    metadata: str
    recorded_at: datetime
    hash: str | None
    chain: int
    txid: str  # an xid8, which JSON writes as a string


_LOG_ROWS = msgspec.json.Decoder(list[_LogRow])


def _places(
    places: list[dict[int, tuple[int, int]]],
) -> tuple[tuple[tuple[int, int, int], ...], ...]:
    """A reader's place in every shard, as `LogCursor.shards` holds it."""
    return tuple(tuple((w, t, p) for w, (t, p) in sorted(place.items())) for place in places)


_META = msgspec.json.Decoder(dict[str, Any])


async def read_all(
    pool: Pool, after: LogCursor, limit: int, stream_prefix: str | None, horizon: bool
) -> list[RecordedEvent]:
    """`EventStore.read_all` on Citus: every shard in the order of their hash ranges, each in
    its own (txid, position) order after the cursor's place in it and below its own worker's
    horizon; each event's `cursor` is the reader's place in every shard once it is read.
    Transaction ids and horizons are a worker's own, so one (txid, position) cannot say where
    a reader is in the whole log (docs/scaling.md, "The whole log on Citus")."""
    shards = await pool.fetch(_EVENT_SHARDS)
    if after.shards and len(after.shards) != len(shards):
        raise ValueError("the cursor was taken with another number of shards")
    places = [{w: (t, p) for w, t, p in place} for place in after.shards] or [{} for _ in shards]
    events: list[RecordedEvent] = []
    for index, (name, host, port) in enumerate(shards):
        if len(events) >= limit:
            break
        place = msgspec.json.encode([[w, t, p] for w, (t, p) in places[index].items()])
        args = [name, place.decode(), stream_prefix, str(horizon).lower()]
        args.append(str(limit - len(events)))
        [(success, result)] = await pool.fetch(_ON_ONE_WORKER, host, port, _SHARD_PAGE, args)
        result = result or ""
        if not success:
            if _unreachable(result):
                raise ShardsAway([f"{host}:{port}"])
            raise RuntimeError(f"a read of the log failed on {host}:{port}: {result}")
        for r in _LOG_ROWS.decode(result):
            places[index][r.writer] = (int(r.txid), r.position)
            events.append(
                RecordedEvent(
                    position=r.position,
                    stream=r.stream,
                    version=r.version,
                    type=r.type,
                    data=r.data.encode("utf-8"),
                    metadata=_META.decode(r.metadata),
                    recorded_at=r.recorded_at,
                    hash=b"" if r.hash is None else bytes.fromhex(r.hash),
                    txid=int(r.txid),
                    chain=r.chain,
                    after=LogCursor(shards=_places(places)),
                )
            )
    return events
