"""Sitting at a buy-in table between games (README "Accounts, coins, XP and badges"): only a
table's first game has a buy-in, so sitting down after it holds nothing, and every hold ends in
the pot or back in the wallet."""

from __future__ import annotations

import uuid

from service.bootstrap import bootstrap
from service.domain.rules.events import ClockSettings
from service.store.events import EventStore
from service.store.pool import Pool
from service.store.postgres import postgres_ports
from service.usecases.identity import Player
from tests.integration.test_coin_invariant import FAST_HASHER, FakeClock, holds_by_table


async def _players(swarm: object, n: int) -> list[Player]:
    accounts = swarm.accounts  # type: ignore[attr-defined]
    return [
        (await accounts.register(f"h{uuid.uuid4().hex[:12]}{i}", "long enough", None)).player
        for i in range(n)
    ]


async def test_sitting_down_and_leaving_between_games_holds_nothing(pool: Pool) -> None:
    store = EventStore(pool)
    clock = FakeClock()
    swarm = bootstrap(postgres_ports(pool, store), clock=clock, hasher=FAST_HASHER)
    ann, bob, cid = await _players(swarm, 3)
    clock_settings = ClockSettings(turn_seconds=20, choice_seconds=10)
    table = (await swarm.tables.create_table(ann, 2, 100, clock_settings)).table
    view = (await swarm.tables.join_table(bob, table.table_id, None)).table  # full: dealt
    game_id = view.games[-1]
    await swarm.tables.leave_table(bob, table.table_id)  # Ann wins at once
    assert (await swarm.repository.game(game_id)).phase == "ended"

    # Between games: Cid sits down, then leaves; then sits down and stays for play again.
    await swarm.tables.join_table(cid, table.table_id, None)
    assert await holds_by_table(store, cid) == {}
    assert (await swarm.repository.wallet(cid.player_id)).held == 0
    await swarm.tables.leave_table(cid, table.table_id)
    await swarm.tables.join_table(cid, table.table_id, None)
    again = (await swarm.tables.play_again(ann, table.table_id, None)).table
    assert len(again.games) == 2
    wallet = await swarm.repository.wallet(cid.player_id)
    assert (wallet.balance, wallet.held) == (1_000, 0)
    assert await holds_by_table(store, cid) == {}
