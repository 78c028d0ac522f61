"""The Citus tier's smoke, in `make test`: `swarm migrate` distributes the store on the cluster
and an append is one delegated call on one shard (by `citus_stat_counters`). Skipped, in red,
when no cluster runs (`make citus-up`; the whole tier: `make test-citus`)."""

from __future__ import annotations

import uuid

import psycopg

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
