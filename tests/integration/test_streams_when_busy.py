"""A stream that is already open stays open when the service is overloaded: a re-read that gets
no pool connection in time (`PoolExhausted`) becomes a heartbeat and is tried again shortly,
instead of cutting the response mid-body (seen at 1,000 games in `make bench-online`)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from service.api.envelopes import entry
from service.bootstrap import bootstrap
from service.domain.rules.events import ClockSettings
from service.store.events import EventStore
from service.store.pool import Pool
from service.store.port import PoolExhausted
from service.store.postgres import postgres_ports
from service.usecases import streams
from service.usecases.streams import LogItem
from service.usecases.watching import Viewer


async def test_a_followed_table_rides_out_a_busy_pool(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    swarm = bootstrap(postgres_ports(pool))
    host, _ = await swarm.identity.create_guest("Busy", None)
    seen = await swarm.tables.create_table(
        host, 2, 0, ClockSettings(turn_seconds=600, choice_seconds=600)
    )
    table = seen.table
    await swarm.tables.leave_table(host, table.table_id)  # closed: the log ends
    followed = await swarm.streams.follow_table(
        Viewer(player=host, token_hash=b""), table.table_id, 0, heartbeat=1.0
    )

    original = EventStore.read_stream
    refusals = {"left": 2}

    async def busy_then_free(self: EventStore, stream: str, **kwargs: Any) -> Any:
        if stream.startswith("table-") and refusals["left"] > 0:
            refusals["left"] -= 1
            raise PoolExhausted("no database connection free in time")
        return await original(self, stream, **kwargs)

    monkeypatch.setattr(EventStore, "read_stream", busy_then_free)
    monkeypatch.setattr(streams, "BUSY_RETRY", 0.01)
    heard = [entry async for entry in followed]
    assert heard[:2] == [None, None]  # two heartbeats while the pool was busy
    kinds = [type(entry(cast(LogItem, e))).__name__ for e in heard[2:]]  # no more heartbeats
    assert kinds[0] == "TableOpenedEntry" and kinds[-1] == "TableClosedEntry", kinds
    assert refusals["left"] == 0
