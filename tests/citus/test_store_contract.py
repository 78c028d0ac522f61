"""The store's contract suites (tests/store_contract.py) on Citus: the same tests the plain
PostgreSQL store and the in-memory one pass."""

from __future__ import annotations

import pytest

from service.store import citus_reads
from service.store.events import EventStore
from service.store.pool import Pool
from service.store.port import Ports
from service.store.postgres import postgres_ports
from tests.store_contract import EventLogContract, PortsContract


class TestEventStoreOnCitus(EventLogContract):
    GLOBAL_ORDER = False

    @pytest.fixture
    def log(self, event_store: EventStore) -> EventStore:
        return event_store


class TestPortsOnCitus(PortsContract):
    @pytest.fixture
    def ports(self, pool: Pool) -> Ports:
        return postgres_ports(pool)


class TestReadsAskingEachWorkerOnCitus:
    """The contract's reads across shards as they run while a worker is away: each worker
    asked on its own (`citus_reads.across`), never Citus' own statement: the same answers."""

    @pytest.fixture(autouse=True)
    def each_worker(self, monkeypatch: pytest.MonkeyPatch) -> None:
        async def never(*_: object) -> None:
            return None

        monkeypatch.setattr(citus_reads, "whole", never)

    @pytest.fixture
    def ports(self, pool: Pool) -> Ports:
        return postgres_ports(pool)

    test_lobby = PortsContract.test_the_lobby_lists_open_tables_newest_first
    test_members = PortsContract.test_members_are_who_sits_at_a_table_now
    test_games = PortsContract.test_a_persons_finished_games_page_newest_first_and_filter
    test_standings = PortsContract.test_standings_give_profiles_and_the_leaderboard
