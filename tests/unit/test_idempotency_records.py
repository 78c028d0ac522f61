"""The contract suite of idempotency keys' records (tests/idempotency_contract.py), in memory."""

from __future__ import annotations

import pytest

from service.store.idempotency import IdempotencyRecords, InMemoryIdempotencyRecords
from tests.idempotency_contract import IdempotencyContract


class TestInMemoryIdempotencyRecords(IdempotencyContract):
    @pytest.fixture
    def records(self) -> IdempotencyRecords:
        return InMemoryIdempotencyRecords()
