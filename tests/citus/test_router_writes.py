"""Every write the service makes is one shard's, by Citus' own count (issue 46): the flows of
tests/faults/test_shard_boundaries.py (guests, solo and online tables played to the end and
again, the clock, seeds, leaving, closing; a buy-in table's holds, stakes, pot and rewards, and
the sweeper) run on the cluster, and around every append the coordinator's
`citus_stat_counters` (Citus' executions of distributed statements, by single and multiple
shards) are read. Every append must add no multi-shard execution, and every append of a table's
or a game's streams exactly one single-shard execution (the one delegated call of
`append_to_shard`) plus the token check's, when it has one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

import psycopg
import pytest

from service.store.events import EventStore
from service.store.log import StreamAppend
from service.store.pool import Pool
from tests.citus.conftest import cluster_pool, fresh_database
from tests.faults import test_shard_boundaries as flows

_COUNTERS = """
select query_execution_single_shard, query_execution_multi_shard
  from citus_stat_counters where name = current_database()
"""


@pytest.fixture(scope="module")
def database_url(citus_env: dict[str, str]) -> Iterator[str]:
    """A database of this module's own: `citus_stat_counters` count a database's executions,
    and the flows' clock (`fire_due_timers` a year ahead) would fire the timers other modules'
    games left, in parallel, beside the appends measured here."""
    yield from fresh_database()


@pytest.fixture(scope="module")
async def pool(database_url: str) -> AsyncIterator[Pool]:
    async for each in cluster_pool(database_url):
        yield each


class Measured:
    def __init__(self) -> None:
        self.calls: list[flows.Call] = []
        self.executions: list[tuple[list[str], bool, int, int, bool]] = []


@pytest.fixture
def measured(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Measured]:
    seen = Measured()
    # The app's /metrics gauge counts the lobby every few seconds (a multi-shard read) beside
    # the appends measured here: off, so the counters see only the flows.
    monkeypatch.setenv("SWARM_METRICS", "0")
    original = EventStore.append_statements
    counters = psycopg.connect(database_url, autocommit=True)

    def now() -> tuple[int, int]:
        row = counters.execute(_COUNTERS).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    async def spy(
        self: EventStore,
        *batch: StreamAppend,
        metadata: Mapping[str, Any] | None = None,
        command: tuple[str, str] | None = None,
        also: Sequence[tuple[str, Sequence[Any]]] = (),
        guard: tuple[str, Sequence[Any]] | None = None,
    ) -> Any:
        assert await self.on_citus()
        streams = [a.stream for a in batch]
        refused = False
        seen.calls.append((streams, command, list(also)))
        single, multi = now()
        try:
            return await original(
                self, *batch, metadata=metadata, command=command, also=also, guard=guard
            )
        except Exception:
            refused = True
            raise
        finally:
            after_single, after_multi = now()
            seen.executions.append(
                (streams, guard is not None, after_single - single, after_multi - multi, refused)
            )

    monkeypatch.setattr(EventStore, "append_statements", spy)
    yield seen
    counters.close()


def _report(seen: Measured, name: str) -> str:
    tables = [e for e in seen.executions if any(s.startswith(("table-", "game-")) for s in e[0])]
    lines = [
        f"{name}: {len(seen.executions)} appends, {len(tables)} of a table's or a game's streams;"
        f" single-shard executions {sum(e[2] for e in seen.executions)},"
        f" multi-shard {sum(e[3] for e in seen.executions)};"
        f" refused {sum(e[4] for e in seen.executions)}"
    ]
    return lines[0]


def _check(seen: Measured) -> None:
    assert len(seen.executions) >= 10
    multi = [e for e in seen.executions if e[3]]
    assert not multi, f"appends with multi-shard executions: {multi}"
    for streams, guarded, single, _, refused in seen.executions:
        if refused:  # refused on its worker (a command already processed): Citus counts
            assert single <= 1 + guarded  # an execution only once it succeeded
        elif any(s.startswith(("table-", "game-")) for s in streams):
            # One delegated call, and the token check's own query when the move has one.
            assert single == 1 + guarded, (streams, guarded, single)
        else:
            assert single >= 1, streams  # a person's append: its statements, one shard each


async def test_every_append_is_one_shard_by_citus_count(
    database_url: str, pool: Pool, measured: Measured
) -> None:
    await flows.test_every_append_stays_inside_one_table(database_url, pool, measured.calls)
    _check(measured)
    print(_report(measured, "tables and games"))


async def test_every_buy_in_append_is_one_shard_by_citus_count(
    database_url: str, pool: Pool, measured: Measured
) -> None:
    await flows.test_stakes_stay_inside_one_table(database_url, pool, measured.calls)
    _check(measured)
    print(_report(measured, "buy-ins"))
