"""The Citus tier's smoke, in `make test`: `swarm migrate` distributes the store on the cluster
and an append is one delegated call on one shard (by `citus_stat_counters`). Skipped, in red,
when no cluster runs (`make citus-up`; the whole tier: `make test-citus`)."""

from __future__ import annotations

import uuid

import psycopg

from service.store import citus
from service.store.events import EventStore
from service.store.log import NewEvent, StreamAppend

_COUNTERS = """
select query_execution_single_shard, query_execution_multi_shard
  from citus_stat_counters where name = current_database()
"""


async def test_the_store_is_distributed_and_an_append_is_one_shard(
    database_url: str, event_store: EventStore
) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        kinds: dict[str, str] = dict(
            conn.execute("select logicalrelid::text, partmethod from pg_dist_partition").fetchall()
        )
        assert kinds["events"] == "h" and kinds["lobby"] == "h" and kinds["accounts"] == "n"
        table = f"table-{uuid.uuid4()}"
        await event_store.append(StreamAppend(table, 0, [NewEvent("opened", b'{"n": 1}')]))
        before = conn.execute(_COUNTERS).fetchone()
        events = await event_store.append(
            StreamAppend(table, 1, [NewEvent("moved", b'{"n": 2}')]), command=(table, "c1")
        )
        after = conn.execute(_COUNTERS).fetchone()
    assert before is not None and after is not None
    assert (after[0] - before[0], after[1] - before[1]) == (1, 0)
    assert [e.version for e in events] == [2]
    verdict = await event_store.verify_stream(table)
    assert verdict.ok and verdict.verified == 2, verdict


async def test_ids_are_drawn_beside_their_table_by_citus_hash(database_url: str) -> None:
    """`citus.hashtext` is Citus' own `worker_hash` of a text key, and a game id drawn for a
    table (`EventLog.colocated_id`) lands on the table's shard by Citus' own reckoning."""
    keys = [str(uuid.uuid4()) for _ in range(100)] + ["", "a", "é" * 7, "x" * 13]
    with psycopg.connect(database_url, autocommit=True) as conn:
        for key in keys:
            row = conn.execute("select worker_hash(%s::text)", (key,)).fetchone()
            assert row is not None and row[0] == citus.hashtext(key), key
        pool_layout = citus.Layout(
            True,
            conn.execute(
                "select shardminvalue::integer, shardmaxvalue::integer from pg_dist_shard"
                " where logicalrelid = 'events'::regclass order by 1"
            ).fetchall(),
        )
        for _ in range(20):
            table = str(uuid.uuid4())
            game = pool_layout.colocated_id(table)
            shards = conn.execute(
                "select get_shard_id_for_distribution_column('events', %s::text),"
                " get_shard_id_for_distribution_column('events', %s::text)",
                (table, game),
            ).fetchone()
            assert shards is not None and shards[0] == shards[1] and game != table
