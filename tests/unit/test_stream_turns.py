"""Decisions about one stream take turns on an instance (`service.usecases.retry.StreamTurns`,
docs/architecture.md "When moves race"), and a decision that cannot get its turn in time is
shed as an overload (503 `overloaded`) instead of queueing without bound."""

from __future__ import annotations

import asyncio

import pytest

from service.usecases.errors import Busy
from service.usecases.retry import StreamTurns


async def test_decisions_about_one_stream_take_turns_and_others_do_not_wait() -> None:
    turns = StreamTurns()
    order: list[str] = []

    async def decide(key: str, name: str, hold: float) -> None:
        async with turns.turn(key):
            order.append(f"{name} in")
            await asyncio.sleep(hold)
            order.append(f"{name} out")

    await asyncio.gather(
        decide("game-1", "a", 0.05), decide("game-1", "b", 0), decide("game-2", "c", 0)
    )
    assert order.index("a out") < order.index("b in")  # b waited for a
    assert order.index("c in") < order.index("a out")  # another stream did not
    assert turns._locks == {}  # nothing kept once nobody waits


async def test_a_decision_that_waits_too_long_for_its_turn_is_shed() -> None:
    turns = StreamTurns()
    entered = asyncio.Event()
    release = asyncio.Event()

    async def slow() -> None:
        async with turns.turn("game-1"):
            entered.set()
            await release.wait()

    holder = asyncio.create_task(slow())
    await entered.wait()
    with pytest.raises(Busy):
        async with turns.turn("game-1", wait=0.05):
            pass
    release.set()
    await holder
    async with turns.turn("game-1", wait=0.05):  # free again, and the shed one left no trace
        pass
    assert turns._locks == {}
