"""The contract suite of the event log (tests/store_contract.py) on the in-memory store."""

from __future__ import annotations

import pytest

from service.store.memory import InMemoryEventStore
from service.store.port import EventLog
from tests.store_contract import EventLogContract


class TestInMemoryEventStore(EventLogContract):
    @pytest.fixture
    def log(self) -> EventLog:
        return InMemoryEventStore()
