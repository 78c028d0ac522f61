"""The money rules (seed §9) as pure functions: holds, pots, payouts, rewards, badges."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.domain.ledger import (
    BIG_TAKE_STINGS,
    SIGN_UP_COINS,
    CoinsGranted,
    GameRecord,
    InsufficientCoins,
    PlayerStats,
    PotPaid,
    StakeCommitted,
    StakeHeld,
    StakeReleased,
    WalletEventUnion,
    WalletState,
    decide_hold,
    decode_wallet_event,
    encode_wallet_event,
    evolve_wallet,
    record_game,
    reward,
    split_pot,
)


def wallet(*events: WalletEventUnion) -> WalletState:
    state = WalletState()
    for event in events:
        state = evolve_wallet(state, event)
    return state


def test_rule_a_buy_in_holds_the_stake_and_is_refused_when_the_balance_is_short() -> None:
    rich = wallet(CoinsGranted(amount=SIGN_UP_COINS, reason="sign_up"))
    assert decide_hold(rich, "t", 100, "h1") == [StakeHeld(table_id="t", amount=100, hold_id="h1")]
    held = evolve_wallet(rich, StakeHeld(table_id="t", amount=100))
    assert (held.balance, held.held) == (SIGN_UP_COINS - 100, 100)
    poor = wallet(CoinsGranted(amount=50, reason="sign_up"))
    with pytest.raises(InsufficientCoins):
        decide_hold(poor, "t", 100, "h2")
    assert decide_hold(poor, "t", 0, "h3") == []


def test_rule_leaving_before_the_start_returns_the_stake_and_the_start_puts_it_in_the_pot() -> None:
    held = wallet(CoinsGranted(amount=500, reason="sign_up"), StakeHeld(table_id="t", amount=100))
    back = evolve_wallet(held, StakeReleased(table_id="t", amount=100))
    assert (back.balance, back.held) == (500, 0)
    in_pot = evolve_wallet(held, StakeCommitted(table_id="t", game_id="g", amount=100))
    assert (in_pot.balance, in_pot.held) == (400, 0)


def test_rule_the_fewest_stings_take_the_pot_and_ties_split_it() -> None:
    assert split_pot(400, ["a"]) == [("a", 400)]
    assert split_pot(400, ["a", "b"]) == [("a", 200), ("b", 200)]


def test_rule_indivisible_coins_go_one_each_to_the_first_winners_in_seat_order() -> None:
    assert split_pot(100, ["a", "b", "c"]) == [("a", 34), ("b", 33), ("c", 33)]
    assert split_pot(101, ["a", "b", "c"]) == [("a", 34), ("b", 34), ("c", 33)]


@given(pot=st.integers(0, 10_000), winners=st.integers(0, 8))
def test_a_split_never_loses_or_makes_a_coin(pot: int, winners: int) -> None:
    names = [f"p{i}" for i in range(winners)]
    shares = split_pot(pot, names)
    if winners and pot:
        assert sum(a for _, a in shares) == pot
        assert max(a for _, a in shares) - min(a for _, a in shares) <= 1
    else:
        assert shares == []


def test_rule_finishing_pays_coins_and_xp_and_winning_pays_more() -> None:
    coins, xp = reward(won=False)
    win_coins, win_xp = reward(won=True)
    assert coins > 0 and xp > 0 and win_coins > coins and win_xp > xp


def test_badges_are_earned_once_from_recorded_games() -> None:
    stats = PlayerStats()
    stats = record_game(stats, GameRecord(game_id="1", stings=9, won=False, biggest_take=4, xp=50))
    assert stats.badges == ("first_game",) and stats.games_played == 1 and stats.level == 1
    stats = record_game(stats, GameRecord(game_id="2", stings=0, won=True, biggest_take=0, xp=100))
    assert stats.badges == ("first_game", "first_win", "clean_sweep")
    stats = record_game(
        stats,
        GameRecord(game_id="3", stings=30, won=True, biggest_take=BIG_TAKE_STINGS, xp=100),
    )
    assert "big_take_win" in stats.badges and stats.badges.count("first_win") == 1
    for n in range(4, 11):
        stats = record_game(
            stats, GameRecord(game_id=str(n), stings=5, won=False, biggest_take=1, xp=50)
        )
    assert "ten_games" in stats.badges and stats.games_won == 2


def test_wallet_events_round_trip() -> None:
    for event in [
        CoinsGranted(amount=5, reason="game_reward", game_id="g"),
        StakeHeld(table_id="t", amount=1),
        StakeReleased(table_id="t", amount=1),
        StakeCommitted(table_id="t", game_id="g", amount=1),
        PotPaid(game_id="g", amount=3, reason="refund"),
    ]:
        assert decode_wallet_event(encode_wallet_event(event)) == event
