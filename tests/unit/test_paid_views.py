"""What an ended game paid, as views (service.domain.views `pot_view`, `reward_view`): the pot
seat by seat from the table's `pot_formed` and `pot_settled`, and one person's reward from the
outbox, their record and their wallet, as pure functions. The e2e tests
(tests/e2e/test_game_paid.py) hold them to what the service really pays."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from service.domain.ledger import (
    BADGES,
    DAILY_REWARD_COINS,
    CoinsGranted,
    GameRecord,
    PotPaid,
    WalletEventUnion,
    WalletState,
    capped_reward,
    evolve_wallet,
    reward,
    split_pot,
)
from service.domain.rules.engine import GameState
from service.domain.rules.events import SeatInfo
from service.domain.rules.simulate import play_game, random_policy
from service.domain.table_events import PotFormed, PotSettled, Stake
from service.domain.transfers import GrantReward, decide_delivery
from service.domain.views import RewardView, pot_view, reward_view


def _ended(players: int, seed: int = 1) -> GameState:
    rng = random.Random(seed)
    seats = tuple(
        SeatInfo(seat=n + 1, name=f"P{n + 1}", kind="person", player_id=f"p{n + 1}")
        for n in range(players)
    )
    state, _ = play_game(seats, [random_policy(rng)] * players, rng, lambda s, _: 1)
    return state


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 8), st.integers(0, 2**32 - 1), st.integers(1, 999))
def test_the_pot_is_shown_seat_by_seat_and_adds_up(players: int, seed: int, stake: int) -> None:
    state = _ended(players, seed)
    stakes = tuple(Stake(player_id=f"p{n}", amount=stake) for n in range(1, players + 1))
    winners = [f"p{n}" for n in state.winners]
    payouts = split_pot(stake * players, winners)
    settled = PotSettled(
        game_id="g",
        payouts=tuple(Stake(player_id=p, amount=a) for p, a in payouts),
        reason="won",
    )
    view = pot_view(state, PotFormed(game_id="g", stakes=stakes), settled)
    assert view.coins == stake * players == sum(s.paid for s in view.seats)
    assert [s.seat for s in view.seats] == list(range(1, players + 1))
    assert all(s.buy_in == stake for s in view.seats)
    assert {s.seat for s in view.seats if s.paid} == set(state.winners)


def test_a_refund_gives_every_buy_in_back_and_names_no_wallet() -> None:
    state = _ended(3)
    stakes = tuple(Stake(player_id=f"p{n}", amount=50) for n in (1, 2, 3))
    view = pot_view(
        state,
        PotFormed(game_id="g", stakes=stakes),
        PotSettled(game_id="g", payouts=stakes, reason="refund"),
    )
    assert view.reason == "refund"
    assert [(s.seat, s.buy_in, s.paid) for s in view.seats] == [(n, 50, 50) for n in (1, 2, 3)]
    assert "p1" not in repr(view)  # seats, never player ids


def _record(game_id: str, won: bool, stings: int = 5, biggest_take: int = 0) -> GameRecord:
    return GameRecord(
        game_id=game_id, stings=stings, won=won, biggest_take=biggest_take, xp=reward(won)[1]
    )


def _grant(game_id: str, won: bool, day: str = "2030-01-01") -> GrantReward:
    return GrantReward(
        player_id="p1", table_id="t", game_id=game_id, won=won, stings=5, biggest_take=0, day=day
    )


def _delivered(grants: list[GrantReward]) -> tuple[list[GameRecord], list[WalletEventUnion]]:
    """The record and the wallet after delivering `grants` in order, as `Money._deliver` does."""
    wallet, events = WalletState(), []
    for grant in grants:
        for event in decide_delivery(wallet, grant):
            wallet = evolve_wallet(wallet, event)
            events.append(event)
    return [grant.record for grant in grants], events


def test_a_delivered_reward_reads_from_the_record_and_the_wallet() -> None:
    records, wallet = _delivered([_grant("g1", won=True)])
    view = reward_view("g1", None, records, wallet)
    assert view == RewardView(
        status="delivered",
        xp=reward(True)[1],
        coins_earned=reward(True)[0],
        coins=reward(True)[0],
        capped=False,
        daily_cap=DAILY_REWARD_COINS,
        badges=view.badges if view else None,
    )
    assert view is not None and [b.name for b in view.badges or ()] == ["first_game", "first_win"]
    assert all(b.description == BADGES[b.name] for b in view.badges or ())


def test_a_later_game_unlocks_only_what_it_earned() -> None:
    records, wallet = _delivered([_grant("g1", won=True), _grant("g2", won=False)])
    assert (view := reward_view("g2", None, records, wallet)) is not None
    assert view.badges == ()  # first_game was g1's
    records[1] = _record("g2", won=True, stings=0)
    assert (swept := reward_view("g2", None, records, wallet)) is not None
    assert [b.name for b in swept.badges or ()] == ["clean_sweep"]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=12))
def test_the_cap_is_reported_exactly_when_it_cut_the_coins(wins: list[bool]) -> None:
    grants = [_grant(f"g{n}", won) for n, won in enumerate(wins)]
    records, wallet = _delivered(grants)
    before = WalletState()
    total = 0
    for grant in grants:
        view = reward_view(grant.game_id, None, records, wallet)
        assert view is not None and view.status == "delivered"
        expected = capped_reward(before, reward(grant.won)[0], grant.day)
        assert view.coins == expected and view.capped == (expected < view.coins_earned)
        for event in decide_delivery(before, grant):
            before = evolve_wallet(before, event)
        total += view.coins
    assert total == min(DAILY_REWARD_COINS, sum(reward(w)[0] for w in wins))


def test_a_reward_in_the_outbox_is_pending_and_one_delivered_is_not() -> None:
    owed = _grant("g1", won=False)
    pending = reward_view("g1", owed, [], [])
    assert pending == RewardView(
        status="pending",
        xp=reward(False)[1],
        coins_earned=reward(False)[0],
        coins=None,
        capped=None,
        daily_cap=DAILY_REWARD_COINS,
        badges=None,
    )
    # Delivered, its outbox row not deleted yet (the delete follows the wallet's append).
    records, wallet = _delivered([owed])
    assert (done := reward_view("g1", owed, records, wallet)) is not None
    assert done.status == "delivered"
    # Neither on the record nor in the outbox: the game earned nothing. A pot share in the
    # wallet is not a reward.
    assert reward_view("g1", None, [], [PotPaid(game_id="g1", amount=200, reason="won")]) is None
    assert reward_view("g1", None, [_record("g0", won=True)], []) is None
    # On the record with no coins for it (the day's cap was used up): 0 coins, capped.
    capped = reward_view(
        "g1",
        None,
        [_record("g1", won=False)],
        [CoinsGranted(amount=10, reason="game_reward", game_id="g0", day="2030-01-01")],
    )
    assert capped is not None and (capped.coins, capped.capped) == (0, True)
