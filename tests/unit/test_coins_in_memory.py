"""Coins are never made or lost by play (tests/integration/test_coin_invariant.py's random
table histories, and its checks after every operation) on the in-memory store: the same
histories, many more of them, in a fraction of the time."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.store.memory import memory_ports
from tests.integration.test_coin_invariant import operation, run


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    stake=st.sampled_from([50, 300, 700]),
    operations=st.lists(operation, min_size=8, max_size=24),
)
async def test_coins_are_conserved_over_random_table_histories_in_memory(
    stake: int, operations: list[tuple[str, int, int]]
) -> None:
    await run(memory_ports, [("open", 0, stake), *operations])
