"""The contract of idempotency keys' records (`service.store.idempotency.IdempotencyRecords`),
one suite for every implementation: PostgreSQL's runs in tests/integration/test_idempotency.py,
the in-memory one's in tests/unit/test_idempotency_records.py."""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime, timedelta

import pytest

from service.store.idempotency import IdempotencyRecords

TTL = timedelta(hours=24)
STALE = timedelta(seconds=60)
NOW = datetime(2030, 1, 1, tzinfo=UTC)


def lookup() -> bytes:
    return os.urandom(32)


class IdempotencyContract:
    @pytest.fixture
    def records(self) -> IdempotencyRecords:
        raise NotImplementedError

    async def claim(
        self, records: IdempotencyRecords, key: bytes, fingerprint: bytes, at: datetime = NOW
    ) -> str:
        claim = await records.claim(key, fingerprint, at, ttl=TTL, stale_after=STALE)
        return claim.state

    async def test_the_first_claim_runs_a_second_waits_then_replays(
        self, records: IdempotencyRecords
    ) -> None:
        key = lookup()
        assert await self.claim(records, key, b"f") == "new"
        running = await records.claim(key, b"f", NOW, ttl=TTL, stale_after=STALE)
        assert (running.state, running.fingerprint, running.answer) == ("running", b"f", None)
        await records.complete(key, b"sealed answer")
        done = await records.claim(
            key, b"other", NOW + timedelta(hours=1), ttl=TTL, stale_after=STALE
        )
        assert (done.state, done.fingerprint, done.answer) == ("done", b"f", b"sealed answer")

    async def test_a_released_claim_can_be_claimed_again(self, records: IdempotencyRecords) -> None:
        key = lookup()
        assert await self.claim(records, key, b"f") == "new"
        await records.release(key)
        assert await self.claim(records, key, b"g") == "new"
        await records.complete(key, b"a")
        await records.release(key)  # a completed record is never released
        assert (await records.claim(key, b"g", NOW, ttl=TTL, stale_after=STALE)).answer == b"a"

    async def test_an_expired_record_is_no_record(self, records: IdempotencyRecords) -> None:
        key = lookup()
        assert await self.claim(records, key, b"f") == "new"
        await records.complete(key, b"a")
        assert await self.claim(records, key, b"g", NOW + TTL - timedelta(seconds=1)) == "done"
        assert await self.claim(records, key, b"g", NOW + TTL) == "new"

    async def test_a_stale_claim_is_taken_over_by_the_same_request_only(
        self, records: IdempotencyRecords
    ) -> None:
        key = lookup()
        assert await self.claim(records, key, b"f") == "new"
        assert await self.claim(records, key, b"f", NOW + STALE - timedelta(seconds=1)) == "running"
        assert await self.claim(records, key, b"other", NOW + STALE) == "running"
        assert await self.claim(records, key, b"f", NOW + STALE) == "new"

    async def test_the_sweep_deletes_expired_records_only(
        self, records: IdempotencyRecords
    ) -> None:
        old, young = lookup(), lookup()
        await self.claim(records, old, b"f", NOW - TTL)
        await self.claim(records, young, b"f", NOW - timedelta(hours=1))
        assert await records.sweep(NOW) >= 1
        assert await self.claim(records, young, b"other") == "running"  # still kept
        assert await self.claim(records, old, b"other") == "new"

    async def test_of_racing_claims_exactly_one_runs(self, records: IdempotencyRecords) -> None:
        key = lookup()
        states = await asyncio.gather(*(self.claim(records, key, b"f") for _ in range(8)))
        assert sorted(states) == ["new"] + ["running"] * 7
