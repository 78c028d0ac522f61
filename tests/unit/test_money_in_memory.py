"""Coins through their use cases (`service.usecases.money`) on the in-memory store: holds, the
outbox's delivery and its relay after a delivery cut short, the sweeper of sit-downs that never
finished, and holds from before hold ids. The buy-in steps of tests/integration run here too."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest

from service.bootstrap import Swarm
from service.domain.ledger import SIGN_UP_COINS, InsufficientCoins
from service.domain.rules.events import ClockSettings
from service.domain.transfers import TransferUnion
from service.store.rows import WalletBalance
from service.usecases.money import RELAY_AFTER, Money
from tests.in_memory import FakeClock, account, swarm_in_memory
from tests.integration.test_buy_in_steps import (
    test_a_hold_from_before_hold_ids_goes_back_on_its_own,
    test_a_hold_given_back_can_no_longer_be_seated,
    test_a_seated_hold_is_never_given_back,
    test_a_sit_down_racing_its_give_back_ends_one_way,
    test_a_transfer_relayed_twice_lands_once,
    test_the_table_log_shows_each_step_of_a_buy_in,
)

# The same tests as on PostgreSQL, on this tier's `swarm`.
__all__ = [
    "test_a_hold_from_before_hold_ids_goes_back_on_its_own",
    "test_a_hold_given_back_can_no_longer_be_seated",
    "test_a_seated_hold_is_never_given_back",
    "test_a_sit_down_racing_its_give_back_ends_one_way",
    "test_a_transfer_relayed_twice_lands_once",
    "test_the_table_log_shows_each_step_of_a_buy_in",
]

CLOCK = ClockSettings(turn_seconds=600, choice_seconds=600)


@pytest.fixture
def swarm() -> Swarm:
    return swarm_in_memory()


async def coins(swarm: Swarm, player_id: str) -> tuple[int, int]:
    wallet = await swarm.repository.wallet(player_id)
    return wallet.balance, wallet.held


async def test_a_hold_is_refused_when_short_and_kept_for_the_sweeper() -> None:
    clock = FakeClock()
    swarm = swarm_in_memory(clock)
    ann = await account(swarm, "Ann")
    with pytest.raises(InsufficientCoins):
        await swarm.money.hold(ann, "t-1", SIGN_UP_COINS + 1)
    assert await coins(swarm, ann.player_id) == (SIGN_UP_COINS, 0)
    hold = await swarm.money.hold(ann, "t-1", 30)
    assert await coins(swarm, ann.player_id) == (SIGN_UP_COINS - 30, 30)
    [row] = await swarm.ctx.ports.holds.unsettled(timedelta(0), 10)
    assert (row.player_id, row.hold_id, row.table_id, row.amount) == (
        ann.player_id,
        hold.hold_id,
        "t-1",
        30,
    )
    assert (await swarm.ctx.ports.standings.coins(ann.player_id)) is not None


async def test_a_sit_down_cut_short_is_given_back_by_the_sweeper() -> None:
    clock = FakeClock()
    swarm = swarm_in_memory(clock, hold_expiry=60.0)
    ann, ben = await account(swarm, "Ann"), await account(swarm, "Ben")
    table = (await swarm.tables.create_table(ann, 3, 40, CLOCK)).table
    await swarm.money.hold(ben, table.table_id, 40)  # ...and the sit-down never gets further
    assert await swarm.money.expire_holds(after=timedelta(seconds=60)) == 0  # too young
    clock.advance(61)
    assert (
        await swarm.money.expire_holds(after=timedelta(seconds=60)) == 1
    )  # Ben's; Ann's is seated
    assert await coins(swarm, ben.player_id) == (SIGN_UP_COINS, 0)
    assert await coins(swarm, ann.player_id) == (SIGN_UP_COINS - 40, 40)
    returned = await swarm.repository.table(table.table_id)
    assert returned.buy_in_of(ben.player_id) is None and returned.seat_of(ben.player_id) is None
    # Ann's seated hold was marked settled: the sweeper does not ask about it again.
    assert await swarm.ctx.ports.holds.unsettled(timedelta(0), 10) == []
    assert await swarm.money.expire_holds(after=timedelta(seconds=60)) == 0


async def test_a_delivery_cut_short_is_relayed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    swarm = swarm_in_memory(clock)
    ann, ben = await account(swarm, "Ann"), await account(swarm, "Ben")
    table = (await swarm.tables.create_table(ann, 2, 100, CLOCK)).table

    # The database goes away between the table's commit and its deliveries.
    failing: list[TransferUnion] = []
    deliver = Money._deliver

    async def cut_short(self: Money, transfer: TransferUnion) -> None:
        failing.append(transfer)
        raise ConnectionError("the database went away")

    monkeypatch.setattr(Money, "_deliver", cut_short)
    await swarm.tables.join_table(ben, table.table_id, None)  # dealt: the stakes into the pot
    assert len(failing) == 2
    for person in (ann, ben):  # still held: the commitments are in flight
        assert await coins(swarm, person.player_id) == (SIGN_UP_COINS - 100, 100)
    outbox = swarm.ctx.ports.outbox
    assert await outbox.any_due(timedelta(0)) and not await outbox.any_due(RELAY_AFTER)

    monkeypatch.setattr(Money, "_deliver", deliver)
    assert await swarm.money.relay_due() == 0  # too young: the request may still deliver it
    clock.advance(RELAY_AFTER.total_seconds())
    relayed = await asyncio.gather(swarm.money.relay_due(), swarm.money.relay_due())
    assert sorted(relayed) == [0, 2]  # two relays at once: each transfer to one of them
    for person in (ann, ben):
        assert await coins(swarm, person.player_id) == (SIGN_UP_COINS - 100, 0)
    assert not await outbox.any_due(timedelta(0))
    for transfer in failing:  # delivered again by hand (a crash before the delete): no change
        await deliver(swarm.money, transfer)
    assert await coins(swarm, ann.player_id) == (SIGN_UP_COINS - 100, 0)


async def test_a_wallet_whose_log_holds_nothing_is_never_counted_as_released() -> None:
    """A projected wallet holding more than its stake holds, while its own log holds nothing
    (a row no wallet event wrote): the sweeper finds it every time and releases nothing, and
    says so, so a caller looping until nothing is released stops (tests/integration's buy-in
    test hung on such a row left in the shared database)."""
    swarm = swarm_in_memory()
    stray = WalletBalance(player_id=str(uuid.uuid4()), balance=0, held=7, granted=0, version=1)
    swarm.ctx.ports.holds.tables.wallets[stray.player_id] = stray  # type: ignore[attr-defined]
    assert await swarm.ctx.ports.holds.legacy_holders(50) == [stray.player_id]
    assert await swarm.money.release_legacy_holds() == 0
    assert await swarm.ctx.ports.holds.legacy_holders(50) == [stray.player_id]  # left as it is
