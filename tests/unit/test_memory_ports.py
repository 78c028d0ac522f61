"""The contract suite of the store's ports (tests/store_contract.py) in memory."""

from __future__ import annotations

import pytest

from service.store.memory import memory_ports
from service.store.port import Ports
from tests.store_contract import PortsContract


class TestMemoryPorts(PortsContract):
    @pytest.fixture
    def ports(self) -> Ports:
        return memory_ports()
