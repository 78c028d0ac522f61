"""Buy-ins across shards (seed §9 "Buy-in"; docs/scaling.md): the table's side of a hold (take
it or give it back), the transfers it owes wallets, and how each is delivered, as pure rules."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from service.domain.ledger import (
    DAILY_REWARD_COINS,
    CoinsGranted,
    PotPaid,
    StakeCommitted,
    StakeHeld,
    StakeReleased,
    WalletState,
    evolve_wallet,
)
from service.domain.ratings import Placing
from service.domain.rules.events import SeatInfo
from service.domain.table_events import (
    BuyInHeld,
    BuyInReturned,
    GameOpened,
    PotFormed,
    SeatTaken,
    Stake,
    TableOpened,
)
from service.domain.tables import TableState, decide_buy_in, decide_return_buy_in, fold_table
from service.domain.transfers import (
    CommitStake,
    GrantReward,
    PayPot,
    RateGame,
    ReleaseStake,
    TransferUnion,
    decide_delivery,
    decode_transfer,
    encode_transfer,
    in_flight,
)


def staked_table(stake: int = 100) -> TableState:
    host = SeatInfo(seat=1, name="Ann", kind="person", player_id="ann")
    opened = TableOpened(
        table_id="t", mode="online", host="ann", seats=(host,), capacity=3, stake=stake
    )
    return fold_table([opened, SeatTaken(player_id="ben", name="Ben", kind="person")])


def test_rule_a_buy_in_held_by_the_wallet_counts_towards_the_pot_of_the_first_game() -> None:
    table = staked_table()
    events = decide_buy_in(table, "ben", "h1", 100)
    assert events == [BuyInHeld(player_id="ben", hold_id="h1", amount=100)]
    after = fold_table(events, table)
    assert after.buy_in_of("ben") is not None
    assert after.buy_in_of("ben").hold_id == "h1"  # type: ignore[union-attr]


def test_rule_a_hold_the_table_cannot_take_goes_back() -> None:
    table = staked_table()
    not_seated = decide_buy_in(table, "cy", "h2", 100)
    wrong_price = decide_buy_in(table, "ben", "h3", 50)
    twice = decide_buy_in(
        fold_table(decide_buy_in(table, "ben", "h1", 100), table), "ben", "h4", 100
    )
    dealt = fold_table([GameOpened(game_id="g", number=1)], table)  # only the first game pays
    after_the_deal = decide_buy_in(dealt, "ben", "h5", 100)
    for events, hold in (
        (not_seated, "h2"),
        (wrong_price, "h3"),
        (twice, "h4"),
        (after_the_deal, "h5"),
    ):
        assert len(events) == 1 and isinstance(events[0], BuyInReturned), events
        assert events[0].hold_id == hold and events[0].reason == "not_taken"


def test_rule_leaving_before_the_first_deal_gives_the_stake_back() -> None:
    table = fold_table(decide_buy_in(staked_table(), "ben", "h1", 100), staked_table())
    returned = decide_return_buy_in(table, "ben")
    assert returned == [BuyInReturned(player_id="ben", hold_id="h1", amount=100, reason="left")]
    assert fold_table(returned, table).buy_ins == ()
    assert decide_return_buy_in(table, "ann") == []  # Ann has no buy-in recorded here


def test_rule_the_pot_takes_the_buy_ins_and_they_leave_the_table_s_holds() -> None:
    table = fold_table(decide_buy_in(staked_table(), "ben", "h1", 100), staked_table())
    potted = fold_table(
        [PotFormed(game_id="g", stakes=(Stake(player_id="ben", amount=100),))], table
    )
    assert potted.buy_ins == () and sum(s.amount for s in potted.pot) == 100


def held(amount: int = 100) -> WalletState:
    state = evolve_wallet(WalletState(), CoinsGranted(amount=1000, reason="sign_up"))
    return evolve_wallet(state, StakeHeld(table_id="t", amount=amount, hold_id="h1"))


def test_each_transfer_becomes_its_wallet_event() -> None:
    wallet = held()
    release = ReleaseStake(player_id="ben", table_id="t", hold_id="h1", amount=100)
    commit = CommitStake(player_id="ben", table_id="t", hold_id="h1", game_id="g", amount=100)
    pay = PayPot(player_id="ben", table_id="t", game_id="g", amount=200, reason="won")
    assert decide_delivery(wallet, release) == [
        StakeReleased(table_id="t", amount=100, hold_id="h1")
    ]
    assert decide_delivery(wallet, commit) == [
        StakeCommitted(table_id="t", game_id="g", amount=100, hold_id="h1")
    ]
    assert decide_delivery(wallet, pay) == [PotPaid(game_id="g", amount=200, reason="won")]
    # A stake the wallet does not hold is never moved (a hold's fate is decided once).
    assert decide_delivery(WalletState(), release) == []
    assert decide_delivery(WalletState(), commit) == []


def test_rule_a_reward_delivered_late_counts_against_the_day_the_game_ended() -> None:
    wallet = evolve_wallet(
        WalletState(),
        CoinsGranted(
            amount=DAILY_REWARD_COINS - 10, reason="game_reward", game_id="g0", day="2026-12-01"
        ),
    )
    grant = GrantReward(
        player_id="ben",
        table_id="t",
        game_id="g",
        won=True,
        stings=3,
        biggest_take=3,
        day="2026-12-01",
    )
    assert decide_delivery(wallet, grant) == [
        CoinsGranted(amount=10, reason="game_reward", game_id="g", day="2026-12-01")
    ]
    next_day = msgspec_replace(grant, day="2026-12-02")
    assert decide_delivery(wallet, next_day)[0].amount == 30
    assert grant.record.won and grant.record.xp == 100


def msgspec_replace(transfer: GrantReward, **changes: str) -> GrantReward:
    import msgspec

    return msgspec.structs.replace(transfer, **changes)


def test_every_transfer_has_one_delivery_id() -> None:
    ids = {
        ReleaseStake(player_id="p", table_id="t", hold_id="h", amount=1).transfer_id,
        CommitStake(player_id="p", table_id="t", hold_id="h", game_id="g", amount=1).transfer_id,
        PayPot(player_id="p", table_id="t", game_id="g", amount=1, reason="won").transfer_id,
        GrantReward(
            player_id="p", table_id="t", game_id="g", won=False, stings=0, biggest_take=0, day="d"
        ).transfer_id,
    }
    assert len(ids) == 4


amounts = st.integers(1, 1000)
transfers = st.one_of(
    st.builds(
        ReleaseStake,
        player_id=st.just("p"),
        table_id=st.just("t"),
        hold_id=st.uuids().map(str),
        amount=amounts,
    ),
    st.builds(
        CommitStake,
        player_id=st.just("p"),
        table_id=st.just("t"),
        hold_id=st.uuids().map(str),
        game_id=st.just("g"),
        amount=amounts,
    ),
    st.builds(
        PayPot,
        player_id=st.just("p"),
        table_id=st.just("t"),
        game_id=st.just("g"),
        amount=amounts,
        reason=st.sampled_from(["won", "refund"]),
    ),
)


@given(st.lists(transfers, max_size=12))
def test_coins_in_flight_are_the_committed_stakes_and_the_payouts(
    batch: list[TransferUnion],
) -> None:
    flight = in_flight(batch)
    assert flight.committed == sum(t.amount for t in batch if isinstance(t, CommitStake))
    assert flight.paid == sum(t.amount for t in batch if isinstance(t, PayPot))
    for transfer in batch:  # and each survives the outbox's JSON
        assert decode_transfer(encode_transfer(transfer)) == transfer


def test_rule_a_rated_games_change_is_a_transfer_that_moves_no_coins() -> None:
    field = (Placing(player_id="ann", place=1), Placing(player_id="ben", place=2, version=3))
    rating = RateGame(player_id="ann", table_id="t", game_id="g", field=field)
    assert rating.transfer_id == "rating:g:ann"
    assert decode_transfer(encode_transfer(rating)) == rating
    assert decide_delivery(WalletState(balance=5), rating) == []
    assert in_flight([rating]) == in_flight([])
