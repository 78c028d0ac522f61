"""The daily reward cap and per-table holds in the wallet fold (service/domain/ledger.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from service.domain.ledger import (
    DAILY_REWARD_COINS,
    CoinsGranted,
    StakeCommitted,
    StakeHeld,
    StakeReleased,
    WalletState,
    capped_reward,
    evolve_wallet,
)


@given(
    st.lists(st.tuples(st.sampled_from(["d1", "d2", "d3"]), st.sampled_from([10, 30])), max_size=40)
)
def test_rewards_granted_under_the_cap_never_pass_it_in_a_day(games: list[tuple[str, int]]) -> None:
    wallet = WalletState()
    per_day: dict[str, int] = {}
    for day, coins in sorted(games):  # days come in order
        granted = capped_reward(wallet, coins, day)
        assert 0 <= granted <= coins
        if granted:
            wallet = evolve_wallet(
                wallet, CoinsGranted(amount=granted, reason="game_reward", day=day)
            )
        per_day[day] = per_day.get(day, 0) + granted
    assert all(total <= DAILY_REWARD_COINS for total in per_day.values())
    for day, total in per_day.items():  # the cap is reached, not undershot, when games suffice
        if sum(c for d, c in games if d == day) >= DAILY_REWARD_COINS:
            assert total == DAILY_REWARD_COINS


def test_a_new_day_starts_a_new_allowance() -> None:
    wallet = evolve_wallet(
        WalletState(), CoinsGranted(amount=DAILY_REWARD_COINS, reason="game_reward", day="d1")
    )
    assert capped_reward(wallet, 30, "d1") == 0
    assert capped_reward(wallet, 30, "d2") == 30


def test_holds_are_kept_per_table() -> None:
    wallet = evolve_wallet(WalletState(), CoinsGranted(amount=1000, reason="sign_up"))
    for event in (
        StakeHeld(table_id="t1", amount=100),
        StakeHeld(table_id="t2", amount=50),
        StakeCommitted(table_id="t1", game_id="g", amount=100),
    ):
        wallet = evolve_wallet(wallet, event)
    assert (wallet.held, wallet.held_for("t1"), wallet.held_for("t2")) == (50, 0, 50)
    wallet = evolve_wallet(wallet, StakeReleased(table_id="t2", amount=50))
    assert wallet.holds == () and wallet.held == 0 and wallet.balance == 900
