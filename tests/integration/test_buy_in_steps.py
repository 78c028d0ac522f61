"""A buy-in in two steps, wallet then table (docs/scaling.md, "Buy-ins across shards"): the
hold's fate is decided once, by the table, whichever of a late sit-down and the give-back
comes first; transfers are delivered once however often they are relayed; and the table's log
shows each step."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest

from service.api.envelopes import entry
from service.bootstrap import Swarm, bootstrap
from service.domain.ledger import SIGN_UP_COINS, StakeHeld
from service.domain.rules.events import ClockSettings
from service.domain.transfers import PayPot
from service.store.pool import Pool
from service.store.postgres import postgres_ports
from service.usecases.errors import Conflict
from service.usecases.identity import Player
from service.usecases.money import Hold
from service.usecases.tables import Join
from service.usecases.unit_of_work import UnitOfWork
from service.usecases.watching import Viewer
from tests.integration.test_coin_invariant import FAST_HASHER

STAKE = 40
CLOCK = ClockSettings(turn_seconds=600, choice_seconds=600)
LEGACY_SWEEPS = 20


async def people(swarm: Swarm, n: int) -> list[Player]:
    return [
        (await swarm.accounts.register(f"b{uuid.uuid4().hex[:12]}{i}", "long enough", None)).player
        for i in range(n)
    ]


@pytest.fixture
def swarm(pool: Pool) -> Swarm:
    return bootstrap(postgres_ports(pool), hasher=FAST_HASHER)


async def balance(swarm: Swarm, player: Player) -> tuple[int, int]:
    wallet = await swarm.repository.wallet(player.player_id)
    return wallet.balance, wallet.held


async def test_a_hold_given_back_can_no_longer_be_seated(swarm: Swarm) -> None:
    ann, ben = await people(swarm, 2)
    table = (await swarm.tables.create_table(ann, 3, STAKE, CLOCK)).table
    hold = await swarm.money.hold(ben, table.table_id, STAKE)
    assert await balance(swarm, ben) == (SIGN_UP_COINS - STAKE, STAKE)
    assert await swarm.money.give_back(hold, actor="test")
    assert await balance(swarm, ben) == (SIGN_UP_COINS, 0)
    # The sit-down that held it arrives late: refused, and nothing is held or seated.
    with pytest.raises(Conflict):  # the table's own path, with this very hold
        await swarm.tables._change(ben, table.table_id, Join(None, hold))
    after = await swarm.repository.table(table.table_id)
    assert after.seat_of(ben.player_id) is None and after.buy_in_of(ben.player_id) is None
    assert await balance(swarm, ben) == (SIGN_UP_COINS, 0)
    assert not await swarm.money.give_back(hold, actor="test")  # decided once


async def test_a_seated_hold_is_never_given_back(swarm: Swarm) -> None:
    ann, ben = await people(swarm, 2)
    table = (await swarm.tables.create_table(ann, 3, STAKE, CLOCK)).table
    await swarm.tables.join_table(ben, table.table_id, None)
    seated = await swarm.repository.table(table.table_id)
    buy_in = seated.buy_in_of(ben.player_id)
    assert buy_in is not None
    hold = Hold(ben.player_id, table.table_id, buy_in.hold_id, STAKE)
    assert not await swarm.money.give_back(hold, actor="test")
    # The sweeper finds the seated holds and leaves them (marking them settled).
    assert await swarm.money.expire_holds(after=timedelta(0)) == 0
    assert await balance(swarm, ben) == (SIGN_UP_COINS - STAKE, STAKE)


async def test_a_sit_down_racing_its_give_back_ends_one_way(swarm: Swarm) -> None:
    """Twenty times: the sit-down's table step and the give-back at once. Either Ben is seated
    with the stake held, or he is not seated and has his coins back; never both, never neither."""
    for _ in range(20):
        ann, ben = await people(swarm, 2)
        table = (await swarm.tables.create_table(ann, 3, STAKE, CLOCK)).table
        hold = await swarm.money.hold(ben, table.table_id, STAKE)
        sit, back = await asyncio.gather(
            swarm.tables._change(ben, table.table_id, Join(None, hold)),
            swarm.money.give_back(hold, actor="test"),
            return_exceptions=True,
        )
        state = await swarm.repository.table(table.table_id)
        seated = state.seat_of(ben.player_id) is not None
        assert seated == (not isinstance(sit, BaseException)), sit
        assert back is (not seated)
        expected = (SIGN_UP_COINS - STAKE, STAKE) if seated else (SIGN_UP_COINS, 0)
        assert await balance(swarm, ben) == expected
    # (Each order on its own is built by the two tests above; this one checks that running
    # them together never splits a hold.)


async def test_a_transfer_relayed_twice_lands_once(swarm: Swarm) -> None:
    (ann,) = await people(swarm, 1)
    table_id = str(uuid.uuid4())
    pay = PayPot(player_id=ann.player_id, table_id=table_id, game_id="g", amount=7, reason="won")
    await swarm.money._deliver(pay)
    await swarm.money._deliver(pay)  # a crash between the wallet's append and the delete
    assert await balance(swarm, ann) == (SIGN_UP_COINS + 7, 0)


async def test_the_table_log_shows_each_step_of_a_buy_in(swarm: Swarm) -> None:
    ann, ben = await people(swarm, 2)
    table = (await swarm.tables.create_table(ann, 3, STAKE, CLOCK)).table
    await swarm.tables.join_table(ben, table.table_id, None)
    await swarm.tables.leave_table(ben, table.table_id)
    await swarm.tables.leave_table(ann, table.table_id)  # the table closes: the log ends
    viewer = Viewer(player=ann, token_hash=b"")
    entries = await swarm.streams.follow_table(viewer, table.table_id, 0, heartbeat=1.0)
    seen = [entry async for entry in entries if entry is not None]
    kinds = [type(entry(e)).__name__ for e in seen]
    assert kinds.count("BuyInHeldEntry") == 2 and kinds.count("BuyInReturnedEntry") == 2, kinds
    assert await balance(swarm, ann) == (SIGN_UP_COINS, 0)
    assert await balance(swarm, ben) == (SIGN_UP_COINS, 0)


async def test_a_hold_from_before_hold_ids_goes_back_on_its_own(swarm: Swarm) -> None:
    """An older version held stakes without ids, which no table takes now: the wallet releases
    them by itself, and leaves every hold with an id alone."""
    ann, ben = await people(swarm, 2)
    table = (await swarm.tables.create_table(ann, 3, STAKE, CLOCK)).table
    await swarm.tables.join_table(ben, table.table_id, None)  # a hold with an id
    uow = UnitOfWork(swarm.repository)
    await uow.wallet_events(ben.player_id, [StakeHeld(table_id="old-table", amount=25)])
    await uow.commit({"actor": "test", "causation": "an older version's hold"})
    assert await balance(swarm, ben) == (SIGN_UP_COINS - STAKE - 25, STAKE + 25)
    for _ in range(LEGACY_SWEEPS):  # each sweep releases up to 50 wallets: a few suffice
        if not await swarm.money.release_legacy_holds():
            break
    else:
        pytest.fail(
            f"release_legacy_holds still released wallets after {LEGACY_SWEEPS} sweeps: "
            "wallets in this database that it releases again and again"
        )
    assert await balance(swarm, ben) == (SIGN_UP_COINS - STAKE, STAKE)
    assert await swarm.money.release_legacy_holds() == 0  # nothing else to release
