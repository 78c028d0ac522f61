"""The contract suite of the store's ports (tests/store_contract.py) on PostgreSQL."""

from __future__ import annotations

import pytest

from service.store.pool import Pool
from service.store.port import Ports
from service.store.postgres import postgres_ports
from tests.store_contract import PortsContract


class TestPostgresPorts(PortsContract):
    @pytest.fixture
    def ports(self, pool: Pool) -> Ports:
        return postgres_ports(pool)
