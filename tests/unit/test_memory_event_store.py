"""The contract suite of the event log (tests/store_contract.py) on the in-memory store, and
what it refuses: SQL."""

from __future__ import annotations

import pytest

from service.store.events import StreamAppend
from service.store.memory import InMemoryEventStore
from service.store.port import EventLog
from tests.store_contract import EventLogContract, event, new_stream


class TestInMemoryEventStore(EventLogContract):
    @pytest.fixture
    def log(self) -> EventLog:
        return InMemoryEventStore()


async def test_it_runs_no_sql() -> None:
    log = InMemoryEventStore()
    stream = new_stream()
    with pytest.raises(ValueError, match="no SQL"):
        await log.append(
            StreamAppend(stream, 0, [event()]), also=[("insert into x values (1)", ())]
        )
    with pytest.raises(ValueError, match="no SQL"):
        await log.append(StreamAppend(stream, 0, [event()]), guard=("select 1", ()))
    assert await log.stream_version(stream) == 0
