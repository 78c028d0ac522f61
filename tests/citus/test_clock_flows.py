"""The turn clock on the cluster (issue 46). tests/e2e/test_turn_clock.py imported whole: its
rules under an injected clock, the timers fired by a second instance's claim (per shard on
Citus, `StoredTimers.claim_due`), and a timer fired once with two instances claiming at once.
Then the real thing: the app's clock thread, on the real clock, plays online games on every
worker's shards until they end (abandoned, or finished by a person who only taps, a buy-in's
stakes given back)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import msgspec
from litestar.testing import AsyncTestClient

from service.domain.ledger import SIGN_UP_COINS
from service.store.events import EventStore
from service.store.pool import Pool
from tests.citus.online import CLOCK, worker_of
from tests.e2e.api_client import Api
from tests.e2e.test_coins import coins, member, player_id, wallets_add_up
from tests.e2e.test_turn_clock import *  # noqa: F403


async def _tables_on_both_workers(
    anon: Api, database_url: str, kinds: list[str]
) -> list[tuple[str, str, Api, Api, str]]:
    """For each kind, a two-seat table with a 1 s clock on each worker, full (its game dealt):
    (kind, worker, host, other, game id)."""
    made: list[tuple[str, str, Api, Api, str]] = []
    for kind in kinds:
        wanted = {"first", "second"}
        seen: dict[str, str] = {}
        for _ in range(40):
            if kind == "buy_in":
                host, other = await member(anon, "Stk"), await member(anon, "Stk")
                table = await host.create_table(seats=2, stake=100, **CLOCK)
            else:
                host, other = await anon.guest("Clk"), await anon.guest("Clk")
                table = await host.create_table(seats=2, **CLOCK)
            worker = worker_of(database_url, table["table_id"])
            if worker in seen.values() or len(seen) == 2:
                await host.ok_table_action(table["table_id"], "leave")  # closes it
                continue
            seen[wanted.pop()] = worker
            game = (await other.ok_table_action(table["table_id"], "seats"))["game"]
            made.append((kind, worker, host, other, game["game_id"]))
            if not wanted:
                break
        assert not wanted, f"{kind}: no table landed on both workers"
    return made


async def test_the_clock_thread_plays_online_games_on_every_worker(
    client: AsyncTestClient[Any], database_url: str, event_store: EventStore, pool: Pool
) -> None:
    """Nobody moves: three turns run out and the game is abandoned (a buy-in's stakes come
    back); one person only taps: the clock confirms both seats, ten turns to the end."""
    anon = Api(client)
    games = await _tables_on_both_workers(anon, database_url, ["abandoned", "buy_in", "tapping"])
    started = time.monotonic()
    pending = {gid for *_, gid in games}
    while pending:
        assert time.monotonic() - started < 90, f"games not ended by the clock: {pending}"
        for kind, _, host, _, gid in games:
            if gid not in pending:
                continue
            view = await host.game(gid)
            if view["phase"] == "ended":
                pending.discard(gid)
            elif kind == "tapping" and view["phase"] == "picking" and view["tapped"] is None:
                await host.ok_move(gid, type="tap", bee=view["hand"][-1])
        await asyncio.sleep(0.2)
    fired: Counter[str] = Counter()
    for kind, worker, host, other, gid in games:
        view = await host.game(gid)
        events = await event_store.read_stream(f"game-{gid}")
        revealed = [
            msgspec.json.decode(e.data)["turn"] for e in events if e.type == "picks_revealed"
        ]
        assert len(revealed) == len(set(revealed)), (gid, revealed)  # no turn twice
        clock_picks = [
            msgspec.json.decode(e.data)["by_clock"]
            for e in events
            if e.type == "pick_confirmed" and e.metadata.get("actor") == "clock"
        ]
        fired[worker] += len(
            {e.metadata.get("command_id") for e in events if e.metadata.get("actor") == "clock"}
        )
        assert (await event_store.verify_stream(f"game-{gid}")).ok, gid
        if kind == "tapping":
            assert view["result"]["reason"] == "finished" and view["turn"] == 10, view
            # Every pick the clock's; the person's tapped bee where the tap came in time (a turn
            # is 1 s, the taps polled: on a busy machine one may miss its turn).
            assert len(clock_picks) == 20 and "tapped" in clock_picks, clock_picks
        else:
            assert view["result"]["reason"] == "abandoned", view
            assert view["turn"] == 3 and set(clock_picks) == {"lowest"}, (view, clock_picks)
        if kind == "buy_in":  # the stakes given back, by the clock thread's append or relay
            for _ in range(50):
                if await coins(host) == (SIGN_UP_COINS, 0) == await coins(other):
                    break
                await asyncio.sleep(0.2)
            assert await coins(host) == (SIGN_UP_COINS, 0) == await coins(other)
            await wallets_add_up(pool, [await player_id(host), await player_id(other)])
    assert len(fired) == 2 and all(n >= 3 for n in fired.values()), fired
    print(
        f"\nclock thread on the cluster: {len(games)} games, clocks fired by worker {dict(fired)}"
    )
