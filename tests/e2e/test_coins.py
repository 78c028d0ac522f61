"""Coins are money (seed §9): buy-ins, pots, payouts, refunds, rewards; never lost, never
negative, never spent by anyone but their owner."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from service.domain.ledger import SIGN_UP_COINS, WalletState, decode_wallet_event, evolve_wallet
from service.store.events import EventStore
from service.store.pool import Pool
from tests.e2e.api_client import Api, play_online_to_the_end
from tests.e2e.test_solo_api import assert_problem

_names = itertools.count(1)


async def member(anon: Api, name: str = "Mia") -> Api:
    response = await anon.client.post(
        "/accounts", json={"name": f"{name}{next(_names)}x", "password": "correct horse"}
    )
    assert response.status_code == 201, response.text
    return Api(anon.client, response.json()["token"])


async def coins(api: Api) -> tuple[int, int]:
    me = (await api.client.get("/me", headers=api.headers)).json()
    return me["coins"]["balance"], me["coins"]["held"]


async def wallets_add_up(pool: Pool, players: list[str]) -> None:
    """balance + held + coins in open pots = coins granted, from the wallet streams; and every
    projection row equals the fold of its stream."""
    store = EventStore(pool)
    granted = in_hand = committed = paid = 0
    for player_id in players:
        state = WalletState()
        for r in await store.read_stream(f"wallet-{player_id}"):
            event = decode_wallet_event(r.data)
            state = evolve_wallet(state, event)
            kind = type(event).__name__
            committed += event.amount if kind == "StakeCommitted" else 0
            paid += event.amount if kind == "PotPaid" else 0
        assert state.balance >= 0 and state.held >= 0
        granted += state.granted
        in_hand += state.balance + state.held
        row = await pool.fetchrow(
            "select balance, held, granted from wallets where player_id = $1", player_id
        )
        assert row is not None and tuple(row) == (state.balance, state.held, state.granted)
    assert in_hand + (committed - paid) == granted


async def player_id(api: Api) -> str:
    me: dict[str, Any] = (await api.client.get("/me", headers=api.headers)).json()
    return str(me["player_id"])


async def test_rule_everyone_buys_in_and_the_fewest_stings_take_the_pot(
    anon: Api, pool: Pool
) -> None:
    ann, ben, cal = await member(anon, "Ann"), await member(anon, "Ben"), await member(anon, "Cal")
    table = await ann.create_table(seats=3, stake=100)
    assert table["stake"] == 100 and await coins(ann) == (SIGN_UP_COINS - 100, 100)
    await ben.ok_table_action(table["table_id"], "seats")
    started = await cal.ok_table_action(table["table_id"], "seats")  # full: it starts
    gid = started["game"]["game_id"]
    for api in (ann, ben, cal):
        assert await coins(api) == (SIGN_UP_COINS - 100, 0)  # the stakes are in the pot
    final = await play_online_to_the_end({1: ann, 2: ben, 3: cal}, gid)
    winners = final["result"]["winners"]
    apis = {1: ann, 2: ben, 3: cal}
    for seat, api in apis.items():
        balance, held = await coins(api)
        won = seat in winners
        expected = SIGN_UP_COINS - 100 + (30 if won else 10)
        share = 300 // len(winners) + (1 if won and winners.index(seat) < 300 % len(winners) else 0)
        assert (balance, held) == (expected + (share if won else 0), 0), (seat, winners)
        me = (await api.client.get("/me", headers=api.headers)).json()
        assert me["games_played"] == 1 and me["games_won"] == (1 if won else 0)
        assert "first_game" in {b["name"] for b in me["badges"]}
    await wallets_add_up(pool, [await player_id(a) for a in apis.values()])
    # Play again has no buy-in.
    again = await ann.ok_table_action(table["table_id"], "games")
    assert again["status"] == "playing"
    assert (await coins(ann))[1] == 0


async def test_rule_leaving_before_the_start_returns_the_buy_in(anon: Api, pool: Pool) -> None:
    ann, ben = await member(anon, "Ann"), await member(anon, "Ben")
    tid = (await ann.create_table(seats=3, stake=250))["table_id"]
    await ben.ok_table_action(tid, "seats")
    assert await coins(ben) == (SIGN_UP_COINS - 250, 250)
    await ben.ok_table_action(tid, "leave")
    assert await coins(ben) == (SIGN_UP_COINS, 0)
    await ann.ok_table_action(tid, "leave")  # the table closes: the host's stake comes back
    assert await coins(ann) == (SIGN_UP_COINS, 0)
    await wallets_add_up(pool, [await player_id(ann), await player_id(ben)])


async def test_rule_a_short_balance_is_refused_and_changes_nothing(anon: Api) -> None:
    ann = await member(anon, "Ann")
    response = await ann.client.post(
        "/tables", json={"seats": 2, "stake": SIGN_UP_COINS + 1}, headers=ann.headers
    )
    assert_problem(response, 409, "insufficient-coins")
    assert await coins(ann) == (SIGN_UP_COINS, 0)


async def test_rule_guests_play_free_tables_only(anon: Api) -> None:
    ann, guest = await member(anon, "Ann"), await anon.guest("Gus")
    tid = (await ann.create_table(seats=2, stake=10))["table_id"]
    assert_problem(await guest.table_action(tid, "seats"), 403, "buy-in-needs-account")


async def test_rule_a_leaver_loses_the_buy_in_and_the_last_person_takes_the_pot(
    anon: Api, pool: Pool
) -> None:
    ann, ben, cal = await member(anon, "Ann"), await member(anon, "Ben"), await member(anon, "Cal")
    tid = (await ann.create_table(seats=3, stake=100))["table_id"]
    await ben.ok_table_action(tid, "seats")
    gid = (await cal.ok_table_action(tid, "seats"))["game"]["game_id"]
    await ben.ok_table_action(tid, "leave")
    await cal.ok_table_action(tid, "leave")
    final = await ann.game(gid)
    assert final["result"]["reason"] == "last_person_standing"
    assert await coins(ann) == (SIGN_UP_COINS - 100 + 300 + 30, 0)  # the pot and a win
    assert await coins(ben) == (SIGN_UP_COINS - 100, 0)  # leavers earn nothing
    await wallets_add_up(pool, [await player_id(a) for a in (ann, ben, cal)])


async def test_the_same_buy_in_twice_holds_once_and_parallel_buy_ins_never_overdraw(
    anon: Api, pool: Pool
) -> None:
    ann = await member(anon, "Ann")
    hosts = [await member(anon, "Host") for _ in range(5)]
    tables = [(await h.create_table(seats=4, stake=300))["table_id"] for h in hosts]
    first = await ann.table_action(tables[0], "seats")
    twice = await ann.table_action(tables[0], "seats")
    assert first.status_code == 200 and twice.status_code == 409
    assert await coins(ann) == (SIGN_UP_COINS - 300, 300)
    # Four more joins at once with coins for two of them: never a negative balance.
    answers = await asyncio.gather(*(ann.table_action(t, "seats") for t in tables[1:]))
    assert sorted(a.status_code for a in answers) == [200, 200, 409, 409]
    assert all(a.json()["code"] == "insufficient-coins" for a in answers if a.status_code == 409)
    assert await coins(ann) == (SIGN_UP_COINS - 900, 900)
    await wallets_add_up(pool, [await player_id(ann)])


async def test_a_person_cannot_touch_another_wallet(anon: Api, pool: Pool) -> None:
    ann, ben = await member(anon, "Ann"), await member(anon, "Ben")
    tid = (await ann.create_table(seats=2, stake=100))["table_id"]
    before = await coins(ben)
    assert_problem(await ben.table_action(tid, "start"), 403, "not-host")
    assert await coins(ben) == before  # only the caller's own seat and stake are ever at stake
    me = (await ben.client.get("/me", headers=ben.headers)).json()
    assert me["player_id"] != await player_id(ann)


async def test_stats_and_badges_rebuild_from_events_to_the_same_result(
    anon: Api, pool: Pool
) -> None:
    from service.domain.players import player_record

    ann, ben = await member(anon, "Ann"), await member(anon, "Ben")
    tid = (await ann.create_table(seats=2))["table_id"]
    gid = (await ben.ok_table_action(tid, "seats"))["game"]["game_id"]
    await play_online_to_the_end({1: ann, 2: ben}, gid)
    store = EventStore(pool)
    for api in (ann, ben):
        pid = await player_id(api)
        rebuilt = player_record(
            (r.type, r.data) for r in await store.read_stream(f"player-{pid}")
        ).stats
        row = await pool.fetchrow(
            "select games_played, games_won, xp, badges from player_stats where player_id = $1",
            pid,
        )
        assert row is not None
        assert (row["games_played"], row["games_won"], row["xp"], tuple(row["badges"])) == (
            rebuilt.games_played,
            rebuilt.games_won,
            rebuilt.xp,
            rebuilt.badges,
        )
