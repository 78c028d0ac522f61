"""The end of an online game says what it paid (issue 25): the game view of an ended game
carries its pot seat by seat (public) and the caller's own reward (coins, XP, badges, and
whether the day's cap cut it), read from the table's pot and the caller's wallet and record,
and `pending` while the outbox is still delivering it. Nobody learns another's wallet."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.api.app import create_app
from service.bootstrap import bootstrap
from service.domain.ledger import (
    BADGES,
    DAILY_REWARD_COINS,
    FINISH_COINS,
    FINISH_XP,
    SIGN_UP_COINS,
    WIN_COINS,
    WIN_XP,
)
from service.store.pool import Pool
from service.store.postgres import postgres_ports
from service.usecases.money import Money
from tests.deals import seeds_where, ties_when_lowest_played
from tests.e2e.api_client import Api, play_online_to_the_end
from tests.e2e.test_coins import coins, member, wallets_add_up
from tests.e2e.test_coins import player_id as player_id_of
from tests.e2e.test_reward_cap import Clock
from tests.e2e.test_turn_clock import FakeClock, drain

STAKE = 100


async def buy_in_game(anon: Api, seats: int = 2) -> tuple[dict[int, Api], str, str]:
    """`seats` people with accounts at a buy-in table, full, so its first game is dealt."""
    people = {n: await member(anon, f"P{n}") for n in range(1, seats + 1)}
    table = await people[1].create_table(seats=seats, stake=STAKE)
    for n in range(2, seats + 1):
        joined = await people[n].ok_table_action(table["table_id"], "seats")
    return people, table["table_id"], joined["game"]["game_id"]


def earned(won: bool) -> tuple[int, int]:
    return FINISH_COINS + (WIN_COINS if won else 0), FINISH_XP + (WIN_XP if won else 0)


async def test_a_won_game_says_what_the_pot_paid_and_what_each_person_earned(
    anon: Api, pool: Pool
) -> None:
    people, _, gid = await buy_in_game(anon)
    running = await people[1].game(gid)
    assert running["pot"] is None and running["reward"] is None  # nothing before the end
    last = await play_online_to_the_end(people, gid)
    winners = last["result"]["winners"]
    pot = 2 * STAKE
    for seat, api in people.items():
        view = await api.game(gid)
        won = seat in winners
        share = pot // len(winners) + (1 if won and winners.index(seat) < pot % len(winners) else 0)
        assert view["pot"] == {
            "coins": pot,
            "reason": "won",
            "seats": [
                {"seat": s, "buy_in": STAKE, "paid": share if s in winners else 0} for s in (1, 2)
            ],
        }
        coins_earned, xp = earned(won)
        profile = (await api.client.get("/me", headers=api.headers)).json()
        assert view["reward"] == {
            "status": "delivered",
            "xp": xp,
            "coins_earned": coins_earned,
            "coins": coins_earned,
            "capped": False,
            "daily_cap": DAILY_REWARD_COINS,
            "badges": profile["badges"],  # their first game: every badge they have is its
        }
        names = [b["name"] for b in view["reward"]["badges"]]
        assert names[: 2 if won else 1] == (["first_game", "first_win"] if won else ["first_game"])
        assert all(b["description"] == BADGES[b["name"]] for b in view["reward"]["badges"])
        # What the view says is what the wallet holds.
        assert await coins(api) == (SIGN_UP_COINS - STAKE + (share if won else 0) + coins_earned, 0)
    # The move that ended the game answered the same (that move was someone's: their view).
    mover = last["you"]
    again = await people[mover].game(gid)
    assert last["pot"] == again["pot"] and last["reward"] == again["reward"]
    await wallets_add_up(pool, [await player_id_of(a) for a in people.values()])


@pytest.fixture
async def tied(database_url: str) -> AsyncIterator[Api]:
    """An app whose 2-seat deals end in a tie when both people play their lowest bee."""
    app = create_app(database_url, server_seeds=seeds_where(2, ties_when_lowest_played))
    async with AsyncTestClient(app=app) as client:
        yield Api(client)


async def test_a_shared_win_splits_the_pot_and_both_are_paid_as_winners(tied: Api) -> None:
    people, _, gid = await buy_in_game(tied)
    await play_online_to_the_end(people, gid)
    for api in people.values():
        view = await api.game(gid)
        assert view["result"]["winners"] == [1, 2]
        assert view["pot"]["reason"] == "won"
        assert [(s["seat"], s["paid"]) for s in view["pot"]["seats"]] == [(1, STAKE), (2, STAKE)]
        assert view["reward"]["coins"] == FINISH_COINS + WIN_COINS
        assert view["reward"]["xp"] == FINISH_XP + WIN_XP
        assert "first_win" in {b["name"] for b in view["reward"]["badges"]}


async def test_the_last_person_standing_takes_the_pot_and_the_leaver_earns_nothing(
    anon: Api,
) -> None:
    people, tid, gid = await buy_in_game(anon, seats=3)
    await people[2].ok_table_action(tid, "leave")
    await people[3].ok_table_action(tid, "leave")
    view = await people[1].game(gid)
    assert view["result"]["reason"] == "last_person_standing"
    assert view["pot"]["seats"] == [
        {"seat": 1, "buy_in": STAKE, "paid": 3 * STAKE},
        {"seat": 2, "buy_in": STAKE, "paid": 0},  # a leaver's buy-in stays in the pot
        {"seat": 3, "buy_in": STAKE, "paid": 0},
    ]
    assert view["reward"]["coins"] == FINISH_COINS + WIN_COINS
    # A leaver opening the game sees the pot, and no reward: leaving earns nothing.
    left = await people[2].game(gid)
    assert left["pot"] == view["pot"] and left["reward"] is None


async def test_a_spectator_and_another_seat_never_learn_a_persons_reward(anon: Api) -> None:
    people, _, gid = await buy_in_game(anon)
    await play_online_to_the_end(people, gid)
    views = {seat: await api.game(gid) for seat, api in people.items()}
    stranger = await member(anon, "Sam")
    watched = await stranger.game(gid)
    guest = await (await anon.guest("Gus")).game(gid)
    for spectator in (watched, guest):
        assert spectator["you"] is None and spectator["reward"] is None
        assert spectator["pot"] == views[1]["pot"]  # the pot is public: it names no wallet
    assert "player_id" not in str(views[1]["pot"])
    # Each seat gets its own reward, never the other's (the winner's and the loser's differ).
    winners = views[1]["result"]["winners"]
    for seat, view in views.items():
        assert view["reward"]["xp"] == earned(seat in winners)[1]
    # A guest at a free table finishes with no reward: rewards are for accounts.
    ada, bob = await anon.guest("Ada"), await anon.guest("Bob")
    table = await ada.create_table(seats=2)
    free = (await bob.ok_table_action(table["table_id"], "seats"))["game"]["game_id"]
    end = await play_online_to_the_end({1: ada, 2: bob}, free)
    assert end["pot"] is None and end["reward"] is None
    assert (await ada.game(free))["reward"] is None


async def test_a_solo_game_pays_nothing(anon: Api) -> None:
    ada = await member(anon, "Ada")
    table = await ada.solo_table(players=2)
    view = await ada.play_to_the_end(table["game"]["game_id"])
    assert view["pot"] is None and view["reward"] is None


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def timed(database_url: str, clock: FakeClock) -> AsyncIterator[Api]:
    """An app on an injected clock whose timers (and outbox relay) fire only when told."""
    app = create_app(database_url, clock=clock, run_clock=False, rate_limit_per_second=0)
    async with AsyncTestClient(app=app) as client:
        yield Api(client)


@pytest.fixture
def second(pool: Pool, clock: FakeClock) -> Any:
    """Another instance of the service on the same database and clock: it fires the timers
    and relays the outbox as each instance's worker does."""
    return bootstrap(postgres_ports(pool), clock=clock)


async def test_an_abandoned_game_gives_every_buy_in_back_and_no_reward(
    timed: Api, clock: FakeClock, second: Any, pool: Pool
) -> None:
    people, _, gid = await buy_in_game(timed)
    for _ in range(3):  # 3 turns in a row with nobody picking
        view = await people[1].game(gid)
        clock.now = max(clock.now, datetime.fromisoformat(view["deadline"]))
        await drain(second.turn_clock)
    for api in people.values():
        view = await api.game(gid)
        assert view["result"]["reason"] == "abandoned"
        assert view["pot"] == {
            "coins": 2 * STAKE,
            "reason": "refund",
            "seats": [{"seat": s, "buy_in": STAKE, "paid": STAKE} for s in (1, 2)],
        }
        assert view["reward"] is None  # an abandoned game earns nothing
        assert await coins(api) == (SIGN_UP_COINS, 0)  # the buy-in is back
    await wallets_add_up(pool, [await player_id_of(a) for a in people.values()])


async def test_a_reward_on_its_way_is_pending_until_delivered(
    timed: Api, second: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request that ends a game delivers its transfers itself; one cut short (a crash, the
    database away) stays in the outbox for the relay. Meanwhile the view says `pending`, with
    no coins and no badges (the delivery decides them), and never that nothing was earned."""
    people, _, gid = await buy_in_game(timed)
    original: Callable[..., Awaitable[None]] = Money.deliver

    async def cut_short(self: Money, transfers: Any) -> None:
        return None

    monkeypatch.setattr(Money, "deliver", cut_short)
    last = await play_online_to_the_end(people, gid)
    winners = last["result"]["winners"]
    for seat, api in people.items():
        view = await api.game(gid)
        coins_earned, xp = earned(seat in winners)
        assert view["reward"] == {
            "status": "pending",
            "xp": xp,
            "coins_earned": coins_earned,
            "coins": None,
            "capped": None,
            "daily_cap": DAILY_REWARD_COINS,
            "badges": None,
        }
        assert view["pot"]["reason"] == "won"  # the pot is the table's: settled already
    monkeypatch.setattr(Money, "deliver", original)
    # The relay (every instance runs it) delivers what was left: the pot shares and rewards.
    assert await second.money.relay_due(after=timedelta(0)) >= len(winners) + 2
    for seat, api in people.items():
        view = await api.game(gid)
        assert view["reward"]["status"] == "delivered"
        assert view["reward"]["coins"] == earned(seat in winners)[0]
        assert "first_game" in {b["name"] for b in view["reward"]["badges"]}


@pytest.fixture
async def one_day(database_url: str) -> AsyncIterator[Api]:
    app = create_app(database_url, clock=Clock(), run_clock=False, rate_limit_per_second=0)
    async with AsyncTestClient(app=app) as client:
        yield Api(client)


async def test_the_view_says_when_the_days_reward_cap_was_reached(one_day: Api) -> None:
    """The same two accounts play each other all day: the reward that crosses the daily cap
    is cut (`capped`, `coins` < `coins_earned`), and after it each game grants 0 coins,
    capped, while its XP still counts."""
    one, two = await member(one_day, "Fay"), await member(one_day, "Gil")
    table = await one.create_table(seats=2, turn_seconds=600, choice_seconds=600)
    gid = (await two.ok_table_action(table["table_id"], "seats"))["game"]["game_id"]
    people = {1: one, 2: two}
    granted = {1: 0, 2: 0}
    seen_zero = False
    for _ in range(1 + DAILY_REWARD_COINS // FINISH_COINS):
        await play_online_to_the_end(people, gid)
        for seat, api in people.items():
            reward = (await api.game(gid))["reward"]
            assert reward["status"] == "delivered"
            left = DAILY_REWARD_COINS - granted[seat]
            assert reward["coins"] == min(reward["coins_earned"], left)
            assert reward["capped"] == (reward["coins"] < reward["coins_earned"])
            assert reward["xp"] == FINISH_XP + (WIN_XP if reward["coins_earned"] > 10 else 0)
            seen_zero |= reward["coins"] == 0 and reward["capped"]
            granted[seat] += reward["coins"]
        if seen_zero:
            break
        gid = (await one.ok_table_action(table["table_id"], "games"))["games"][-1]
    assert seen_zero, granted  # someone played on past the cap and was told so
    assert max(granted.values()) == DAILY_REWARD_COINS
    for seat, api in people.items():
        assert (await coins(api))[0] == SIGN_UP_COINS + granted[seat]
