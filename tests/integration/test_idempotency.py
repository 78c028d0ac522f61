"""The contract suite of idempotency keys' records (tests/idempotency_contract.py) on
PostgreSQL, and what a database reader finds there: nothing readable."""

from __future__ import annotations

import pytest

from service.store.idempotency import IdempotencyRecords, PostgresIdempotencyRecords
from service.store.pool import Pool
from tests.idempotency_contract import IdempotencyContract


class TestPostgresIdempotencyRecords(IdempotencyContract):
    @pytest.fixture
    def records(self, pool: Pool) -> IdempotencyRecords:
        return PostgresIdempotencyRecords(pool)
